/**
 * Reads the attempt rows of the deliveries whose jobs start together in one
 * statement: the worker pool starts the jobs of one claim in one synchronous
 * loop, so the reads asked for before the next microtask are one read
 * (findAttemptRows) instead of one each.
 */
import type { Executor } from "../../db/schema.ts";
import { type AttemptRow, findAttemptRows } from "./delivery_repo.ts";

interface Waiting {
  resolve: (row: AttemptRow | undefined) => void;
  reject: (err: unknown) => void;
}

export class AttemptReader {
  #db: Executor;
  #waiting = new Map<string, Waiting[]>();

  constructor(db: Executor) {
    this.#db = db;
  }

  /** The row of `id` (undefined when there is none), read with the others asked for in this turn. */
  read(id: string): Promise<AttemptRow | undefined> {
    return new Promise((resolve, reject) => {
      if (this.#waiting.size === 0) queueMicrotask(() => this.#flush());
      const list = this.#waiting.get(id);
      if (list) list.push({ resolve, reject });
      else this.#waiting.set(id, [{ resolve, reject }]);
    });
  }

  async #flush(): Promise<void> {
    const waiting = this.#waiting;
    this.#waiting = new Map();
    try {
      const rows = await findAttemptRows(this.#db, [...waiting.keys()]);
      for (const [id, list] of waiting) {
        for (const w of list) w.resolve(rows.get(id));
      }
    } catch (err) {
      for (const list of waiting.values()) {
        for (const w of list) w.reject(err);
      }
    }
  }
}

const readers = new WeakMap<Executor, AttemptReader>();

/** The reader of `db` (one per database handle). */
export function attemptReaderOf(db: Executor): AttemptReader {
  let reader = readers.get(db);
  if (!reader) {
    reader = new AttemptReader(db);
    readers.set(db, reader);
  }
  return reader;
}
