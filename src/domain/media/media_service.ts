import type { Db } from "../../db/schema.ts";
import type { GroupCommit } from "../../db/group_commit.ts";
import type { Clock } from "../../clock.ts";
import { nodeCrypto, type SecretBox } from "../../crypto.ts";
import type { Logger } from "../../log.ts";
import { AppError } from "../../errors.ts";
import { addMs, toDbTime } from "../../db/time.ts";
import type { GraphApi } from "../../upstream/graph_api.ts";
import type { BlobStore } from "../../storage/blob_store.ts";
import {
  signMediaUrl,
  verifyMediaSignature,
} from "../../storage/signed_url.ts";
import { contentDisposition } from "../../storage/content_disposition.ts";
import { findChannelById } from "../channels/channel_repo.ts";
import { channelAccessToken } from "../channels/channel_service.ts";
import {
  findAccountMessage,
  sameMessageVersion,
  setMessageMedia,
  updateMessageDetails,
} from "../messages/message_repo.ts";
import { planMessageUpdated } from "../messages/message_service.ts";
import { toJson } from "../../db/json.ts";
import type { Viewer } from "../conversations/conversation.ts";
import { seesConversation } from "../conversations/conversation_service.ts";
import {
  findAccountMedia,
  findAccountMediaByKey,
  findMediaById,
  markMediaFailed,
  markMediaStored,
  type MediaRow,
} from "./media_repo.ts";
import { SIGNED_URL_TTL_SECONDS } from "./media.ts";

export interface MediaDeps {
  db: Db;
  /** The media's row, its message and the message's event commit together (runPlanned). */
  commits: Pick<GroupCommit, "runPlanned">;
  clock: Clock;
  log: Logger;
  secrets: SecretBox;
  graph: GraphApi;
  blobs: BlobStore;
  config: {
    mediaMaxBytes: number;
    secretKey: string | undefined;
    publicBaseUrl: string | undefined;
  };
}

export interface MediaDescriptor {
  id: string;
  url: string;
  expiresIn: number;
  mimeType: string;
  fileName: string;
}

function toBase64(hex: string): string {
  const bytes = hex.match(/../g)!.map((h) => parseInt(h, 16));
  return btoa(String.fromCharCode(...bytes));
}

/** Meta sends sha256 as hex in some payloads and base64 in others; accept either. */
function sameHash(expected: string | null, actualHex: string): boolean {
  if (!expected) return true;
  const e = expected.trim();
  return e.toLowerCase() === actualHex || e === toBase64(actualHex) ||
    e.replace(/=+$/, "") === toBase64(actualHex).replace(/=+$/, "");
}

/**
 * Copies an inbound media file from the upstream into our blob store and
 * links it to its message. Idempotent: a stored media is left alone. A
 * failure is thrown; once it is final (permanent, or the job's last attempt)
 * the job's final-failure hook calls failInboundMedia().
 */
export async function downloadInboundMedia(
  deps: MediaDeps,
  mediaId: string,
  attempt: { signal?: AbortSignal } = {},
): Promise<void> {
  const media = await findMediaById(deps.db, mediaId);
  if (!media || media.status === "stored" || !media.upstream_media_id) return;
  const channel = media.channel_id
    ? await findChannelById(deps.db, media.channel_id)
    : undefined;
  if (!channel) {
    return await failInboundMedia(
      deps,
      media.id,
      new Error("The channel of this media no longer exists"),
    );
  }
  const auth = {
    phoneNumberId: channel.upstreamPhoneNumberId,
    accessToken: await channelAccessToken(deps, channel.id),
  };
  const info = await deps.graph.getMediaInfo(auth, media.upstream_media_id);
  if (info.fileSize !== null && info.fileSize > deps.config.mediaMaxBytes) {
    throw new AppError(
      "VALIDATION_ERROR",
      `Media "${media.id}" is ${info.fileSize} bytes, above the ${deps.config.mediaMaxBytes} byte limit`,
    );
  }
  // Streamed from the upstream into the store chunk by chunk, never held whole;
  // a failed hash check throws before the store publishes anything.
  const hash = nodeCrypto().createHash("sha256");
  let sizeBytes = 0;
  let sha256 = "";
  const mimeType = info.mimeType || media.mime_type;
  await deps.blobs.put(media.storage_key, async (write) => {
    await deps.graph.downloadMedia(auth, info.url, {
      maxBytes: deps.config.mediaMaxBytes,
      ...(attempt.signal ? { signal: attempt.signal } : {}),
      write: async (chunk) => {
        hash.update(chunk);
        sizeBytes += chunk.byteLength;
        await write(chunk);
      },
    });
    sha256 = hash.digest("hex");
    if (!sameHash(info.sha256 ?? media.sha256, sha256)) {
      throw new AppError(
        "UPSTREAM_ERROR",
        `Media "${media.id}" failed its sha256 check: the download is corrupt`,
        { retryable: true },
      );
    }
  }, { contentType: mimeType });
  const at = deps.clock.now();
  const now = toDbTime(at);
  // One batch on libSQL, guarded on the message being as read (its event
  // shows it as these writes leave it).
  await deps.commits.runPlanned(async (db, writes) => {
    await markMediaStored(writes.db, media.id, {
      sha256,
      sizeBytes,
      mimeType,
      now,
    });
    if (!media.message_id) return () => undefined;
    const message = await findAccountMessage(
      db,
      media.account_id,
      media.message_id,
    );
    await setMessageMedia(writes.db, media.message_id, {
      mediaId: media.id,
      mediaKey: media.storage_key,
      now,
    });
    if (!message) return () => undefined;
    writes.expectRow(sameMessageVersion(message));
    await planMessageUpdated(db, writes, {
      ...message,
      mediaId: media.id,
      mediaKey: media.storage_key,
      updatedAt: now,
    }, at);
    return () => undefined;
  });
}

/**
 * Marks a media download failed for good with the error's message; its
 * message shows `mediaError` from then on (and the panel hears of it).
 */
export async function failInboundMedia(
  deps: Pick<MediaDeps, "db" | "clock" | "commits">,
  mediaId: string,
  err: unknown,
): Promise<void> {
  const error = err instanceof Error ? err.message : String(err);
  const at = deps.clock.now();
  const now = toDbTime(at);
  // One batch on libSQL, guarded on the message being as read (its
  // details are rewritten from what was read).
  await deps.commits.runPlanned(async (db, writes) => {
    await markMediaFailed(writes.db, mediaId, { error, now });
    const media = await findMediaById(db, mediaId);
    if (!media?.message_id) return () => undefined;
    const message = await findAccountMessage(
      db,
      media.account_id,
      media.message_id,
    );
    if (!message) return () => undefined;
    writes.expectRow(sameMessageVersion(message));
    const details = { ...message.details, mediaError: error };
    await updateMessageDetails(writes.db, message.id, {
      details: toJson(details),
      updatedAt: now,
    });
    await planMessageUpdated(db, writes, {
      ...message,
      details,
      updatedAt: now,
    }, at);
    return () => undefined;
  });
}

async function describe(
  deps: MediaDeps,
  media: MediaRow | undefined,
  ref: string,
): Promise<MediaDescriptor> {
  if (!media) {
    throw new AppError("MEDIA_NOT_FOUND", `Cannot find media "${ref}"`);
  }
  if (media.status !== "stored") {
    throw new AppError(
      "MEDIA_NOT_FOUND",
      media.status === "pending"
        ? `Media "${media.id}" is still downloading: retry in a few seconds`
        : `Media "${media.id}" could not be downloaded from the upstream`,
    );
  }
  const url = await deps.blobs.presignGet(media.storage_key, {
    expiresInSeconds: SIGNED_URL_TTL_SECONDS,
    fileName: media.file_name,
    contentType: media.mime_type,
  }) ?? await signOwnUrl(deps, media.id);
  return {
    id: media.id,
    url,
    expiresIn: SIGNED_URL_TTL_SECONDS,
    mimeType: media.mime_type,
    fileName: media.file_name,
  };
}

/** A URL on PUBLIC_BASE_URL (never the request's Host header, which a client chooses). */
async function signOwnUrl(deps: MediaDeps, mediaId: string): Promise<string> {
  if (!deps.config.publicBaseUrl) {
    throw new AppError(
      "SERVICE_UNAVAILABLE",
      "Cannot sign a media URL: PUBLIC_BASE_URL is not set",
    );
  }
  return await signMediaUrl(deps.config.secretKey!, {
    baseUrl: deps.config.publicBaseUrl,
    mediaId,
    expiresAt: addMs(deps.clock.now(), SIGNED_URL_TTL_SECONDS * 1000),
  });
}

/**
 * The media of the viewer's account that it may see: an `assigned` agent,
 * only the media of messages in its conversations.
 */
export async function visibleMedia(
  deps: { db: Db },
  viewer: Viewer,
  media: MediaRow | undefined,
): Promise<MediaRow | undefined> {
  if (!media || viewer.onlyAssignedTo === undefined) return media;
  const message = media.message_id
    ? await findAccountMessage(deps.db, viewer.accountId, media.message_id)
    : undefined;
  return message &&
      await seesConversation(deps, viewer, message.conversationId)
    ? media
    : undefined;
}

/** The media descriptor with a short-lived signed URL; another account's media (or one the viewer does not see) is not found. */
export async function getMediaDescriptor(
  deps: MediaDeps,
  viewer: Viewer,
  id: string,
): Promise<MediaDescriptor> {
  const media = await findAccountMedia(deps.db, viewer.accountId, id);
  return await describe(deps, await visibleMedia(deps, viewer, media), id);
}

/** Same by object-storage key; the key must begin with the caller's account id. */
export async function getMediaDescriptorByKey(
  deps: MediaDeps,
  viewer: Viewer,
  key: string,
): Promise<MediaDescriptor> {
  const media = key.startsWith(`${viewer.accountId}/`)
    ? await findAccountMediaByKey(deps.db, viewer.accountId, key)
    : undefined;
  return await describe(deps, await visibleMedia(deps, viewer, media), key);
}

/** Raster images, audio and video: shown inline; anything else is a download in a sandbox. */
export function isInlineMedia(mimeType: string): boolean {
  const type = mimeType.split(";")[0]!.trim().toLowerCase();
  return /^image\/(jpeg|png|gif|webp|avif|bmp)$/.test(type) ||
    /^(audio|video)\/[\w.+-]+$/.test(type);
}

/** An open media file with what its response headers need. */
export interface OpenedMedia {
  body: ReadableStream<Uint8Array>;
  size: number;
  mimeType: string;
  fileName: string;
  /** `inline` for isInlineMedia, else `attachment`, with the file name. */
  disposition: string;
  /** Whether to add `Content-Security-Policy: sandbox` (anything but inline media). */
  sandbox: boolean;
}

function opened(
  media: MediaRow,
  blob: { body: ReadableStream<Uint8Array>; size: number },
): OpenedMedia {
  const inline = isInlineMedia(media.mime_type);
  const attachment = contentDisposition(media.file_name);
  return {
    body: blob.body,
    size: blob.size,
    mimeType: media.mime_type,
    fileName: media.file_name,
    disposition: inline
      ? attachment.replace(/^attachment/, "inline")
      : attachment,
    sandbox: !inline,
  };
}

/**
 * The bytes of a stored media the viewer may see, from the store itself
 * (disk or S3), for the panel's same-origin media URLs; MEDIA_NOT_FOUND
 * when it is not stored or not visible. The caller must consume or cancel
 * `body`.
 */
export async function openVisibleMedia(
  deps: MediaDeps,
  viewer: Viewer,
  id: string,
): Promise<OpenedMedia> {
  const media = await visibleMedia(
    deps,
    viewer,
    await findAccountMedia(deps.db, viewer.accountId, id),
  );
  const blob = media?.status === "stored"
    ? await deps.blobs.open(media.storage_key)
    : null;
  if (!media || !blob) {
    throw new AppError("MEDIA_NOT_FOUND", `Cannot find media "${id}"`);
  }
  return opened(media, blob);
}

/** Streams the bytes behind a URL this server signed (disk store); the caller must consume or cancel `body`. */
export async function openSignedMedia(
  deps: MediaDeps,
  input: {
    mediaId: string;
    expires: string | undefined;
    signature: string | undefined;
  },
): Promise<OpenedMedia> {
  const check = await verifyMediaSignature(deps.config.secretKey!, {
    mediaId: input.mediaId,
    expires: input.expires,
    signature: input.signature,
    now: deps.clock.now(),
  });
  if (check !== "ok") {
    throw new AppError(
      "FORBIDDEN",
      check === "expired"
        ? "This media link has expired: request a new one with GET /api/v2/media/:id"
        : "This media link is not valid",
    );
  }
  const media = await findMediaById(deps.db, input.mediaId);
  const blob = media?.status === "stored"
    ? await deps.blobs.open(media.storage_key)
    : null;
  if (!media || !blob) {
    throw new AppError(
      "MEDIA_NOT_FOUND",
      `Cannot find media "${input.mediaId}"`,
    );
  }
  return opened(media, blob);
}
