import { sql, type Transaction } from "kysely";
import type { Database, Db } from "./schema.ts";

/** One piece of work that must commit (or roll back) as a whole. */
export type WriteUnit<T> = (trx: Transaction<Database>) => Promise<T>;

interface Queued {
  unit: WriteUnit<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

type Result = { ok: true; value: unknown } | { ok: false; err: unknown };

/** Units gathered into one transaction at most. */
const MAX_UNITS = 64;

/**
 * Group commit: write units that arrive while a commit is running are
 * gathered and committed together in the next transaction, each inside its
 * own savepoint, so one unit's failure rolls back that unit alone. A unit's
 * promise settles only after its transaction committed (or failed), so
 * nothing is acknowledged before it is durable. On SQLite a commit is the
 * largest cost of a small write; this pays it once per batch.
 */
export class GroupCommit {
  #db: Db;
  #queue: Queued[] = [];
  #flushing = false;

  constructor(db: Db) {
    this.#db = db;
  }

  /** Runs `unit` in the next group transaction; resolves once that transaction committed. */
  run<T>(unit: WriteUnit<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({
        unit: unit as WriteUnit<unknown>,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      if (!this.#flushing) {
        this.#flushing = true;
        // Let the units that arrive in this turn of the event loop join in.
        setTimeout(() => this.#flush(), 0);
      }
    });
  }

  async #flush(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        await this.#commit(this.#queue.splice(0, MAX_UNITS));
      }
    } finally {
      this.#flushing = false;
    }
  }

  async #commit(batch: Queued[]): Promise<void> {
    const results: Result[] = [];
    try {
      await this.#db.transaction().execute(async (trx) => {
        for (const [i, item] of batch.entries()) {
          const name = sql.raw(`unit_${i}`);
          await sql`savepoint ${name}`.execute(trx);
          try {
            const value = await item.unit(trx);
            await sql`release ${name}`.execute(trx);
            results.push({ ok: true, value });
          } catch (err) {
            await sql`rollback to ${name}`.execute(trx);
            await sql`release ${name}`.execute(trx);
            results.push({ ok: false, err });
          }
        }
      });
    } catch (err) {
      for (const item of batch) item.reject(err);
      return;
    }
    batch.forEach((item, i) => {
      const r = results[i]!;
      if (r.ok) item.resolve(r.value);
      else item.reject(r.err);
    });
  }
}
