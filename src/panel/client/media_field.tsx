// A template's media header: an https link, or a file from the agent's
// computer uploaded to Meta through the conversation's channel
// (POST /api/v1/media) and sent by its id. An image shows from a blob URL
// of the file itself, so nothing leaves the origin to preview it.
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "./api.ts";
import { t } from "./i18n.ts";
import { ACCEPT, type Uploaded } from "./template_params.ts";

export function MediaField(
  {
    id,
    label,
    format,
    phoneNumberId,
    link,
    onLink,
    uploaded,
    onUploaded,
    problem,
  }: {
    id: string;
    label: string;
    /** image, video or document. */
    format: string;
    phoneNumberId: string;
    link: string;
    onLink(value: string): void;
    uploaded: Uploaded | undefined;
    onUploaded(file: Uploaded | undefined): void;
    /** The message of a shown validation problem. */
    problem: string | null;
  },
) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const [preview, setPreview] = useState<string | undefined>();
  const live = useRef(true);
  const picker = useRef<HTMLInputElement>(null);
  useEffect(() => () => void (live.current = false), []);
  useEffect(() => () => {
    if (preview) URL.revokeObjectURL(preview);
  }, [preview]);
  const choose = async (file: File | undefined) => {
    if (!file) return;
    setBusy(true);
    setError("");
    setPreview(undefined);
    onUploaded(undefined);
    try {
      const q = new URLSearchParams({ phoneNumberId, filename: file.name });
      const { data } = await api<{ data: Uploaded }>(
        "POST",
        `/api/v1/media?${q}`,
        { file },
      );
      if (!live.current) return;
      onUploaded({ id: data.id, fileName: data.fileName });
      if (format === "image") setPreview(URL.createObjectURL(file));
    } catch (err) {
      if (live.current) setError((err as Error).message);
    } finally {
      if (live.current) setBusy(false);
    }
  };
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        inputMode="url"
        value={link}
        disabled={uploaded !== undefined}
        aria-invalid={problem !== null}
        aria-describedby={problem ? `${id}-error` : undefined}
        onInput={(e) => onLink((e.target as HTMLInputElement).value)}
      />
      <label for={`${id}-file`}>{t("orUpload")}</label>
      <input
        id={`${id}-file`}
        ref={picker}
        type="file"
        accept={ACCEPT[format]}
        disabled={busy || !phoneNumberId}
        onChange={(e) => void choose((e.target as HTMLInputElement).files?.[0])}
      />
      {busy && <span role="status">{t("uploading")}</span>}
      {uploaded && (
        <span role="status" class="uploaded">
          {t("uploaded", { name: uploaded.fileName })}{" "}
          <button
            type="button"
            class="secondary"
            onClick={() => {
              onUploaded(undefined);
              setPreview(undefined);
              // The same file may be chosen again.
              if (picker.current) picker.current.value = "";
            }}
          >
            {t("removeFile")}
          </button>
        </span>
      )}
      {preview && (
        <img
          class="upload-preview"
          src={preview}
          alt={uploaded?.fileName ?? ""}
        />
      )}
      {error && (
        <span role="alert" class="error-text">
          {t("uploadFailed")}: {error}
        </span>
      )}
      {problem && <span id={`${id}-error`} class="error-text">{problem}</span>}
    </div>
  );
}
