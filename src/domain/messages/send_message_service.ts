// The send use cases of POST /messages and POST /messages/batch: the body
// checked once, idempotency, admission and the writes as one group-commit
// unit, then the worker pools woken.
import type { Clock } from "../../clock.ts";
import type { GroupCommit } from "../../db/group_commit.ts";
import type { LookupCache } from "../../db/lookup_cache.ts";
import { AppError } from "../../errors.ts";
import { PRIORITY } from "../../jobs/queue.ts";
import { runIdempotentPlanned } from "../idempotency/idempotency_service.ts";
import { agentSendProblem, parseSendMessage } from "./outbound.ts";
import type { SendingAgent } from "./send_admission_service.ts";
import {
  acceptBatch,
  type AcceptedMessage,
  acceptMessage,
  type BatchResult,
} from "./send_service.ts";

/** A single send goes ahead of campaign work in the group commit; a batch is one bulk unit (see RunOptions.lane). */
const LIVE = { lane: "live" } as const;
const BULK = { lane: "bulk" } as const;

export interface SendMessageDeps {
  clock: Clock;
  commits: GroupCommit;
  lookups?: LookupCache | undefined;
  /** Wakes the worker pools of the given lanes once the jobs committed. */
  jobs: { notify(lanes?: Iterable<number>): void };
  config: { sendRatePerSecond: number; sendRateMax?: number };
}

export interface SendRequest<B> {
  accountId: string;
  idempotencyKey: string | undefined;
  body: B;
  /** The agent sending, when it is one (see SendContext.agent). */
  agent?: SendingAgent | undefined;
}

/** What POST /messages answers: the accepted message, or the replay of the first answer. */
export interface SendOutcome<T> {
  status: number;
  data: T;
  replayed: boolean;
}

/**
 * Sends one message: the raw JSON body is parsed here, once, naming the
 * spec's codes (MISSING_REQUIRED_FIELD, INVALID_MESSAGE_TYPE,
 * VALIDATION_ERROR); then idempotency, the rules and the writes run as one
 * unit of the container's group commit, and the answer comes after its
 * commit. A rule that fails inside the unit fails this request alone.
 */
export async function sendMessage(
  deps: SendMessageDeps,
  request: SendRequest<unknown>,
): Promise<SendOutcome<Omit<AcceptedMessage, "clientRef">>> {
  const parsed = parseSendMessage(request.body);
  if (!parsed.ok) {
    throw new AppError(parsed.problem.code, parsed.problem.message, {
      details: parsed.problem.details,
    });
  }
  const input = parsed.value;
  const refused = request.agent && agentSendProblem(input);
  if (refused) throw new AppError("INSUFFICIENT_SCOPE", refused);
  const result = await runIdempotentPlanned(deps, {
    accountId: request.accountId,
    key: request.idempotencyKey,
    route: "POST /messages",
    body: input,
  }, async (db, writes) => {
    const { clientRef: _ref, ...data } = await acceptMessage(
      db,
      writes,
      deps,
      request.accountId,
      input,
      request.agent,
    );
    return { status: 201, data };
  }, LIVE);
  if (!result.replayed) deps.jobs.notify([PRIORITY.live]);
  return result;
}

/** Sends a batch (its envelope already validated; each item is parsed alone). */
export async function sendBatch(
  deps: SendMessageDeps,
  request: SendRequest<Parameters<typeof acceptBatch>[4]>,
): Promise<SendOutcome<BatchResult>> {
  const result = await runIdempotentPlanned(deps, {
    accountId: request.accountId,
    key: request.idempotencyKey,
    route: "POST /messages/batch",
    body: request.body,
  }, async (db, writes) => ({
    status: 202,
    data: await acceptBatch(db, writes, deps, request.accountId, request.body),
  }), BULK);
  if (!result.replayed) deps.jobs.notify([PRIORITY.batch]);
  return result;
}
