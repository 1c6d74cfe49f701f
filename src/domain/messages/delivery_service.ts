import type { Db } from "../../db/schema.ts";
import type { Clock } from "../../clock.ts";
import type { SecretBox } from "../../crypto.ts";
import type { Logger } from "../../log.ts";
import { AppError } from "../../errors.ts";
import { fromJson } from "../../db/json.ts";
import { toDbTime } from "../../db/time.ts";
import { type GraphApi, UpstreamError } from "../../upstream/graph_api.ts";
import type { SendGovernor, SendLane } from "../../upstream/send_governor.ts";
import { findChannelById } from "../channels/channel_repo.ts";
import { channelAccessToken } from "../channels/channel_service.ts";
import { cloudMessageBody } from "./outbound.ts";
import {
  findMessageById,
  type MessageRow,
  setWamidIfMissing,
} from "./message_repo.ts";
import { recordStatusChange } from "./status_service.ts";

export interface DeliveryDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  secrets: SecretBox;
  graph: GraphApi;
  governor: SendGovernor;
}

export interface DeliveryAttempt {
  attempt: number;
  maxAttempts: number;
  signal?: AbortSignal;
}

/** Thrown when upstream throttling asks us to wait: the job runs again later without using an attempt. */
export class Throttled extends Error {
  override readonly name = "Throttled";
  constructor(readonly delayMs: number, message: string) {
    super(message);
  }
}

async function markFailed(
  deps: DeliveryDeps,
  row: MessageRow,
  error: { code: string; message: string },
): Promise<void> {
  const now = toDbTime(deps.clock.now());
  await deps.db.transaction().execute(async (trx) => {
    const current = await findMessageById(trx, row.id);
    if (!current || current.status === "failed" || current.status === "read") {
      return;
    }
    await recordStatusChange(trx, current, {
      to: "failed",
      now,
      errorCode: error.code,
      errorMessage: error.message,
    });
  });
}

/**
 * Sends one queued message upstream, paced by the channel's governor. On
 * success the message moves to `sent` with its upstream id; a permanent
 * failure (or the last attempt) moves it to `failed`; throttling and
 * transient failures are left to the job's retry.
 */
export async function deliverMessage(
  deps: DeliveryDeps,
  messageId: string,
  attempt: DeliveryAttempt,
): Promise<void> {
  const row = await findMessageById(deps.db, messageId);
  if (
    !row || row.direction !== "outbound" || row.status !== "queued" ||
    row.wa_message_id
  ) {
    return; // already sent, failed or advanced by a status report: nothing to do
  }
  const channel = row.channel_id
    ? await findChannelById(deps.db, row.channel_id)
    : undefined;
  if (!channel || channel.status !== "connected") {
    await markFailed(deps, row, {
      code: "CHANNEL_NOT_CONNECTED",
      message: `Channel "${row.channel_id}" is ${
        channel ? channel.status : "gone"
      }`,
    });
    return;
  }
  const contact = await deps.db.selectFrom("contacts").select("phone_number")
    .where("id", "=", row.contact_id).executeTakeFirstOrThrow();
  await deps.governor.acquire(channel.id, {
    lane: row.lane as SendLane,
    ratePerSecond: channel.sendRate,
    ...(attempt.signal ? { signal: attempt.signal } : {}),
  });
  const accessToken = await channelAccessToken(deps, channel.id);
  const body = cloudMessageBody(
    { id: row.id, type: row.type, content: fromJson(row.content, {}) },
    contact.phone_number,
  );
  let wamid: string;
  try {
    const sent = await deps.graph.sendMessage(
      { phoneNumberId: channel.upstreamPhoneNumberId, accessToken },
      body,
      attempt.signal ? { signal: attempt.signal } : {},
    );
    wamid = sent.wamid;
  } catch (err) {
    if (err instanceof UpstreamError && err.throttled) {
      const waitMs = err.retryAfterMs ?? 1000;
      deps.governor.pause(channel.id, waitMs);
      throw new Throttled(waitMs, err.message);
    }
    const last = attempt.attempt >= attempt.maxAttempts;
    const retryable = !(err instanceof AppError) || err.retryable;
    if (retryable && !last) throw err;
    await markFailed(deps, row, {
      code: err instanceof UpstreamError
        ? String(err.upstreamCode ?? err.category)
        : "SEND_FAILED",
      message: err instanceof Error ? err.message : String(err),
    });
    return;
  }
  const now = toDbTime(deps.clock.now());
  await deps.db.transaction().execute(async (trx) => {
    const current = await findMessageById(trx, row.id);
    if (current?.status === "queued") {
      await recordStatusChange(trx, current, {
        to: "sent",
        now,
        waMessageId: wamid,
      });
    } else {
      // A status report got here first (it matched by our opaque id); keep its status.
      await setWamidIfMissing(trx, row.id, wamid);
    }
  });
}
