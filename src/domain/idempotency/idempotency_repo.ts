import { CompiledQuery } from "kysely";
import type { Executor, IdempotencyKeysTable } from "../../db/schema.ts";

/** A stored first response of an Idempotency-Key. */
export interface IdempotencyRecord {
  accountId: string;
  key: string;
  route: string;
  requestHash: string;
  responseStatus: number;
  /** The response data as JSON text. */
  responseBody: string;
  createdAt: string;
  expiresAt: string;
}

// Hot path of every keyed send: plain precompiled SQL, no query building.
const FIND_SQL = `select route, request_hash, response_status, response_body,
  created_at, expires_at from idempotency_keys where account_id = ? and key = ?`;

// An expired record of the same key is replaced in place.
const UPSERT_SQL = `insert into idempotency_keys (account_id, key, route,
  request_hash, response_status, response_body, created_at, expires_at)
  values (?, ?, ?, ?, ?, ?, ?, ?)
  on conflict (account_id, key) do update set route = excluded.route,
  request_hash = excluded.request_hash,
  response_status = excluded.response_status,
  response_body = excluded.response_body,
  created_at = excluded.created_at, expires_at = excluded.expires_at`;

type Row = Omit<IdempotencyKeysTable, "account_id" | "key">;

export async function findIdempotencyRecord(
  db: Executor,
  accountId: string,
  key: string,
): Promise<IdempotencyRecord | undefined> {
  const result = await db.executeQuery<Row>(
    CompiledQuery.raw(FIND_SQL, [accountId, key]),
  );
  const r = result.rows[0];
  return r
    ? {
      accountId,
      key,
      route: r.route,
      requestHash: r.request_hash,
      responseStatus: Number(r.response_status),
      responseBody: r.response_body,
      createdAt: r.created_at,
      expiresAt: r.expires_at,
    }
    : undefined;
}

/** Stores the record, replacing an (expired) one of the same key. */
export async function saveIdempotencyRecord(
  db: Executor,
  record: IdempotencyRecord,
): Promise<void> {
  await db.executeQuery(CompiledQuery.raw(UPSERT_SQL, [
    record.accountId,
    record.key,
    record.route,
    record.requestHash,
    record.responseStatus,
    record.responseBody,
    record.createdAt,
    record.expiresAt,
  ]));
}

/**
 * A guard of an atomic unit (expectRow) that finds a row while the key has
 * no record alive at `now`: a request that read none (or an expired one)
 * may do its work and store the record; one that came first wins.
 */
export function noLiveIdempotencyRecord(
  accountId: string,
  key: string,
  now: string,
): CompiledQuery<unknown> {
  return CompiledQuery.raw(
    `select 1 where not exists (select 1 from idempotency_keys
      where account_id = ? and key = ? and expires_at > ?)`,
    [accountId, key, now],
  );
}
