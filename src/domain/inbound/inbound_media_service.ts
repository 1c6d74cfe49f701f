import type { Executor } from "../../db/schema.ts";
import { toDbTime } from "../../db/time.ts";
import { newId } from "../../ids.ts";
import { enqueue } from "../../jobs/queue.ts";
import type { Channel } from "../channels/channel.ts";
import { mediaStorageKey } from "../media/media.ts";
import { insertMedia } from "../media/media_repo.ts";
import type { InboundContent } from "./meta_payload.ts";

/**
 * Records the media of a message received from upstream (a customer's, or
 * an echo of the business's) and queues its copy into our store, in the
 * caller's transaction.
 */
export async function queueInboundMedia(
  trx: Executor,
  channel: Channel,
  input: {
    messageId: string;
    media: NonNullable<InboundContent["media"]>;
    now: Date;
  },
): Promise<void> {
  const { media, now } = input;
  const nowIso = toDbTime(now);
  const mediaId = newId(now.getTime());
  await insertMedia(trx, {
    id: mediaId,
    account_id: channel.accountId,
    message_id: input.messageId,
    channel_id: channel.id,
    upstream_media_id: media.upstreamId,
    kind: media.kind,
    mime_type: media.mimeType,
    file_name: media.fileName,
    sha256: media.sha256,
    size_bytes: null,
    storage_key: mediaStorageKey(channel.accountId, mediaId, now),
    status: "pending",
    error: null,
    created_at: nowIso,
    updated_at: nowIso,
  });
  await enqueue(trx, { kind: "media.download", payload: { mediaId } }, now);
}
