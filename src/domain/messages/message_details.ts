// What a customer did to a message beyond its content, stored as JSON in
// `messages.details`: reply context, forward flags, the ad that brought
// them, edits and deletion.
import { fromJson } from "../../db/json.ts";

/** A click-to-WhatsApp ad or post the customer came from (Meta's `referral`, camelCased). */
export interface Referral {
  sourceUrl: string | null;
  sourceId: string | null;
  sourceType: string | null;
  headline: string | null;
  body: string | null;
  mediaType: string | null;
  ctwaClid: string | null;
}

/** One earlier version of an edited message. */
export interface MessageEdit {
  /** The content before this edit, in the stored form. */
  previous: Record<string, unknown>;
  /** The upstream id of the edit, so a redelivered edit applies once. */
  editWaMessageId: string;
  editedAt: string;
}

export interface MessageDetails {
  /** Our id of the quoted message, when we have it. */
  contextMessageId?: string;
  forwarded?: boolean;
  frequentlyForwarded?: boolean;
  referral?: Referral;
  edits?: MessageEdit[];
  deletedAt?: string;
  /** Why its media could not be copied from upstream, for good. */
  mediaError?: string;
}

export function parseDetails(text: string | null): MessageDetails {
  return text ? fromJson<MessageDetails>(text, {}) : {};
}

function str(v: unknown): string | null {
  return typeof v === "string" && v !== "" ? v : null;
}

/** Meta's `referral` object in our shape (reference §4.4), or undefined when absent. */
export function referralOf(raw: unknown): Referral | undefined {
  if (raw === null || typeof raw !== "object") return undefined;
  const r = raw as Record<string, unknown>;
  return {
    sourceUrl: str(r.source_url),
    sourceId: str(r.source_id),
    sourceType: str(r.source_type),
    headline: str(r.headline),
    body: str(r.body),
    mediaType: str(r.media_type),
    ctwaClid: str(r.ctwa_clid),
  };
}

/**
 * The fields the Message resource shows from the details and the reply
 * column; `contentView` shows an earlier content the way GET shows content.
 */
export function detailsView(
  contextWaMessageId: string | null,
  d: MessageDetails,
  contentView: (stored: unknown) => object,
) {
  return {
    context: contextWaMessageId
      ? {
        waMessageId: contextWaMessageId,
        messageId: d.contextMessageId ?? null,
      }
      : null,
    forwarded: d.forwarded ?? false,
    frequentlyForwarded: d.frequentlyForwarded ?? false,
    referral: d.referral ?? null,
    edits: (d.edits ?? []).map((e) => ({
      previousContent: contentView(e.previous),
      editedAt: e.editedAt,
    })),
    deletedAt: d.deletedAt ?? null,
    mediaError: d.mediaError ?? null,
  };
}
