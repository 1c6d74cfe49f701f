import { fromJson } from "../../db/json.ts";
import type { MessageRow } from "./message_repo.ts";
import { toMessageView } from "./message.ts";

/**
 * The Message as webhook payloads carry it: the GET shape, except that
 * content is the stored form (text as `{ body }`, as the spec shows).
 */
export function messagePayload(row: MessageRow): Record<string, unknown> {
  return {
    ...toMessageView(row),
    content: fromJson<Record<string, unknown>>(row.content, {}),
  };
}

export function statusChangedPayload(
  row: MessageRow,
  previousStatus: string,
): Record<string, unknown> {
  return {
    ...messagePayload(row),
    clientRef: row.client_ref,
    previousStatus,
    newStatus: row.status,
  };
}
