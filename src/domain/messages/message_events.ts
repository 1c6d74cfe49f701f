import { fromJson } from "../../db/json.ts";
import type { MessageRow } from "./message_repo.ts";

/** Status as the API shows it: inbound rows are stored as "received" and read as "delivered". */
export function publicStatus(row: Pick<MessageRow, "status">): string {
  return row.status === "received" ? "delivered" : row.status;
}

/**
 * The Message as webhook payloads carry it: every field of the resource, with
 * text content as `{ body }` (the stored form).
 */
export function messagePayload(row: MessageRow): Record<string, unknown> {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    contactId: row.contact_id,
    phoneNumberId: row.channel_id,
    direction: row.direction,
    type: row.type,
    content: fromJson<Record<string, unknown>>(row.content, {}),
    status: publicStatus(row),
    waMessageId: row.wa_message_id,
    errorCode: row.error_code,
    errorMessage: row.error_message,
    origin: row.origin,
    sentByAi: row.sent_by_ai === 1,
    campaignId: row.campaign_id,
    clientRef: row.client_ref,
    mediaId: row.media_id,
    mediaKey: row.media_key,
    createdAt: row.created_at,
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
