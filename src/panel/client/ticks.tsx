import { t } from "./i18n.ts";
import type { Status } from "./types.ts";

const MARKS: Record<Status, string> = {
  queued: "◷",
  sent: "✓",
  delivered: "✓✓",
  read: "✓✓",
  failed: "!",
};

/** A message's delivery state: a mark with its name for assistive tech. */
export function Ticks(
  { status, error, pending }: {
    status: Status;
    error?: string | null;
    pending?: "sending" | "retrying" | undefined;
  },
) {
  const label = pending
    ? t(pending)
    : status === "failed" && error
    ? `${t("failed")}: ${error}`
    : t(status);
  return (
    <span
      class={`ticks t-${pending ?? status}`}
      role="img"
      aria-label={label}
      title={label}
      data-status={pending ?? status}
    >
      {pending ? "◷" : MARKS[status]}
    </span>
  );
}
