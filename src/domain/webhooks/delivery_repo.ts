import { CompiledQuery, type ExpressionBuilder, sql } from "kysely";
import type {
  Database,
  Executor,
  WebhookDeliveriesTable,
} from "../../db/schema.ts";
import type { GroupCommit } from "../../db/group_commit.ts";
import { deleteInBatches } from "../../db/prune.ts";
import { insertRowsWhere } from "../../db/bulk.ts";
import { newId } from "../../ids.ts";
import type { CursorPosition } from "../pagination.ts";
import { DELIVER_JOB, type DeliveryStatus } from "./delivery.ts";

// `status = 'pending'` is written as a literal in the statements below: the
// partial indexes of pending rows are only usable when the query states their
// condition verbatim (a bound parameter would not prove it).

/**
 * Runs SQL written out in full: the statements every event or attempt runs
 * skip Kysely's building and compiling (the SQLite driver reuses the prepared
 * statement of the same text).
 */
export async function runPrecompiled<R>(
  db: Executor,
  text: string,
  params: readonly unknown[],
): Promise<{ rows: R[]; changes: number }> {
  const r = await db.executeQuery<R>(CompiledQuery.raw(text, [...params]));
  return { rows: r.rows, changes: Number(r.numAffectedRows ?? 0) };
}

/** The columns an attempt writes (finishAttempt), in statement order. */
const RESULT_COLUMNS = [
  "status",
  "status_code",
  "outcome",
  "error_message",
  "duration_ms",
  "response_excerpt",
  "redirect_location",
  "redirect_status_code",
  "first_attempt_at",
  "attempted_at",
  "next_attempt_at",
] as const satisfies ReadonlyArray<keyof AttemptResult>;

const DELIVERY_COLUMNS = [
  "id",
  "account_id",
  "webhook_id",
  "root_id",
  "event_id",
  "event",
  "subject_id",
  "after_root_id",
  "kind",
  "attempt",
  "payload_hash",
  "created_at",
  ...RESULT_COLUMNS,
] as const satisfies ReadonlyArray<keyof WebhookDeliveriesTable>;

const ROW_PLACEHOLDERS = `(${DELIVERY_COLUMNS.map(() => "?").join(", ")})`;
const insertTexts: string[] = [];

/** `insert into webhook_deliveries` of `n` rows, built once per n. */
function insertText(n: number): string {
  return insertTexts[n] ??= `insert into webhook_deliveries (${
    DELIVERY_COLUMNS.join(", ")
  }) values ${Array(n).fill(ROW_PLACEHOLDERS).join(", ")}`;
}

/** Inserts delivery rows in one statement per 100. */
export async function insertDeliveries(
  db: Executor,
  rows: WebhookDeliveriesTable[],
): Promise<void> {
  for (let i = 0; i < rows.length; i += 100) {
    const chunk = rows.slice(i, i + 100);
    const params = chunk.flatMap((r) => DELIVERY_COLUMNS.map((c) => r[c]));
    await runPrecompiled(db, insertText(chunk.length), params);
  }
}

/** A source row still pending, for a write that follows it in a batch (insertRowsWhere). */
export const STILL_PENDING =
  "exists (select 1 from webhook_deliveries as p where p.id = v.k and p.status = 'pending')";

/**
 * Inserts the next attempts of rows whose result is written later in the
 * same batch, each only while the row it follows (`after`) is still
 * pending: a row another run already wrote gets no second chain.
 */
export async function insertRetries(
  db: Executor,
  retries: ReadonlyArray<{ after: string; row: WebhookDeliveriesTable }>,
): Promise<void> {
  await insertRowsWhere(
    db,
    "webhook_deliveries",
    retries.map((r) => ({ key: r.after, row: r.row })),
    STILL_PENDING,
  );
}

/**
 * What one attempt needs, in one read: the row, its subscription, its
 * event's data and, for a row that waits for a chain (after_root_id), that
 * chain's pending attempt.
 */
export interface AttemptRow extends WebhookDeliveriesTable {
  url: string;
  enabled: number;
  secret_enc: string;
  headers_enc: string | null;
  data: string | null;
  /**
   * When the pending attempt of the chain this row waits for is due ("" for
   * a pending attempt without a due time); null when the row waits for
   * nothing or that chain has ended.
   */
  first_due: string | null;
  /**
   * The lane (job priority) of that pending attempt while its job waits to
   * be claimed; null otherwise.
   */
  first_priority: number | null;
}

// The ids' list drives the join: one primary-key lookup per id; the chain
// waited for is a probe of webhook_deliveries_chain_idx (and of its job by
// unique key), only for a row that waits.
const FIND_ATTEMPT_ROWS = `select d.*, w.url, w.enabled, w.secret_enc,
  w.headers_enc, e.data,
  case when d.after_root_id is null then null else (
    select coalesce(f.next_attempt_at, '') from webhook_deliveries as f
    where f.root_id = d.after_root_id and f.status = 'pending' limit 1)
  end as first_due,
  case when d.after_root_id is null then null else (
    select j.priority from webhook_deliveries as f
    join jobs as j on j.unique_key = '${DELIVER_JOB}:' || f.id
    where f.root_id = d.after_root_id and f.status = 'pending'
      and j.state in ('available', 'retryable') limit 1)
  end as first_priority
  from json_each(?) as j
  inner join webhook_deliveries as d on d.id = j.value
  inner join webhooks as w on w.id = d.webhook_id
  left join events as e on e.id = d.event_id`;

/** The attempt rows of many deliveries in one statement, by id (an unknown id is absent). */
export async function findAttemptRows(
  db: Executor,
  ids: readonly string[],
): Promise<Map<string, AttemptRow>> {
  if (ids.length === 0) return new Map();
  const { rows } = await runPrecompiled<AttemptRow>(db, FIND_ATTEMPT_ROWS, [
    JSON.stringify(ids),
  ]);
  return new Map(rows.map((r) => [r.id, r]));
}

export async function findAttemptRow(
  db: Executor,
  id: string,
): Promise<AttemptRow | undefined> {
  return (await findAttemptRows(db, [id])).get(id);
}

/** One row of the subscription's log, or undefined. */
export async function findDelivery(
  db: Executor,
  ref: { accountId: string; webhookId: string; id: string },
): Promise<WebhookDeliveriesTable | undefined> {
  return await db.selectFrom("webhook_deliveries").selectAll()
    .where("id", "=", ref.id)
    .where("webhook_id", "=", ref.webhookId)
    .where("account_id", "=", ref.accountId)
    .executeTakeFirst();
}

/**
 * Makes the pending attempts that wait for one of the chains `rootIds` due
 * now (their jobs' run_at), in one statement: the end of a contact.created
 * chain releases what waited for it.
 */
export async function runDependentsNow(
  db: Executor,
  rootIds: readonly string[],
  now: string,
): Promise<void> {
  if (rootIds.length === 0) return;
  await runPrecompiled(
    db,
    `update jobs set run_at = ?
      where unique_key in (
        select '${DELIVER_JOB}:' || id from webhook_deliveries
        where after_root_id in (select value from json_each(?))
          and status = 'pending')
        and state in ('available', 'retryable')`,
    [now, JSON.stringify(rootIds)],
  );
}

/**
 * Moves the waiting jobs of the pending attempts of the chains `rootIds` up
 * to lane `priority` (never down), in one statement: a live event that waits
 * for a contact.created still queued in the batch lane takes it along.
 */
export async function raiseChains(
  db: Executor,
  rootIds: readonly string[],
  priority: number,
): Promise<void> {
  if (rootIds.length === 0) return;
  await runPrecompiled(
    db,
    `update jobs set priority = ?
      where unique_key in (
        select '${DELIVER_JOB}:' || id from webhook_deliveries
        where root_id in (select value from json_each(?))
          and status = 'pending')
        and state in ('available', 'retryable') and priority > ?`,
    [priority, JSON.stringify(rootIds), priority],
  );
}

/**
 * A query that finds a row while every chain of `rootIds` still has its
 * pending attempt (a guard of an atomic unit whose new deliveries wait for
 * them: see writeFanOut).
 */
export function chainsStillPending(
  rootIds: readonly string[],
): CompiledQuery<unknown> {
  return CompiledQuery.raw(
    `select 1 where not exists (select 1 from json_each(?) as r
      where not exists (select 1 from webhook_deliveries as d
        where d.root_id = r.value and d.status = 'pending'))`,
    [JSON.stringify(rootIds)],
  );
}

/**
 * For each subject, the subscriptions' chains of a contact.created of that
 * subject not delivered yet (subject -> subscription -> root id), and those
 * whose waiting job is in a lane after `lane` (`behind`), in one statement
 * for any number of subjects.
 */
export async function pendingContactCreated(
  db: Executor,
  input: { webhookIds: string[]; subjectIds: string[]; lane: number },
): Promise<{ chains: Map<string, Map<string, string>>; behind: Set<string> }> {
  const out = {
    chains: new Map<string, Map<string, string>>(),
    behind: new Set<string>(),
  };
  if (input.webhookIds.length === 0 || input.subjectIds.length === 0) {
    return out;
  }
  const { rows } = await runPrecompiled<
    { webhook_id: string; subject_id: string; root_id: string; behind: number }
  >(
    db,
    `select webhook_id, subject_id, root_id, exists (select 1 from jobs as j
        where j.unique_key = '${DELIVER_JOB}:' || webhook_deliveries.id
          and j.state in ('available', 'retryable') and j.priority > ?)
        as behind
      from webhook_deliveries
      where webhook_id in (${input.webhookIds.map(() => "?").join(", ")})
        and subject_id in (select value from json_each(?))
        and status = 'pending'
        and event = 'contact.created'`,
    [input.lane, ...input.webhookIds, JSON.stringify(input.subjectIds)],
  );
  for (const r of rows) {
    const bySubscription = out.chains.get(r.subject_id) ??
      new Map<string, string>();
    bySubscription.set(r.webhook_id, r.root_id);
    out.chains.set(r.subject_id, bySubscription);
    if (Number(r.behind) === 1) out.behind.add(r.root_id);
  }
  return out;
}

export type AttemptResult = Pick<
  WebhookDeliveriesTable,
  | "status"
  | "status_code"
  | "outcome"
  | "error_message"
  | "duration_ms"
  | "response_excerpt"
  | "redirect_location"
  | "redirect_status_code"
  | "first_attempt_at"
  | "attempted_at"
  | "next_attempt_at"
>;

/** The pending attempts of a disabled subscription that are not running now. */
const SKIPPABLE = (webhookId: string) =>
  sql`webhook_id = ${webhookId} and status = 'pending'
    and exists (select 1 from webhooks where id = ${webhookId} and enabled = 0)
    and not exists (select 1 from jobs
      where unique_key = ${DELIVER_JOB} || ':' || webhook_deliveries.id
        and state = 'running')`;

/**
 * Marks up to `limit` pending attempts of a subscription that are not running
 * right now as `skipped` (replayable) and completes their jobs, in one
 * atomic unit without a transaction on libSQL (GroupCommit.runPlanned), as
 * long as the subscription is still disabled (a re-enable between two
 * batches stops it). The rows are read first; the batch skips only those
 * still skippable then (the conditions again, in its WHERE), and completes
 * the jobs of the rows it left skipped. Returns how many rows it skipped.
 */
export async function skipPending(
  commits: Pick<GroupCommit, "runPlanned">,
  webhookId: string,
  opts: { now: string; limit: number },
): Promise<number> {
  return await commits.runPlanned(async (db, writes) => {
    const { rows } = await sql<{ id: string }>`
      select id from webhook_deliveries where ${SKIPPABLE(webhookId)}
      limit ${opts.limit}`.execute(db);
    if (rows.length === 0) return () => 0;
    const ids = JSON.stringify(rows.map((r) => r.id));
    await sql`
      update webhook_deliveries
      set status = 'skipped', next_attempt_at = null,
        error_message = 'Skipped: the subscription was disabled'
      where id in (select value from json_each(${ids}))
        and ${SKIPPABLE(webhookId)}
      returning id`.execute(writes.db);
    const skipped = writes.last;
    await sql`
      update jobs set state = 'completed', finalized_at = ${opts.now},
        updated_at = ${opts.now}
      where unique_key in (
        select ${DELIVER_JOB} || ':' || id from webhook_deliveries
        where id in (select value from json_each(${ids}))
          and status = 'skipped')
        and state in ('available', 'retryable')`.execute(writes.db);
    return (answers) => answers.of(skipped).rows.length;
  });
}

/**
 * Rows skipped per unit, and the pause between two: skipping is never
 * urgent, and a long queue must not hold the database from live deliveries.
 */
const SKIP_BATCH = 50;
const SKIP_PAUSE_MS = 5;

/**
 * Ends a disabled subscription's queue: every pending attempt not running
 * now becomes `skipped`, with its job, 50 per unit so other work
 * interleaves. Attempts it misses are skipped by their own job when it runs.
 */
export async function skipQueue(
  deps: { commits: Pick<GroupCommit, "runPlanned"> },
  webhookId: string,
  now: string,
): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await skipPending(deps.commits, webhookId, {
      now,
      limit: SKIP_BATCH,
    });
    total += n;
    if (n < SKIP_BATCH) return total;
    await new Promise((resolve) => setTimeout(resolve, SKIP_PAUSE_MS));
  }
}

const FINISH_ATTEMPT = `update webhook_deliveries set ${
  RESULT_COLUMNS.map((c) => `${c} = ?`).join(", ")
} where id = ? and status = 'pending'`;

/** Writes an attempt's result; false when the row is no longer pending (another run wrote it). */
export async function finishAttempt(
  db: Executor,
  id: string,
  result: AttemptResult,
): Promise<boolean> {
  const { changes } = await runPrecompiled(db, FINISH_ATTEMPT, [
    ...RESULT_COLUMNS.map((c) => result[c]),
    id,
  ]);
  return changes === 1;
}

const finishTexts: string[] = [];

/**
 * The update of `n` attempts' results, their values bound (a row's id and
 * then RESULT_COLUMNS), built once per n: a JSON list unpacked with `->>`
 * cost half as much again per row (30-row updates of this table in one
 * process, alternated: 33 against 22 microseconds a row).
 */
function finishText(n: number): string {
  return finishTexts[n] ??= `with s(id, ${RESULT_COLUMNS.join(", ")}) as (
    values ${
    Array(n).fill(`(${Array(RESULT_COLUMNS.length + 1).fill("?").join(", ")})`)
      .join(", ")
  })
  update webhook_deliveries set ${
    RESULT_COLUMNS.map((c) => `${c} = s.${c}`).join(", ")
  } from s
  where webhook_deliveries.id = s.id and webhook_deliveries.status = 'pending'
  returning webhook_deliveries.id`;
}

/** finishAttempt() of many rows, one statement per 100; returns the ids written (the rows still pending). */
export async function finishAttempts(
  db: Executor,
  attempts: ReadonlyArray<{ id: string; result: AttemptResult }>,
): Promise<Set<string>> {
  const written = new Set<string>();
  for (let i = 0; i < attempts.length; i += 100) {
    const chunk = attempts.slice(i, i + 100);
    const { rows } = await runPrecompiled<{ id: string }>(
      db,
      finishText(chunk.length),
      chunk.flatMap((a) => [a.id, ...RESULT_COLUMNS.map((c) => a.result[c])]),
    );
    for (const r of rows) written.add(r.id);
  }
  return written;
}

export interface DeliveryListQuery {
  accountId: string;
  webhookId: string;
  status?: DeliveryStatus | undefined;
  event?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
  after?: CursorPosition | undefined;
  limit: number;
}

function before(position: CursorPosition) {
  return (eb: ExpressionBuilder<Database, "webhook_deliveries">) =>
    eb(
      eb.refTuple("created_at", "id"),
      "<",
      eb.tuple(position.at, position.id),
    );
}

/** Newest first; `limit + 1` rows so the caller can tell whether more exist. */
export async function listDeliveryRows(
  db: Executor,
  q: DeliveryListQuery,
): Promise<WebhookDeliveriesTable[]> {
  let query = db.selectFrom("webhook_deliveries").selectAll()
    .where("webhook_id", "=", q.webhookId)
    .where("account_id", "=", q.accountId);
  if (q.status) query = query.where("status", "=", q.status);
  if (q.event) query = query.where("event", "=", q.event);
  if (q.since) query = query.where("created_at", ">=", q.since);
  if (q.until) query = query.where("created_at", "<", q.until);
  if (q.after) query = query.where(before(q.after));
  return await query.orderBy("created_at", "desc").orderBy("id", "desc")
    .limit(q.limit + 1).execute();
}

/**
 * Deletes finished log rows created before `cutoff`; returns how many. It
 * walks the primary key (migration 0013): every id made before the cutoff's
 * millisecond sorts below `before` (UUIDv7), and a row's id is never older
 * than its created_at, so no row it should delete lies above it.
 */
export async function pruneDeliveries(
  db: Executor,
  cutoff: string,
): Promise<number> {
  const before = newId(Date.parse(cutoff)).slice(0, 13);
  return await deleteInBatches(
    db,
    "webhook_deliveries",
    sql`id < ${before} and created_at < ${cutoff} and status != 'pending'`,
  );
}
