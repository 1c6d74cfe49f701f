// deno-lint-ignore-file no-console
/**
 * The SQLite statements a benchmark's process runs, counted and (when
 * `timed`) timed by text: node:sqlite runs each synchronously, so the wall
 * time inside the call is its cost. Installed once per process, before the
 * statements to watch (it wraps StatementSync's methods).
 */
import { aroundStatements } from "../tests/_support/statements.ts";

interface Seen {
  n: number;
  ms: number;
  max: number;
}

export class StatementTimer {
  /** Statements run since the timer was installed. */
  count = 0;
  /** Since the last take(): by text, how many and the time spent in them. */
  #seen = new Map<string, Seen>();

  constructor(readonly timed: boolean) {
    aroundStatements((statement, run) => {
      this.count++;
      if (!this.timed) return run();
      const started = performance.now();
      try {
        return run();
      } finally {
        this.#add(statement.sourceSQL, performance.now() - started);
      }
    });
  }

  #add(sqlText: string, ms: number): void {
    const key = sqlText.replace(/\s+/g, " ").slice(0, 70);
    const entry = this.#seen.get(key) ?? { n: 0, ms: 0, max: 0 };
    entry.n++;
    entry.ms += ms;
    entry.max = Math.max(entry.max, ms);
    this.#seen.set(key, entry);
  }

  /** Takes what was seen since the last take (and forgets it). */
  take(): Map<string, Seen> {
    const out = this.#seen;
    this.#seen = new Map();
    return out;
  }
}

/**
 * Statements by text, most time first: per `unit` (a delivered webhook, a
 * callback), how many ran and the time spent in them, then their sum.
 */
export function printStatements(
  label: string,
  seen: ReadonlyMap<string, Seen>,
  units: number,
  unit: string,
): void {
  console.log(`  ${label} statements, per ${unit}:`);
  let total = 0;
  for (
    const [text, { n, ms, max }] of [...seen].sort((a, b) => b[1].ms - a[1].ms)
  ) {
    total += ms;
    console.log(
      `    ${(n / units).toFixed(3)} x, ${
        (ms * 1000 / units).toFixed(1).padStart(5)
      } us (longest ${max.toFixed(1)} ms)  ${text}`,
    );
  }
  console.log(`    in all ${(total * 1000 / units).toFixed(1)} us per ${unit}`);
}
