/** Benchmark numbers: flags, percentiles, a bounded concurrent load loop, the machine line. */
import { parseArgs } from "node:util";

/** Parses --concurrency/--duration style flags into numbers >= 0, with defaults. */
export function numberFlags<T extends Record<string, number>>(
  defaults: T,
): T {
  const { values } = parseArgs({
    args: Deno.args,
    options: Object.fromEntries(
      Object.keys(defaults).map((k) => [k, { type: "string" as const }]),
    ),
  });
  const out: Record<string, number> = { ...defaults };
  for (const [k, v] of Object.entries(values)) {
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) {
      throw new Error(`--${k} must be a number >= 0, got "${v}"`);
    }
    out[k] = n;
  }
  return out as T;
}

/** Nearest-rank percentile of unsorted values (p in 0..100); NaN when empty. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function summary(values: number[]): {
  p50: number;
  p90: number;
  p99: number;
  max: number;
} {
  return {
    p50: percentile(values, 50),
    p90: percentile(values, 90),
    p99: percentile(values, 99),
    // A loop, not Math.max(...values): spreading a few hundred thousand
    // values (a full pipeline run's webhook lags) overflows the stack.
    max: values.length ? values.reduce((a, b) => (b > a ? b : a)) : NaN,
  };
}

export function ms(value: number): string {
  return Number.isNaN(value) ? "n/a" : `${value.toFixed(1)} ms`;
}

export interface LoadResult {
  requests: number;
  errors: number;
  /** Latency of each successful request, ms. */
  latencies: number[];
  elapsedMs: number;
  /** Up to 5 distinct error descriptions. */
  errorSamples: string[];
}

/**
 * Runs `task(i)` from `concurrency` loops until the deadline or `maxRequests` (whichever first).
 * A task returns normally on success and throws (or returns an error text) on failure.
 */
export async function runLoad(opts: {
  concurrency: number;
  durationMs: number;
  maxRequests: number;
  task: (i: number) => Promise<string | void>;
}): Promise<LoadResult> {
  const started = performance.now();
  const deadline = started + opts.durationMs;
  let issued = 0;
  const result: LoadResult = {
    requests: 0,
    errors: 0,
    latencies: [],
    elapsedMs: 0,
    errorSamples: [],
  };
  const noteError = (text: string) => {
    result.errors++;
    if (
      result.errorSamples.length < 5 && !result.errorSamples.includes(text)
    ) {
      result.errorSamples.push(text);
    }
  };
  const loop = async () => {
    while (performance.now() < deadline && issued < opts.maxRequests) {
      const i = issued++;
      const t0 = performance.now();
      try {
        const problem = await opts.task(i);
        if (problem) noteError(problem);
        else result.latencies.push(performance.now() - t0);
      } catch (err) {
        noteError(String((err as Error)?.message ?? err));
      }
      result.requests++;
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, loop));
  result.elapsedMs = performance.now() - started;
  return result;
}

/** Deno version, cores, and the load average when there is one (other work on the host skews figures). */
export function machine(): string {
  let load = "";
  try {
    load = `, load avg ${
      Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ")
    }`;
  } catch { /* not Linux */ }
  return `Deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} cores, ${Deno.build.os}/${Deno.build.arch}${load}`;
}
