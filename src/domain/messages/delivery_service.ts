import type { Db, Executor } from "../../db/schema.ts";
import type { GroupCommit } from "../../db/group_commit.ts";
import type { Clock } from "../../clock.ts";
import type { SecretBox } from "../../crypto.ts";
import type { Logger } from "../../log.ts";
import type { LookupCache } from "../../db/lookup_cache.ts";
import { AppError, RetryLater } from "../../errors.ts";
import { fromJson } from "../../db/json.ts";
import { toDbTime } from "../../db/time.ts";
import { type GraphApi, UpstreamError } from "../../upstream/graph_api.ts";
import {
  type SendGovernor,
  type SendLane,
  sendRateOf,
} from "../../upstream/send_governor.ts";
import {
  findSendingChannel,
  type SendingChannel,
} from "../channels/channel_repo.ts";
import { isRefreshCode } from "../templates/template_refresh_service.ts";
import {
  checkTemplateStill,
  holdForMetaPause,
} from "./queued_template_service.ts";
import { cloudMessageBody } from "./outbound.ts";
import {
  findMessageById,
  findMessageToSend,
  setWamidIfMissing,
} from "./message_repo.ts";
import { PlannedEvents } from "../events/event_service.ts";
import type { Answers, PlannedWrites } from "../../db/planned_writes.ts";
import { planStatusMove, planTemplateRefresh } from "./status_move_service.ts";
import { batcherOf, RecordBatcher } from "../webhooks/record_batcher.ts";
import { completeManyQueries, type JobLease } from "../../jobs/queue.ts";

export interface DeliveryDeps {
  db: Db;
  /** Accepted sends are recorded together, as planned writes (recordAccepted). */
  commits: Pick<GroupCommit, "runPlanned">;
  clock: Clock;
  log: Logger;
  secrets: SecretBox;
  graph: GraphApi;
  governor: SendGovernor;
  /** The container's: each send's channel and sealed token come from it. */
  lookups?: LookupCache | undefined;
}

export interface DeliveryOptions {
  /** Aborted on shutdown or a lost lease: the send is given up, not failed. */
  signal?: AbortSignal;
  /**
   * Aborted when shutdown begins, and whenever `signal` is (JobContext's):
   * a send still waiting for its number's turn gives its job back
   * (RetryLater) instead of calling upstream, which the shutdown could cut
   * off after Meta accepted it (sent again after the restart). A call
   * already made runs to its end and is recorded.
   */
  stopping?: AbortSignal;
  /**
   * The send's job: the record of an accepted send completes it in its own
   * unit (see planAccepted), and `markCompleted` tells its runner
   * whether it did, once that transaction committed.
   */
  lease?: JobLease;
  markCompleted?: (done: boolean) => void;
  /** When the send's job was first held on its template (JobRow.heldSince). */
  heldSince?: string | null;
}

/**
 * Why a send must not call upstream now: its job was taken from it (the
 * signal's reason), or shutdown began (RetryLater: it runs after the
 * restart, no attempt spent); undefined when it may go on.
 */
function givenUp(attempt: DeliveryOptions): unknown {
  if (attempt.signal?.aborted) return attempt.signal.reason;
  if (attempt.stopping?.aborted) {
    return new RetryLater(0, "Not sent: the server is shutting down");
  }
  return undefined;
}

/** Never re-run a throttled send sooner than this, whatever Retry-After says. */
const MIN_THROTTLE_WAIT_MS = 250;
/** Tries of the write that records an accepted send (a resend would be a duplicate). */
const RECORD_TRIES = 5;

/**
 * Marks a message failed, but only while it is still queued: a report that
 * got further wins. A template send that Meta refused with a template
 * error (`refresh`) queues a refresh of that template in the same unit (at
 * most one per template per 5 minutes). Planned writes: one write batch on
 * libSQL, a group commit's transaction on SQLite.
 */
async function markFailed(
  deps: DeliveryDeps,
  messageId: string,
  error: { code: string; message: string },
  options: { refresh?: boolean } = {},
): Promise<void> {
  const at = deps.clock.now();
  const now = toDbTime(at);
  await deps.commits.runPlanned(async (db, writes) => {
    const current = await findMessageById(db, messageId);
    if (current?.status !== "queued") return () => undefined;
    const events = new PlannedEvents();
    // Guarded: on libSQL a report that moved it meanwhile plans this again.
    await planStatusMove(writes, current, {
      to: "failed",
      now,
      errorCode: error.code,
      errorMessage: error.message,
    }, events);
    if (options.refresh) await planTemplateRefresh(db, writes, current, at);
    await events.flushPlanned(db, writes);
    return () => undefined;
  });
}

/** What a failed send is stored as: upstream code and message, never internal details. */
function failureOf(err: unknown): { code: string; message: string } {
  if (err instanceof UpstreamError) {
    if (err.category === "network") {
      return {
        code: "network",
        message: "The upstream could not be reached (network error or timeout)",
      };
    }
    return {
      code: String(err.upstreamCode ?? err.category),
      message: err.category === "bsuid_recipient_unsupported"
        ? `${err.message}: this message can only go to the customer's phone number, which they have not shared`
        : err.message,
    };
  }
  if (err instanceof AppError && err.code !== "INTERNAL_ERROR") {
    return { code: err.code, message: err.message };
  }
  return { code: "SEND_FAILED", message: "The message could not be sent" };
}

/**
 * Sends one queued message upstream, paced by the channel's governor. On
 * success the message moves to `sent` with its upstream id. A failure is
 * thrown (AppError says whether it is retryable); throttling throws
 * RetryLater, re-run later without spending an attempt. When the failure is
 * final (permanent, or the job's last attempt) the job's final-failure hook
 * calls failUndeliverable(), so an accepted message never stays queued.
 */
export async function deliverMessage(
  deps: DeliveryDeps,
  messageId: string,
  opts: DeliveryOptions = {},
): Promise<void> {
  const result = await sendOnce(deps, messageId, opts);
  if (result === "nothing") return;
  await recordAccepted(deps, messageId, result, opts);
}

/** Marks a message that cannot be sent failed with what `err` says (while it is still queued). */
export async function failUndeliverable(
  deps: DeliveryDeps,
  messageId: string,
  err: unknown,
): Promise<void> {
  await markFailed(deps, messageId, failureOf(err), {
    refresh: err instanceof UpstreamError && isRefreshCode(err.upstreamCode),
  });
}

/** Sends the message once; the upstream id, or "nothing" when there is nothing left to send. */
async function sendOnce(
  deps: DeliveryDeps,
  messageId: string,
  attempt: DeliveryOptions,
): Promise<string | "nothing"> {
  const row = await findMessageToSend(deps.db, messageId);
  if (
    !row || row.direction !== "outbound" || row.status !== "queued" ||
    row.wa_message_id
  ) {
    return "nothing"; // already sent, failed or advanced by a status report
  }
  const first = await connectedChannel(deps, row);
  if (!first) return "nothing";
  if (row.recipient_id === null) {
    throw new Error(`Cannot send message "${row.id}": its contact is gone`);
  }
  if (row.type === "template") {
    await checkTemplateStill(deps, row, first.channel, attempt.heldSince);
  }
  const wait = attempt.stopping ?? attempt.signal;
  try {
    await deps.governor.acquire(first.channel.id, {
      lane: row.lane as SendLane,
      ratePerSecond: sendRateOf(first.channel, deps.governor.limits),
      ...(wait ? { signal: wait } : {}),
    });
  } catch (err) {
    throw givenUp(attempt) ?? err;
  }
  // The wait can be long: the channel as it is now (disconnected, or given a
  // new token, meanwhile).
  const sending = await connectedChannel(deps, row);
  if (!sending) return "nothing";
  const { channel } = sending;
  const accessToken = await deps.secrets.openCached(sending.accessTokenSealed);
  const body = cloudMessageBody(
    { id: row.id, type: row.type, content: fromJson(row.content, {}) },
    {
      phoneNumber: row.recipient_phone_number,
      userId: row.recipient_user_id,
    },
  );
  // Last look before the call, with no wait between it and the call.
  const stop = givenUp(attempt);
  if (stop) throw stop;
  try {
    const sent = await deps.graph.sendMessage(
      { phoneNumberId: channel.upstreamPhoneNumberId, accessToken },
      body,
      attempt.signal ? { signal: attempt.signal } : {},
    );
    return sent.wamid;
  } catch (err) {
    if (
      err instanceof UpstreamError && err.upstreamCode === 132015 &&
      row.type === "template"
    ) {
      throw await holdForMetaPause(deps, row, {
        channel,
        heldSince: attempt.heldSince,
      }) ?? err;
    }
    if (err instanceof UpstreamError && err.throttled) {
      const waitMs = Math.max(MIN_THROTTLE_WAIT_MS, err.retryAfterMs ?? 1000);
      // The pair limit is about one recipient: the rest of the number's sends go on.
      if (err.category !== "throttled_pair") {
        deps.governor.pause(channel.id, waitMs);
      }
      throw new RetryLater(waitMs, err.message);
    }
    throw err;
  }
}

/**
 * The message's channel with its sealed token while it is connected; else
 * the message is marked failed (while still queued) and this is undefined.
 */
async function connectedChannel(
  deps: DeliveryDeps,
  row: { id: string; channel_id: string | null },
): Promise<SendingChannel | undefined> {
  const sending = row.channel_id
    ? await sendingChannel(deps, row.channel_id)
    : undefined;
  if (sending?.channel.status === "connected") return sending;
  await markFailed(deps, row.id, {
    code: "CHANNEL_NOT_CONNECTED",
    message: `Channel "${row.channel_id}" is ${
      sending ? sending.channel.status : "gone"
    }`,
  });
  return undefined;
}

/**
 * The channel a send goes through, with its sealed token. From the lookup
 * cache only while it is exact (embedded SQLite: it reads its epoch at each
 * refresh, so a channel disconnected or given a new token by any process is
 * seen by the next send, as by the next request); with a TTL (libSQL) a
 * change made by the admin CLI or another instance could be missed for up to
 * that long, and a send with a revoked token fails for good: read instead.
 */
async function sendingChannel(
  deps: Pick<DeliveryDeps, "db" | "lookups">,
  id: string,
): Promise<SendingChannel | undefined> {
  const load = () => findSendingChannel(deps.db, id);
  if (!deps.lookups?.exact) return await load();
  await deps.lookups.refresh();
  return await deps.lookups.get(`sending-channel:${id}`, load);
}

/**
 * Records an accepted send, with its job's completion when given its lease.
 * The upstream already has the message, so a failure here must never turn
 * into a retry of the job (that would send it twice): the write is retried
 * in place, and if it still fails the job is left to its runner to complete
 * as usual and the status callbacks (matched by our id in
 * biz_opaque_callback_data) will move the message. The runner learns that
 * the job was completed only from a committed record.
 */
async function recordAccepted(
  deps: DeliveryDeps,
  messageId: string,
  wamid: string,
  job: Pick<DeliveryOptions, "lease" | "markCompleted">,
): Promise<void> {
  for (let i = 1;; i++) {
    try {
      const completed = await recorderOf(deps).add({
        messageId,
        wamid,
        lease: job.lease,
      });
      job.markCompleted?.(completed);
      return;
    } catch (err) {
      if (i >= RECORD_TRIES) {
        deps.log.error(
          "Cannot record an accepted send; status callbacks will",
          {
            err,
            messageId,
            wamid,
          },
        );
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** i));
    }
  }
}

/**
 * How long a send's record waits for others to share its commit: sends end
 * one per upstream response, and a commit costs more than the record's writes.
 */
const RECORD_GATHER = { gatherMs: 2 } as const;

interface Accepted {
  messageId: string;
  wamid: string;
  /** The send's job, completed in the same transaction. */
  lease: JobLease | undefined;
}

/** The recorder of each group commit (one per container). */
const recorderOf = batcherOf((deps: DeliveryDeps) =>
  new RecordBatcher<Accepted, boolean>(deps.commits, {
    plan: (db, writes, accepted) => planAccepted(db, writes, deps, accepted),
  }, RECORD_GATHER)
);

/**
 * Records the sends that ended together in one unit of a group commit (as
 * planned writes: one write batch on libSQL, the group transaction on
 * SQLite): each still queued message moves to `sent` with its upstream id
 * (one that a status report got to first keeps its status and gains the
 * id; on libSQL a report that lands between the read and the batch fails
 * the move's guard and the unit is planned again), then their events are
 * written with their deliveries in one statement each (PlannedEvents), and
 * their jobs completed in one more: a send job's end costs no transaction
 * of its own. Per send, whether its job was completed (false without a
 * lease, or when the lease was lost: its runner settles it as usual).
 */
async function planAccepted(
  db: Executor,
  writes: PlannedWrites,
  deps: DeliveryDeps,
  accepted: Accepted[],
): Promise<(answers: Answers) => boolean[]> {
  const at = deps.clock.now();
  const now = toDbTime(at);
  const events = new PlannedEvents();
  for (const { messageId, wamid } of accepted) {
    const current = await findMessageById(db, messageId);
    if (current?.status === "queued") {
      await planStatusMove(writes, current, {
        to: "sent",
        now,
        waMessageId: wamid,
      }, events);
    } else {
      // A status report got here first (matched by our opaque id); keep its status.
      await setWamidIfMissing(writes.db, messageId, wamid);
    }
  }
  await events.flushPlanned(db, writes);
  const leases = accepted.flatMap((a) => a.lease ? [a.lease] : []);
  const handles = completeManyQueries(leases, at).map((q) => writes.add(q));
  return (answers) => {
    const done = new Set(
      handles.flatMap((h) =>
        (answers.of(h).rows as { id: string }[]).map((r) => r.id)
      ),
    );
    return accepted.map((a) => a.lease !== undefined && done.has(a.lease.id));
  };
}
