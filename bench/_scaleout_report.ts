/**
 * The scale-out harness's figures, computed after a phase from what was
 * recorded (pure functions, tested in tests/bench/scaleout_report_test.ts):
 * the upstream's send log, the API samples, the database's view at the kill
 * and at the end. Past 300 lines because the definitions below and the
 * functions that implement them belong side by side.
 *
 * Definitions (docs/benchmarks.md, "The scale-out harness", says the same):
 * - A send is a request the strict upstream accepted; a duplicate is every
 *   accepted send of a message after its first. A queued message the upstream
 *   never accepted is unsent if the database still shows it queued at the
 *   end (the phase ended first), else lost.
 * - A number's rate is its sends after its first one, up to its last one or
 *   the end of the measured window (whichever comes first), divided by that
 *   span (n sends span n - 1 intervals; at least 1 s, else no rate); in a
 *   kill phase the recovery window is left out of both.
 * - The maximum in any 1 s window counts the sends with arrival times in
 *   (t - 1 s, t] for every t, the strict upstream's own rule.
 * - In flight at the kill: the victim's sends (the upstream accepted them;
 *   the victim made them all before it died, whenever the upstream read
 *   them) whose wamid the database never recorded for their message: the
 *   victim died between the upstream's answer and its record, or before the
 *   answer.
 *   Those are the only sends a rescue may repeat without a fault elsewhere.
 * - The victim's held jobs: send jobs running when it was killed under a
 *   worker (locked_by) that settled no send job after the kill, i.e. not a
 *   survivor's. One is handed back when the database first shows it no
 *   longer running under that worker (polled every 500 ms from the kill);
 *   its work is done when its message reaches the upstream after the kill,
 *   or, if it had reached it before (in flight), when its job is settled
 *   (finalized_at). Recovery is the time from the kill until the last held
 *   job's work was done.
 */
import type { SendRecord } from "./_strict_upstream.ts";

/** A rate over less than this says more about one burst than about a pace. */
const MIN_RATE_SPAN_MS = 1_000;
/** Float refills land a hair under a whole token. */
const EPSILON = 1e-9;

/** The largest number of `times` (ms) in any window (t - windowMs, t]. */
export function maxInWindow(times: number[], windowMs = 1_000): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while (sorted[start]! <= sorted[end]! - windowMs) start++;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

/**
 * Replays request times (ms, ascending) through the reference token bucket
 * of src/http/rate_limit.ts (capacity `limit`, refilled at limit/60 per s,
 * full at the first request): how many it admits, and at which times.
 */
export function referenceBucket(
  times: number[],
  limit: number,
): { admitted: number; admittedAt: number[] } {
  const perMs = limit / 60_000;
  let tokens = limit;
  let at = times[0] ?? 0;
  const admittedAt: number[] = [];
  for (const t of times) {
    tokens = Math.min(limit, tokens + Math.max(0, t - at) * perMs);
    at = Math.max(at, t);
    if (tokens >= 1 - EPSILON) {
      tokens -= 1;
      admittedAt.push(t);
    }
  }
  return { admitted: admittedAt.length, admittedAt };
}

/** Admissions (ms, ascending) the reference bucket would have refused: each one took a token it did not have. */
export function nonConformant(admitted: number[], limit: number): number {
  const perMs = limit / 60_000;
  let tokens = limit;
  let at = admitted[0] ?? 0;
  let excess = 0;
  for (const t of admitted) {
    tokens = Math.min(limit, tokens + Math.max(0, t - at) * perMs);
    at = Math.max(at, t);
    if (tokens >= 1 - EPSILON) tokens -= 1;
    else excess++;
  }
  return excess;
}

export interface NumberFigures {
  label: string;
  upstreamId: string;
  sends: number;
  /** Sends per second while backlogged (see the definitions above); NaN with nothing to measure. */
  rate: number;
  max1s: number;
  throttles: number;
  /** The longest silence between two sends after the kill (ms), in a kill phase. */
  gapAfterKillMs?: number;
}

/** Accepted sends of one phase, by message id, in arrival order. */
export function acceptedByMessage(
  records: SendRecord[],
): Map<string, SendRecord[]> {
  const out = new Map<string, SendRecord[]>();
  for (const r of records) {
    if (r.outcome !== "accepted" || r.messageId === null) continue;
    const list = out.get(r.messageId);
    if (list) list.push(r);
    else out.set(r.messageId, [r]);
  }
  for (const list of out.values()) list.sort((a, b) => a.t - b.t);
  return out;
}

/** Per-number rate, maximum in 1 s and throttles; `exclude` is a span (ms) left out of the rate. */
export function numberFigures(
  records: SendRecord[],
  number: { label: string; upstreamId: string },
  windowEnd: number,
  opts: { exclude?: [number, number]; killAt?: number } = {},
): NumberFigures {
  const mine = records.filter((r) => r.phoneNumberId === number.upstreamId);
  const sent = mine.filter((r) => r.outcome === "accepted").map((r) => r.t)
    .sort((a, b) => a - b);
  const throttles = mine.filter((r) => r.outcome === "throttled").length;
  const figures: NumberFigures = {
    ...number,
    sends: sent.length,
    rate: NaN,
    max1s: maxInWindow(sent),
    throttles,
  };
  if (sent.length >= 2) {
    const from = sent[0]!;
    const to = Math.min(sent[sent.length - 1]!, windowEnd);
    let span = to - from;
    // Sends after the first: n sends span n - 1 intervals.
    let count = sent.filter((t) => t > from && t <= to).length;
    const [a, b] = opts.exclude ?? [0, 0];
    if (b > a) {
      const lo = Math.max(a, from);
      const hi = Math.min(b, to);
      if (hi > lo) {
        span -= hi - lo;
        count -= sent.filter((t) => t >= lo && t <= hi).length;
      }
    }
    figures.rate = span >= MIN_RATE_SPAN_MS ? (count * 1000) / span : NaN;
  }
  if (opts.killAt !== undefined) {
    const after = sent.filter((t) => t >= opts.killAt!);
    let gap = after.length ? after[0]! - opts.killAt : 0;
    for (let i = 1; i < after.length; i++) {
      gap = Math.max(gap, after[i]! - after[i - 1]!);
    }
    figures.gapAfterKillMs = gap;
  }
  return figures;
}

export interface DuplicateFigures {
  /** Accepted sends beyond the first, summed over messages. */
  duplicates: number;
  /** Messages accepted more than once. */
  messages: string[];
  /** Campaign messages never accepted that the database shows still queued at the end. */
  unsent: number;
  /** The other campaign messages never accepted (all of them when the database could not be read). */
  lost: number;
}

/** Duplicates among the accepted sends, and the campaign messages the upstream never accepted (still queued, or lost). */
export function duplicateFigures(
  byMessage: Map<string, SendRecord[]>,
  campaign: Iterable<string>,
  stillQueued: Set<string> = new Set(),
): DuplicateFigures {
  let duplicates = 0;
  const messages: string[] = [];
  for (const [id, sends] of byMessage) {
    if (sends.length > 1) {
      duplicates += sends.length - 1;
      messages.push(id);
    }
  }
  let lost = 0;
  let unsent = 0;
  for (const id of campaign) {
    if (byMessage.has(id)) continue;
    if (stillQueued.has(id)) unsent++;
    else lost++;
  }
  return { duplicates, messages, unsent, lost };
}

export interface KillFigures {
  /** False when the database's messages could not be read (inFlight is then empty). */
  inFlightKnown: boolean;
  /** Message ids of the victim's accepted sends that the database never recorded. */
  inFlight: Set<string>;
  /** Of those, the ones whose answer left the upstream after the kill. */
  unanswered: number;
  /** Age at the kill of the oldest of them (ms). */
  oldestMs: number;
  /** Duplicated messages that were not in flight at the kill. */
  duplicatesOutside: number;
  /** Jobs the victim held at the kill, when they could be told. */
  held?: number;
  /** Kill to the last held job handed back (no longer running under the victim); Infinity when one never was. */
  handedBackMs?: number;
  /** Kill to the last held job's work done (see the definitions above); Infinity when one's never was. */
  recoveryMs?: number;
  /** Held jobs whose work was not done by the end. */
  unrecovered?: number;
  /** Held jobs whose message reached the upstream again after the kill. */
  resent?: number;
}

/** A job the victim held at the kill: when it was handed back and settled (finalized_at), if it was. */
export interface HeldJob {
  messageId: string;
  handedBackAt: number | null;
  settledAt: number | null;
}

/** In-flight sends, duplicates outside them and the recovery of a kill (see the definitions above). */
export function killFigures(
  byMessage: Map<string, SendRecord[]>,
  duplicated: string[],
  kill: { at: number; victim: string },
  /** undefined when the messages could not be read: nothing can be told in flight. */
  recordedWamid: Map<string, string | null> | undefined,
  held: HeldJob[] | undefined,
): KillFigures {
  const inFlight = new Set<string>();
  let unanswered = 0;
  let oldestMs = 0;
  for (const [id, sends] of byMessage) {
    for (const s of sends) {
      // Every send of the victim left it before it died, even one the
      // upstream read a moment after the kill signal: no time filter here.
      if (s.instance !== kill.victim) continue;
      if (!recordedWamid || recordedWamid.get(id) === s.wamid) continue;
      inFlight.add(id);
      if (s.done > kill.at) unanswered++;
      oldestMs = Math.max(oldestMs, kill.at - s.t);
    }
  }
  const figures: KillFigures = {
    inFlightKnown: recordedWamid !== undefined,
    inFlight,
    unanswered,
    oldestMs,
    duplicatesOutside: duplicated.filter((id) => !inFlight.has(id)).length,
  };
  if (held) {
    let back = 0;
    let last = 0;
    let unrecovered = 0;
    let resent = 0;
    for (const job of held) {
      back = Math.max(back, (job.handedBackAt ?? Infinity) - kill.at);
      const sends = byMessage.get(job.messageId) ?? [];
      const after = sends.find((s) => s.t > kill.at);
      if (after) resent++;
      // At the upstream after the kill; or, sent before it (in flight),
      // once its job was settled without sending it again.
      const done = after?.t ??
        (sends.length && job.settledAt !== null ? job.settledAt : null);
      if (done === null) unrecovered++;
      else last = Math.max(last, done - kill.at);
    }
    figures.held = held.length;
    figures.handedBackMs = back;
    figures.unrecovered = unrecovered;
    figures.resent = resent;
    figures.recoveryMs = unrecovered ? Infinity : last;
  }
  return figures;
}

export interface CronFigures {
  /** Minute ticks of jobs.rescue the phase spanned (at least one instance up). */
  expected: number;
  /** Of those, ticks with exactly one job that ran exactly once. */
  once: number;
  /** Rows per tick, most seen. */
  maxRows: number;
  /** Runs (claims) of one tick's job, most seen. */
  maxRuns: number;
  /** Every cron job, as "kind @ tick: state, runs". */
  seen: string[];
}

/** Cron jobs (unique key `cron:<kind>:<tick ISO>`) against the minute ticks in [from, to]. */
export function cronFigures(
  rows: { unique_key: string; state: string; attempt: number }[],
  from: number,
  to: number,
): CronFigures {
  const perTick = new Map<
    string,
    { rows: number; runs: number; state: string }
  >();
  for (const row of rows) {
    const entry = perTick.get(row.unique_key) ??
      { rows: 0, runs: 0, state: row.state };
    entry.rows++;
    entry.runs = Math.max(entry.runs, row.attempt);
    entry.state = row.state;
    perTick.set(row.unique_key, entry);
  }
  let expected = 0;
  let once = 0;
  for (let m = Math.ceil(from / 60_000) * 60_000; m <= to; m += 60_000) {
    expected++;
    const entry = perTick.get(`cron:jobs.rescue:${new Date(m).toISOString()}`);
    if (entry?.rows === 1 && entry.runs === 1 && entry.state === "completed") {
      once++;
    }
  }
  const values = [...perTick.values()];
  return {
    expected,
    once,
    maxRows: Math.max(0, ...values.map((v) => v.rows)),
    maxRuns: Math.max(0, ...values.map((v) => v.runs)),
    seen: [...perTick].map(([key, v]) =>
      `${key.slice(5)}: ${v.state}, ${v.runs} run${v.runs === 1 ? "" : "s"}`
    ),
  };
}

export interface LogFigures {
  errors: number;
  warnings: number;
  /** The most frequent error and warning messages, with their counts. */
  top: string[];
}

/** Counts the warn and error lines of the instances' JSON logs, grouped by message (and the error's own). */
export function logFigures(texts: string[]): LogFigures {
  const counts = new Map<string, number>();
  let errors = 0;
  let warnings = 0;
  for (const text of texts) {
    for (const line of text.split("\n")) {
      if (!line.startsWith("{")) continue;
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line);
      } catch {
        continue;
      }
      if (entry.level === "error") errors++;
      else if (entry.level === "warn") warnings++;
      else continue;
      const err = entry.err as { message?: string } | undefined;
      const key = `${entry.level}: ${entry.msg}${
        err?.message ? ` (${String(err.message).slice(0, 100)})` : ""
      }`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  const top = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 4)
    .map(([key, n]) => `${n} x ${key}`);
  return { errors, warnings, top };
}
