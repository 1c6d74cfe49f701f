// Uploads a file to Meta for a send by `id` (POST /api/v1/media): the panel's
// template picker uses it for header images, videos and documents. The
// bytes are checked against the Cloud API's types and limits, read into
// memory under a process-wide budget (a flood of uploads waits for none of
// it: it is refused with 503 and Retry-After), and passed on to
// POST /{phone-number-id}/media of the channel's number. Nothing is stored
// here: Meta keeps the file 30 days under the id it answers.
import type { Clock } from "../../clock.ts";
import type { SecretBox } from "../../crypto.ts";
import type { Db } from "../../db/schema.ts";
import { addMs } from "../../db/time.ts";
import { AppError } from "../../errors.ts";
import { isUuid } from "../../ids.ts";
import type { Logger } from "../../log.ts";
import { type GraphApi, UpstreamError } from "../../upstream/graph_api.ts";
import { mediaKindOf, UPLOAD_MIME_TYPES } from "../../upstream/media_limits.ts";
import { findChannelById } from "../channels/channel_repo.ts";
import { channelAccessToken } from "../channels/channel_service.ts";

export interface UploadDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  secrets: SecretBox;
  graph: GraphApi;
}

export interface UploadInput {
  accountId: string;
  /** The channel (its id in this API) whose number uploads it. */
  phoneNumberId: string;
  /** The request's Content-Type: the file's MIME type. */
  mimeType: string | undefined;
  fileName: string | undefined;
  /** The request's Content-Length, when it gave one. */
  declaredBytes: number | undefined;
  body: ReadableStream<Uint8Array> | null;
}

export interface UploadedMedia {
  /** Meta's media id: send it as `{ "id": ... }` (a header parameter, a media message). */
  id: string;
  type: string;
  mimeType: string;
  sizeBytes: number;
  fileName: string;
  /** When Meta drops it (30 days after the upload). */
  expiresAt: string;
}

const META_KEEPS_MS = 30 * 24 * 3600_000;

/** Bytes all uploads of this process may hold in memory at once. */
export const UPLOAD_BUFFER_BYTES = 256 * 1024 * 1024;
let buffered = 0;

/** Reserves `bytes` of the budget; the release, or undefined when it is spent. */
function reserve(bytes: number): (() => void) | undefined {
  if (buffered + bytes > UPLOAD_BUFFER_BYTES) return undefined;
  buffered += bytes;
  let released = false;
  return () => {
    if (!released) buffered -= bytes;
    released = true;
  };
}

function tooLarge(type: string, max: number): AppError {
  return new AppError(
    "PAYLOAD_TOO_LARGE",
    `Cannot upload media: a ${type} may be at most ${max} bytes (Cloud API limit)`,
  );
}

/** Reads the body whole, refusing it as soon as it passes `max` bytes. */
async function readAtMost(
  body: ReadableStream<Uint8Array>,
  max: number,
  type: string,
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > max) throw tooLarge(type, max);
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
    if (size > max) await body.cancel().catch(() => {});
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

/** A file name Meta and a download can carry: no path, no control characters. */
function cleanName(name: string | undefined, type: string): string {
  const base = (name ?? "").split(/[\\/]/).pop()!
    // deno-lint-ignore no-control-regex
    .replace(/[\u0000-\u001f\u007f"]/g, "").trim().slice(0, 240);
  return base || type;
}

export async function uploadMedia(
  deps: UploadDeps,
  input: UploadInput,
): Promise<UploadedMedia> {
  const mimeType = (input.mimeType ?? "").split(";")[0]!.trim().toLowerCase();
  const kind = mediaKindOf(mimeType);
  if (!kind) {
    throw new AppError(
      "UNSUPPORTED_MEDIA_TYPE",
      `Cannot upload media: Content-Type must be the file's type, one of ${
        UPLOAD_MIME_TYPES.join(", ")
      }; got "${input.mimeType ?? "none"}"`,
    );
  }
  if (
    input.declaredBytes !== undefined && input.declaredBytes > kind.maxBytes
  ) {
    throw tooLarge(kind.type, kind.maxBytes);
  }
  const channel = isUuid(input.phoneNumberId)
    ? await findChannelById(deps.db, input.phoneNumberId)
    : undefined;
  if (!channel || channel.accountId !== input.accountId) {
    throw new AppError(
      "INVALID_CHANNEL",
      `Cannot upload media: phoneNumberId "${input.phoneNumberId}" is not a channel of this account`,
    );
  }
  const release = reserve(input.declaredBytes ?? kind.maxBytes);
  if (!release) {
    throw new AppError(
      "SERVICE_UNAVAILABLE",
      "Cannot upload media now: too many uploads in progress; try again shortly",
      { retryable: true, retryAfterMs: 2_000 },
    );
  }
  try {
    const bytes = input.body
      ? await readAtMost(input.body, kind.maxBytes, kind.type)
      : new Uint8Array();
    if (bytes.byteLength === 0) {
      throw new AppError(
        "VALIDATION_ERROR",
        "Cannot upload media: the body is empty",
      );
    }
    const fileName = cleanName(input.fileName, kind.type);
    const auth = {
      phoneNumberId: channel.upstreamPhoneNumberId,
      accessToken: await channelAccessToken(deps, channel.id),
    };
    let id: string;
    try {
      ({ id } = await deps.graph.uploadMedia(auth, {
        bytes,
        mimeType,
        fileName,
      }));
    } catch (err) {
      if (err instanceof UpstreamError && err.category === "media_rejected") {
        throw new AppError(
          "VALIDATION_ERROR",
          `Cannot upload media: Meta refused it: ${err.message}`,
          { details: err.details },
        );
      }
      throw err;
    }
    deps.log.info("Media uploaded to Meta", {
      accountId: input.accountId,
      channelId: channel.id,
      type: kind.type,
      sizeBytes: bytes.byteLength,
    });
    return {
      id,
      type: kind.type,
      mimeType,
      sizeBytes: bytes.byteLength,
      fileName,
      expiresAt: addMs(deps.clock.now(), META_KEEPS_MS).toISOString(),
    };
  } finally {
    release();
  }
}
