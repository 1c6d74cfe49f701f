import type { Executor } from "../../db/schema.ts";
import type { GroupCommit, RunOptions } from "../../db/group_commit.ts";
import type { Clock } from "../../clock.ts";
import { AppError } from "../../errors.ts";
import { sha256HexSync } from "../../crypto.ts";
import { fromJson, toJson } from "../../db/json.ts";
import { addMs, toDbTime } from "../../db/time.ts";
import type { PlannedWrites } from "../../db/planned_writes.ts";
import { writerOf } from "../plan_writer.ts";
import {
  findIdempotencyRecord,
  noLiveIdempotencyRecord,
  saveIdempotencyRecord,
} from "./idempotency_repo.ts";

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const KEY_REGEXP = /^[\x21-\x7e]{1,255}$/;

export interface IdempotentResult<T> {
  status: number;
  data: T;
  replayed: boolean;
}

/** Stable hash of a request: the route plus the JSON body with sorted keys. */
export function requestHash(route: string, body: unknown): string {
  return sha256HexSync(`${route}\n${canonicalJson(body)}`);
}

/** Nesting canonicalJson() writes by recursion; a deeper value goes to the explicit stack. */
const MAX_RECURSION = 64;

/**
 * JSON with sorted keys (canonicalJsonByStack()'s text): by recursion, which
 * costs a fifth of the CPU (a batch of 100 items: about 8 us an item by the
 * stack), unless the value nests deeper than MAX_RECURSION levels.
 */
export function canonicalJson(root: unknown): string {
  return recursive(root, 0) ?? canonicalJsonByStack(root);
}

/** canonicalJsonByStack(value), or undefined past MAX_RECURSION levels or where unsure (a value JSON.stringify skips). */
function recursive(value: unknown, depth: number): string | undefined {
  if (typeof value !== "object" || value === null) {
    return JSON.stringify(value ?? null);
  }
  if (depth === MAX_RECURSION) return undefined;
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) continue; // a hole: forEach skips it too
      const item = recursive(value[i], depth + 1);
      if (item === undefined) return undefined;
      out += i > 0 ? `,${item}` : item;
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  let out = "{";
  let first = true;
  // Object.keys in sort()'s code unit order, as the stack's comparator.
  for (const key of Object.keys(record).sort()) {
    const v = record[key];
    if (v === undefined) continue;
    const item = recursive(v, depth + 1);
    if (item === undefined) return undefined;
    out += `${first ? "" : ","}${JSON.stringify(key)}:${item}`;
    first = false;
  }
  return `${out}}`;
}

type Piece = { text: string } | { value: unknown };

/**
 * JSON with sorted keys, written with an explicit stack instead of recursion:
 * it hashes bodies before their fields are validated (batch items), so any
 * nesting the JSON parser accepted must not overflow the call stack here.
 */
export function canonicalJsonByStack(root: unknown): string {
  const out: string[] = [];
  const stack: Piece[] = [{ value: root }];
  while (stack.length > 0) {
    const piece = stack.pop()!;
    if ("text" in piece) {
      out.push(piece.text);
      continue;
    }
    const value = piece.value;
    if (typeof value !== "object" || value === null) {
      out.push(JSON.stringify(value ?? null));
      continue;
    }
    const pieces: Piece[] = [];
    if (Array.isArray(value)) {
      pieces.push({ text: "[" });
      value.forEach((v, i) => {
        if (i > 0) pieces.push({ text: "," });
        pieces.push({ value: v });
      });
      pieces.push({ text: "]" });
    } else {
      const entries = Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      pieces.push({ text: "{" });
      entries.forEach(([k, v], i) => {
        pieces.push({ text: `${i > 0 ? "," : ""}${JSON.stringify(k)}:` });
        pieces.push({ value: v });
      });
      pieces.push({ text: "}" });
    }
    for (let i = pieces.length - 1; i >= 0; i--) stack.push(pieces[i]!);
  }
  return out.join("");
}

/** The parts of a request its idempotency depends on. */
export interface IdempotentRequest {
  accountId: string;
  key: string | undefined;
  route: string;
  body: unknown;
}

/** The key of a request with one, checked (VALIDATION_ERROR), with its request's hash. */
function keyOf(
  request: IdempotentRequest,
): { key: string; hash: string } | undefined {
  const key = request.key;
  if (key === undefined) return undefined;
  if (!KEY_REGEXP.test(key)) {
    throw new AppError(
      "VALIDATION_ERROR",
      'Invalid header "Idempotency-Key": use 1 to 255 printable ASCII characters',
    );
  }
  return { key, hash: requestHash(request.route, request.body) };
}

/**
 * The replay of the key's record alive at `now`, IDEMPOTENCY_KEY_REUSED when
 * it was another request's, or undefined when the key has no live record.
 */
async function replayOf<T>(
  db: Executor,
  request: IdempotentRequest,
  keyed: { key: string; hash: string },
  now: Date,
): Promise<IdempotentResult<T> | undefined> {
  const existing = await findIdempotencyRecord(
    db,
    request.accountId,
    keyed.key,
  );
  if (!existing || existing.expiresAt <= toDbTime(now)) return undefined;
  if (existing.requestHash !== keyed.hash || existing.route !== request.route) {
    throw new AppError(
      "IDEMPOTENCY_KEY_REUSED",
      `Idempotency-Key "${keyed.key}" was already used with a different request`,
    );
  }
  return {
    status: existing.responseStatus,
    data: fromJson<T>(existing.responseBody, null as T),
    replayed: true,
  };
}

/** Stores the first response of a key, from `now` on. */
async function saveRecord(
  db: Executor,
  request: IdempotentRequest,
  keyed: { key: string; hash: string },
  out: { status: number; data: unknown },
  now: Date,
): Promise<void> {
  await saveIdempotencyRecord(db, {
    accountId: request.accountId,
    key: keyed.key,
    route: request.route,
    requestHash: keyed.hash,
    responseStatus: out.status,
    responseBody: toJson(out.data),
    createdAt: toDbTime(now),
    expiresAt: toDbTime(addMs(now, IDEMPOTENCY_TTL_MS)),
  });
}

/**
 * The work of an idempotent request as a plan (src/db/planned_writes.ts):
 * reads on `db`, writes on `writes`; its answer is known before the commit
 * (it is stored with the key).
 */
export type IdempotentPlan<T> = (
  db: Executor,
  writes: PlannedWrites,
) => Promise<{ status: number; data: T }>;

/**
 * Runs `plan` as one unit of the container's group commit
 * (GroupCommit.runPlanned) together with the idempotency record, so a key
 * is stored exactly when the work committed. Same key and body replays the
 * first response; same key and another body is IDEMPOTENCY_KEY_REUSED.
 * On embedded SQLite the unit runs in the group's transaction: two requests
 * with one key in the same group run one after the other in it, so the
 * second replays the first. On libSQL it is one batch, no interactive
 * transaction: the key's record is read first, and the batch holds the
 * work's writes and the record with a guard that the key still has no live
 * record (another request with it, in the same batch or on another
 * instance, came first: the unit is planned again and replays it).
 * `options` (the unit's lane) go to the group commit.
 */
export async function runIdempotentPlanned<T>(
  deps: { commits: GroupCommit; clock: Clock },
  request: IdempotentRequest,
  plan: IdempotentPlan<T>,
  options: RunOptions = {},
): Promise<IdempotentResult<T>> {
  const keyed = keyOf(request);
  return await deps.commits.runPlanned(async (db, writes) => {
    if (keyed === undefined) {
      const out = await plan(db, writes);
      return () => ({ ...out, replayed: false });
    }
    const now = deps.clock.now();
    const replay = await replayOf<T>(db, request, keyed, now);
    if (replay) return () => replay;
    writes.expectRow(
      noLiveIdempotencyRecord(request.accountId, keyed.key, toDbTime(now)),
    );
    const out = await plan(db, writes);
    await saveRecord(writerOf(db, writes), request, keyed, out, now);
    return () => ({ ...out, replayed: false });
  }, options);
}
