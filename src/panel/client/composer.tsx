// The composer: a textbox labelled "Message" and a "Send" button; free text
// only while the 24-hour window is open (counted down on the server's
// clock), else the "Template" picker. The draft is kept per agent and
// conversation in IndexedDB; each send carries an Idempotency-Key.
import { useEffect, useRef, useState } from "preact/hooks";
import { draftKey, loadDraft, saveDraft } from "./drafts.ts";
import { t } from "./i18n.ts";
import { sendMessage } from "./outbox.ts";
import { changed, store } from "./store.ts";
import { TemplatePicker } from "./template_picker.tsx";
import { useWindow } from "./thread.tsx";
import type { Conversation } from "./types.ts";

export function Composer({ c }: { c: Conversation }) {
  const w = useWindow(c);
  const [text, setText] = useState("");
  const [loaded, setLoaded] = useState(false);
  const box = useRef<HTMLTextAreaElement>(null);
  // Keyed by conversation (App renders one Composer per conversation): the
  // draft of one never shows in another.
  const key = draftKey(store.boot.agent.id, c.id);
  useEffect(() => {
    let live = true;
    loadDraft(key).then((d) => {
      if (!live) return;
      setText(d);
      setLoaded(true);
    }).catch(() => setLoaded(true));
    return () => void (live = false);
  }, [key]);
  const edit = (value: string) => {
    setText(value);
    void saveDraft(key, value);
  };
  const send = async () => {
    const body = text.trim();
    if (!body || !w.open) return;
    setText("");
    await saveDraft(key, "");
    await sendMessage(c, { type: "text", text: { body } });
  };
  return (
    <form
      class="composer"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      <label for="composer-text" class="visually-hidden">{t("message")}</label>
      <textarea
        id="composer-text"
        ref={box}
        rows={2}
        value={text}
        disabled={!w.open || !loaded}
        aria-describedby="window-state"
        placeholder={w.open ? t("message") : t("windowClosed")}
        onInput={(e) => edit((e.target as HTMLTextAreaElement).value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            void send();
          }
        }}
      />
      <div class="composer-actions">
        <button
          type="button"
          class="secondary"
          onClick={() => {
            store.templateOpen = true;
            changed();
          }}
        >
          {t("template")}
        </button>
        <button
          type="submit"
          class="primary"
          disabled={!w.open || text.trim() === ""}
        >
          {t("send")}
        </button>
      </div>
      {store.templateOpen && <TemplatePicker c={c} />}
    </form>
  );
}
