// What one of Meta's status reports asks of a message, shared by the two
// ways it is applied (in a transaction, inbound_apply_service.ts; as planned
// writes, status_plan_service.ts).
import type { MessageRow } from "../messages/message_repo.ts";
import { isOutboundStatus, type OutboundStatus } from "../messages/status.ts";
import type { StatusChange } from "../messages/status_service.ts";
import { isRefreshCode } from "../templates/template_refresh_service.ts";
import type { MetaStatus } from "./meta_payload.ts";

/** A report's status as ours (`played`, of a voice message, is read); null for a value we ignore. */
export function reportedStatus(status: string): OutboundStatus | null {
  if (status === "played") return "read";
  return isOutboundStatus(status) ? status : null;
}

/**
 * The move a report makes (to `to`, decided by the rank rule), with Meta's
 * first error on a failure, and whether the message's template is read
 * again: Meta failed a template send on its template (edited or removed
 * there), at most once per template per 5 minutes.
 */
export function statusChangeOf(
  row: MessageRow,
  status: MetaStatus,
  reported: OutboundStatus,
  to: string,
  now: string,
): { change: StatusChange; refresh: boolean } {
  const error = reported === "failed" ? status.errors?.[0] : undefined;
  const change: StatusChange = {
    to,
    now,
    // Found by its upstream id, a message has it: no write to keep it.
    ...(row.wa_message_id ? {} : { waMessageId: status.id }),
    ...(reported === "failed"
      ? {
        errorCode: error ? String(error.code) : "unknown",
        errorMessage: error?.error_data?.details ?? error?.message ??
          error?.title ?? "Delivery failed",
      }
      : {}),
  };
  const refresh = Boolean(
    error && row.type === "template" && isRefreshCode(error.code),
  );
  return { change, refresh };
}
