// deno-lint-ignore-file no-console
/**
 * The SQLite statements a benchmark's process runs, counted and (when
 * `timed`) timed by text: node:sqlite runs each synchronously, so the wall
 * time inside the call is its cost. Installed once per process, before the
 * statements to watch (it wraps StatementSync's methods).
 */
import { StatementSync } from "node:sqlite";

interface Seen {
  n: number;
  ms: number;
  max: number;
}

export class StatementTimer {
  /** Statements run since the timer was installed. */
  count = 0;
  /** Since the last clear(): by text, how many and the time spent in them. */
  readonly seen = new Map<string, Seen>();

  constructor(readonly timed: boolean) {
    const ran = () => this.count++;
    const add = (sqlText: string, ms: number) => this.#add(sqlText, ms);
    // deno-lint-ignore no-explicit-any
    const proto = StatementSync.prototype as any;
    for (const m of ["all", "run", "get", "iterate"]) {
      const original = proto[m];
      proto[m] = timed
        ? function (this: StatementSync, ...args: unknown[]) {
          ran();
          const started = performance.now();
          try {
            return original.apply(this, args);
          } finally {
            add(this.sourceSQL, performance.now() - started);
          }
        }
        : function (this: StatementSync, ...args: unknown[]) {
          ran();
          return original.apply(this, args);
        };
    }
  }

  #add(sqlText: string, ms: number): void {
    const key = sqlText.replace(/\s+/g, " ").slice(0, 70);
    const entry = this.seen.get(key) ?? { n: 0, ms: 0, max: 0 };
    entry.n++;
    entry.ms += ms;
    entry.max = Math.max(entry.max, ms);
    this.seen.set(key, entry);
  }

  /** Takes what was seen since the last take (and forgets it). */
  take(): Map<string, Seen> {
    const out = new Map(this.seen);
    this.seen.clear();
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
