// Which database errors say "busy, nothing written: try again", for the
// writers that retry them (src/db/write_slots.ts) and for the HTTP error
// handler, which answers what is left after the retries with a 503 the
// client retries instead of a 500. No I/O: any layer may import it.

/**
 * A libSQL error worth trying again after a pause: nothing was written.
 * SQLITE_BUSY (sqld's connections wait 100 ms for the lock, then give up,
 * even for autocommit statements), TRANSACTION_TIMEOUT (sqld took the lock
 * back after 5 s) and HTTP 429 (sqld's request limit).
 */
export function isRetryableLibsqlError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; cause?: unknown };
  const code = typeof e?.code === "string" ? e.code : "";
  if (/^SQLITE_BUSY|^SQLITE_LOCKED|TRANSACTION_TIMEOUT/.test(code)) return true;
  const status = (e?.cause as { status?: unknown } | undefined)?.status;
  if (status === 429) return true;
  const message = typeof e?.message === "string" ? e.message : "";
  return /database is locked|TRANSACTION_TIMEOUT|\b429\b/i.test(message);
}

const SQLITE_BUSY = 5;

/**
 * SQLITE_BUSY (5, or an extended code built on it), as node:sqlite reports
 * it on a prepared statement's error (`exec` gives no errcode).
 */
export function isSqliteBusy(err: unknown): boolean {
  const code = (err as { errcode?: unknown } | null)?.errcode;
  return typeof code === "number" && (code & 0xff) === SQLITE_BUSY;
}

/** The database was busy (either engine) and nothing was written: a retry may succeed. */
export function isDatabaseBusy(err: unknown): boolean {
  return isSqliteBusy(err) || isRetryableLibsqlError(err);
}
