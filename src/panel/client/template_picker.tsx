// The "Template" dialog: search the approved templates of the channel (and
// the global ones), fill in every parameter they need, see the message as
// it will read, and send it once every value is valid.
import { useEffect, useRef, useState } from "preact/hooks";
import { t } from "./i18n.ts";
import { sendMessage } from "./outbox.ts";
import {
  changed,
  loadTemplates,
  reportError,
  store,
  useStore,
} from "./store.ts";
import { MediaField } from "./media_field.tsx";
import {
  componentsOf,
  fieldsOf,
  keyOf,
  previewOf,
  problemOf,
  type Uploaded,
} from "./template_params.ts";
import type { Conversation, Template } from "./types.ts";

function close() {
  store.templateOpen = false;
  changed();
}

export function TemplatePicker({ c }: { c: Conversation }) {
  const s = useStore();
  const dialog = useRef<HTMLDialogElement>(null);
  const [query, setQuery] = useState("");
  const [chosen, setChosen] = useState<Template | undefined>();
  const [values, setValues] = useState(new Map<string, string>());
  const [uploads, setUploads] = useState(new Map<string, Uploaded>());
  const [tried, setTried] = useState(false);
  useEffect(() => {
    dialog.current?.showModal();
    if (!s.templates) loadTemplates().catch(reportError);
  }, []);
  const usable = (s.templates ?? []).filter((tpl) =>
    tpl.status === "approved" &&
    (tpl.phoneNumberId === null || tpl.phoneNumberId === c.phoneNumberId) &&
    `${tpl.name} ${tpl.language} ${tpl.category}`.toLowerCase()
      .includes(query.trim().toLowerCase())
  );
  const fields = chosen ? fieldsOf(chosen) : [];
  const problems = fields.map((f) =>
    problemOf(f, values.get(keyOf(f)) ?? "", uploads.get(keyOf(f)))
  );
  const valid = chosen !== undefined && problems.every((p) => p === null);
  const preview = chosen ? previewOf(chosen, values) : undefined;
  const send = async () => {
    setTried(true);
    if (!chosen || !valid) return;
    close();
    try {
      await sendMessage(c, {
        type: "template",
        template: {
          name: chosen.name,
          language: { code: chosen.language },
          ...(fields.length
            ? { components: componentsOf(fields, values, uploads) }
            : {}),
        },
      });
    } catch (err) {
      reportError(err);
    }
  };
  return (
    <dialog
      ref={dialog}
      class="dialog"
      aria-labelledby="template-title"
      onClose={close}
      onCancel={close}
    >
      <h2 id="template-title">{t("templates")}</h2>
      <label for="template-search" class="visually-hidden">
        {t("searchTemplates")}
      </label>
      <input
        id="template-search"
        type="search"
        placeholder={t("searchTemplates")}
        value={query}
        onInput={(e) => setQuery((e.target as HTMLInputElement).value)}
      />
      <fieldset class="template-list">
        <legend class="visually-hidden">{t("templates")}</legend>
        {usable.length === 0 && <p class="muted">{t("noTemplates")}</p>}
        {usable.map((tpl) => (
          <label class="template-option">
            <input
              type="radio"
              name="template"
              checked={chosen?.id === tpl.id}
              onChange={() => {
                setChosen(tpl);
                setValues(new Map());
                setUploads(new Map());
                setTried(false);
              }}
            />
            <span>{tpl.name}</span>
            <span class="muted">{tpl.language} · {tpl.category}</span>
          </label>
        ))}
      </fieldset>
      {chosen && fields.length > 0 && (
        <fieldset class="params">
          <legend>{chosen.name}</legend>
          {fields.map((f, i) => {
            const id = `param-${i}`;
            const problem = problems[i];
            const label = f.kind === "media"
              ? t("headerMedia", { format: f.name })
              : f.kind === "coupon"
              ? t("couponCode")
              : f.where.startsWith("button")
              ? t("buttonUrl", { text: f.label ?? "" })
              : f.where === "header"
              ? `${t("headerText")} {{${f.name}}}`
              : /^\d+$/.test(f.name)
              ? t("parameter", { n: f.name })
              : `{{${f.name}}}`;
            if (f.kind === "media") {
              return (
                <MediaField
                  id={id}
                  label={label}
                  format={f.name}
                  phoneNumberId={c.phoneNumberId ?? ""}
                  link={values.get(keyOf(f)) ?? ""}
                  onLink={(v) => {
                    const next = new Map(values);
                    next.set(keyOf(f), v);
                    setValues(next);
                  }}
                  uploaded={uploads.get(keyOf(f))}
                  onUploaded={(file) =>
                    setUploads((now) => {
                      const next = new Map(now);
                      if (file) next.set(keyOf(f), file);
                      else next.delete(keyOf(f));
                      return next;
                    })}
                  problem={tried && problem ? t(problem) : null}
                />
              );
            }
            return (
              <div class="field">
                <label for={id}>{label}</label>
                <input
                  id={id}
                  value={values.get(keyOf(f)) ?? ""}
                  aria-invalid={tried && problem !== null}
                  aria-describedby={tried && problem
                    ? `${id}-error`
                    : undefined}
                  onInput={(e) => {
                    const next = new Map(values);
                    next.set(keyOf(f), (e.target as HTMLInputElement).value);
                    setValues(next);
                  }}
                />
                {tried && problem && (
                  <span id={`${id}-error`} class="error-text">
                    {t(problem)}
                  </span>
                )}
              </div>
            );
          })}
        </fieldset>
      )}
      {preview && (
        <section class="preview" aria-label={t("preview")}>
          <h3>{t("preview")}</h3>
          <div class="bubble out">
            {preview.header && (
              <p class="text">
                <strong>{preview.header}</strong>
              </p>
            )}
            <p class="text">{preview.body}</p>
            {preview.footer && <p class="muted">{preview.footer}</p>}
            {preview.buttons.map((b, i) => (
              <p class="preview-button" key={i}>{b}</p>
            ))}
          </div>
        </section>
      )}
      <div class="dialog-actions">
        <button type="button" class="secondary" onClick={close}>
          {t("cancel")}
        </button>
        <button
          type="button"
          class="primary"
          disabled={!chosen}
          onClick={() => void send()}
        >
          {t("sendTemplate")}
        </button>
      </div>
      {tried && chosen && !valid && (
        <p role="alert" class="error-text">{t("required")}</p>
      )}
    </dialog>
  );
}
