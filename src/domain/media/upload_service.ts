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

/** Uploads one account may have in progress at once (so one cannot hold the budget). */
export const UPLOADS_PER_ACCOUNT = 2;
const inProgress = new Map<string, number>();

/** A body slower than this on average, after the grace time, is cut off. */
export const UPLOAD_MIN_RATE = { bytesPerSecond: 32 * 1024, graceMs: 10_000 };

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
    `Cannot upload media: the Cloud API takes ${type} files of at most ${max} bytes`,
  );
}

/**
 * Reads the body into a Blob, refusing it as soon as it passes `max` bytes
 * or, after the grace time, arrives slower than the minimum rate (a trickle
 * would hold its share of the budget for good); a body the client gave up
 * on is a 400, not a failure of ours.
 */
export async function readAtMost(
  body: ReadableStream<Uint8Array>,
  limits: {
    max: number;
    type: string;
    mimeType: string;
    /** The Content-Length it gave: the budget holds that much. */
    declared?: number | undefined;
  },
  rate = UPLOAD_MIN_RATE,
): Promise<Blob> {
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let size = 0;
  const started = performance.now();
  const reader = body.getReader();
  let problem: AppError | undefined;
  const timer = setInterval(() => {
    const elapsed = performance.now() - started;
    if (
      elapsed >= rate.graceMs && size < rate.bytesPerSecond * elapsed / 1000
    ) {
      problem = new AppError(
        "VALIDATION_ERROR",
        `Cannot upload media: the body arrived slower than ${rate.bytesPerSecond} bytes a second`,
      );
      reader.cancel().catch(() => {});
    }
  }, Math.min(1_000, rate.graceMs));
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch {
        throw problem ?? new AppError(
          "VALIDATION_ERROR",
          "Cannot upload media: the request body ended before its end",
        );
      }
      if (problem) throw problem;
      if (chunk.done) break;
      size += chunk.value.byteLength;
      if (size > limits.max) {
        await reader.cancel().catch(() => {});
        throw tooLarge(limits.type, limits.max);
      }
      if (limits.declared !== undefined && size > limits.declared) {
        await reader.cancel().catch(() => {});
        throw new AppError(
          "VALIDATION_ERROR",
          `Cannot upload media: the body is longer than its Content-Length (${limits.declared})`,
        );
      }
      chunks.push(chunk.value as Uint8Array<ArrayBuffer>);
    }
  } finally {
    clearInterval(timer);
    reader.releaseLock();
  }
  return new Blob(chunks, { type: limits.mimeType });
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
  const running = inProgress.get(input.accountId) ?? 0;
  if (running >= UPLOADS_PER_ACCOUNT) {
    throw new AppError(
      "RATE_LIMITED",
      `Cannot upload media: ${UPLOADS_PER_ACCOUNT} uploads of this account are in progress; try again when one ends`,
      { retryAfterMs: 1_000 },
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
  inProgress.set(input.accountId, running + 1);
  try {
    const data = input.body
      ? await readAtMost(input.body, {
        max: kind.maxBytes,
        type: kind.type,
        mimeType,
        declared: input.declaredBytes,
      })
      : new Blob([]);
    if (data.size === 0) {
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
        data,
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
      sizeBytes: data.size,
    });
    return {
      id,
      type: kind.type,
      mimeType,
      sizeBytes: data.size,
      fileName,
      expiresAt: addMs(deps.clock.now(), META_KEEPS_MS).toISOString(),
    };
  } finally {
    release();
    const left = (inProgress.get(input.accountId) ?? 1) - 1;
    if (left > 0) inProgress.set(input.accountId, left);
    else inProgress.delete(input.accountId);
  }
}
