/**
 * What the scale-out harness watches while a phase runs: the strict
 * upstream's log (pulled incrementally), and on sqld a write probe every
 * second with sqld's CPU, which is how a wedged sqld (every write hanging,
 * CPU spinning: reference/scale-out.md §1.6) is told from a slow one.
 */
import { cpuMs } from "./_bench_serve.ts";
import { type HarnessDb, probeWrite } from "./_scaleout_db.ts";
import { nowMs, type SendRecord } from "./_strict_upstream.ts";

const PROBE_EVERY_MS = 1_000;
const PROBE_TIMEOUT_MS = 5_000;
/** sqld CPU (% of one core) that, with writes timing out, means it spins instead of working. */
const SPINNING_PCT = 100;
/** Probe writes lost in a row that end a phase: with sqld spinning, and whatever it does. */
const SPINNING_PROBES = 2;
const STALLED_PROBES = 6;

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted || ms <= 0) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** sqld's CPU over `ms` of wall time, in % of one core. */
export async function cpuPercent(pid: number, ms: number): Promise<number> {
  const c0 = cpuMs(pid);
  const w0 = performance.now();
  await pause(ms);
  return ((cpuMs(pid) - c0) * 100) / (performance.now() - w0);
}

/** The strict upstream's records of this phase, pulled as they come. */
export class UpstreamLog {
  readonly records: SendRecord[] = [];
  readonly accepted = new Set<string>();
  #url: string;

  constructor(url: string) {
    this.#url = url;
  }

  async poll(): Promise<void> {
    const res = await fetch(
      `${this.#url}/_strict/log?from=${this.records.length}`,
      { signal: AbortSignal.timeout(30_000) },
    );
    const { records } = await res.json() as { records: SendRecord[] };
    for (const r of records) {
      this.records.push(r);
      if (r.outcome === "accepted" && r.messageId) {
        this.accepted.add(r.messageId);
      }
    }
  }
}

export interface Probe {
  t: number;
  ms: number;
}

/** Probes sqld's writes every second until stop(); aborts `abort` with "wedged" when sqld wedges. */
export class SqldMonitor {
  readonly probes: Probe[] = [];
  wedgedAt: number | undefined;
  wedgeNote = "";
  #stopped = false;
  #loop: Promise<void>;

  #everyMs: number;
  #timeoutMs: number;

  /** `timing` shortens the probe's period and deadline (tests). */
  constructor(
    db: HarnessDb,
    pid: number,
    abort: AbortController,
    timing: { everyMs?: number; timeoutMs?: number } = {},
  ) {
    this.#everyMs = timing.everyMs ?? PROBE_EVERY_MS;
    this.#timeoutMs = timing.timeoutMs ?? PROBE_TIMEOUT_MS;
    this.#loop = this.#run(db, pid, abort);
  }

  async #run(db: HarnessDb, pid: number, abort: AbortController) {
    let timeouts = 0;
    while (!this.#stopped) {
      const t = nowMs();
      const c0 = cpuMs(pid);
      const probe = await probeWrite(db, this.#timeoutMs);
      const cpu = ((cpuMs(pid) - c0) * 100) / Math.max(1, nowMs() - t);
      this.probes.push({ t, ms: probe.ms });
      timeouts = probe.ms === Infinity ? timeouts + 1 : 0;
      // Two writes lost in a row with sqld spinning (the wedge), or six
      // whatever it does: no write has gone through for 10 s, or 30 s (by
      // default), the phase cannot go on. A machine so loaded that probes
      // take seconds does not end a phase on its own.
      if (
        timeouts >= STALLED_PROBES ||
        (timeouts >= SPINNING_PROBES && cpu > SPINNING_PCT)
      ) {
        this.wedgedAt = t;
        this.wedgeNote =
          `${timeouts} probe writes in a row got no answer within ${
            this.#timeoutMs / 1000
          } s; sqld at ${cpu.toFixed(0)} % CPU${
            probe.error ? ` (${probe.error.slice(0, 80)})` : ""
          }`;
        abort.abort("wedged");
        return;
      }
      await pause(this.#everyMs - (nowMs() - t));
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#loop;
  }
}
