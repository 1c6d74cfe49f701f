// Another instance of the program on a harness's database (several
// instances on one libSQL server, or a second connection to an SQLite file).
import { loadConfig } from "../../src/config.ts";
import { type Container, createContainer } from "../../src/container.ts";
import { createLogger } from "../../src/log.ts";
import type { Harness } from "../_harness.ts";

/** A second container on `h`'s database, on `h`'s clock (dispose it). */
export function otherInstance(h: Harness): Container {
  return createContainer(
    loadConfig({
      DATA_DIR: h.dir,
      DATABASE_URL: h.container.config.databaseUrl,
      SECRET_KEY: "test-secret-key-0123456789abcdef-0123456789",
      LOG_LEVEL: "silent",
    }),
    { clock: h.clock, log: createLogger("silent") },
  );
}

/** On libSQL, db.transaction() throws from here on (not on SQLite). */
export function forbidTransactions(...on: Container[]): void {
  for (const c of on) if (c.dbBatch) c.dbBatch.forbidTransactions = true;
}

/** otherInstance(), both it and `h`'s forbidding transactions on libSQL. */
export function racingInstance(h: Harness): Container {
  const other = otherInstance(h);
  forbidTransactions(h.container, other);
  return other;
}

/**
 * Runs `between` once, just before this instance's next write batch goes to
 * sqld: a write of another instance after a unit's reads and before its
 * batch. Returns how many batches this instance sent meanwhile.
 */
export function beforeNextBatch(
  h: Harness,
  between: () => Promise<unknown>,
): { batches: number } {
  const access = h.container.dbBatch!;
  const batch = access.batch!;
  const seen = { batches: 0 };
  let pending: (() => Promise<unknown>) | undefined = between;
  access.batch = async (queries) => {
    seen.batches++;
    const run = pending;
    pending = undefined;
    if (run) await run();
    return await batch(queries);
  };
  return seen;
}
