import type { Db, Executor } from "../../db/schema.ts";
import type { Clock } from "../../clock.ts";
import { AppError } from "../../errors.ts";
import { sha256Hex } from "../../crypto.ts";
import { fromJson, toJson } from "../../db/json.ts";
import { addMs, toDbTime } from "../../db/time.ts";

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const KEY_REGEXP = /^[\x21-\x7e]{1,255}$/;

export interface IdempotentResult<T> {
  status: number;
  data: T;
  replayed: boolean;
}

/** Stable hash of a request: the route plus the JSON body with sorted keys. */
export async function requestHash(
  route: string,
  body: unknown,
): Promise<string> {
  return await sha256Hex(`${route}\n${canonicalJson(body)}`);
}

type Piece = { text: string } | { value: unknown };

/**
 * JSON with sorted keys, written with an explicit stack instead of recursion:
 * it hashes bodies before their fields are validated (batch items), so any
 * nesting the JSON parser accepted must not overflow the call stack here.
 */
export function canonicalJson(root: unknown): string {
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

/**
 * Runs `work` in one transaction together with the idempotency record, so a
 * key is stored exactly when the work committed. Same key and body replays
 * the first response; same key and another body is IDEMPOTENCY_KEY_REUSED.
 */
export async function runIdempotent<T>(
  deps: { db: Db; clock: Clock },
  request: {
    accountId: string;
    key: string | undefined;
    route: string;
    body: unknown;
  },
  work: (trx: Executor) => Promise<{ status: number; data: T }>,
): Promise<IdempotentResult<T>> {
  const key = request.key;
  if (key === undefined) {
    const out = await deps.db.transaction().execute(work);
    return { ...out, replayed: false };
  }
  if (!KEY_REGEXP.test(key)) {
    throw new AppError(
      "VALIDATION_ERROR",
      'Invalid header "Idempotency-Key": use 1 to 255 printable ASCII characters',
    );
  }
  const hash = await requestHash(request.route, request.body);
  return await deps.db.transaction().execute(async (trx) => {
    const now = deps.clock.now();
    const existing = await trx.selectFrom("idempotency_keys").selectAll()
      .where("account_id", "=", request.accountId).where("key", "=", key)
      .executeTakeFirst();
    if (existing && existing.expires_at > toDbTime(now)) {
      if (existing.request_hash !== hash || existing.route !== request.route) {
        throw new AppError(
          "IDEMPOTENCY_KEY_REUSED",
          `Idempotency-Key "${key}" was already used with a different request`,
        );
      }
      return {
        status: existing.response_status,
        data: fromJson<T>(existing.response_body, null as T),
        replayed: true,
      };
    }
    if (existing) {
      await trx.deleteFrom("idempotency_keys")
        .where("account_id", "=", request.accountId).where("key", "=", key)
        .execute();
    }
    const out = await work(trx);
    await trx.insertInto("idempotency_keys").values({
      account_id: request.accountId,
      key,
      route: request.route,
      request_hash: hash,
      response_status: out.status,
      response_body: toJson(out.data),
      created_at: toDbTime(now),
      expires_at: toDbTime(addMs(now, IDEMPOTENCY_TTL_MS)),
    }).execute();
    return { ...out, replayed: false };
  });
}
