/**
 * A phase's figures and its targets (issue 30), from what runPhase
 * recorded; each target is PASS, FAIL or n/a (nothing to judge). Past 300
 * lines: every target sits here with the figures it reads.
 */
import { ms, percentile } from "./_bench_load.ts";
import type { PhaseRun } from "./_scaleout_phase.ts";
import type { ApiSample } from "./_scaleout_load.ts";
import type { Row } from "./_scaleout_db.ts";
import {
  acceptedByMessage,
  type CronFigures,
  cronFigures,
  type DuplicateFigures,
  duplicateFigures,
  type HeldJob,
  type KillFigures,
  killFigures,
  nonConformant,
  type NumberFigures,
  numberFigures,
  referenceBucket,
} from "./_scaleout_report.ts";

/** A target: pass true/false, or null when the phase gave nothing to judge. */
export interface Check {
  target: string;
  pass: boolean | null;
  detail: string;
}

export interface LimitFigures {
  requests: number;
  admitted: number;
  refused: number;
  errors: number;
  /** The reference bucket's admissions over the requests' start times and over their end times. */
  reference: [number, number];
  /** Admissions the reference bucket refuses when it replays only the admitted requests (start times). */
  nonConformant: number;
  spanMs: number;
}

export interface PhaseFigures {
  numbers: NumberFigures[];
  aggregateRate: number;
  /** Requests the upstream saw, and the sends it accepted. */
  upstreamRequests: number;
  sends: number;
  dup: DuplicateFigures;
  kill?: KillFigures;
  /** Failed requests (every kind), by reason, and the first of them. */
  failures: Record<string, number>;
  failedSamples: ApiSample[];
  requests: number;
  limit: LimitFigures;
  cron?: CronFigures;
}

/** The recovery window after the kill that the rate leaves out (20 s when recovery was not measured). */
const RECOVERY_TARGET_MS = 20_000;
const WRITE_WAIT_TARGET_MS = 1_000;

function expectedStatus(s: ApiSample): number[] {
  if (s.kind === "batch") return [202];
  if (s.kind === "write") return [201];
  if (s.kind === "limited") return [200, 429];
  return [200];
}

function failureOf(s: ApiSample): string | undefined {
  if (expectedStatus(s).includes(s.status)) return undefined;
  return s.failure ?? (s.status ? `HTTP ${s.status}` : "no answer");
}

/**
 * The send jobs the victim held at the kill (see _scaleout_report.ts), when
 * they can be told: the running ones whose worker is none of those that
 * settled a send job after the kill (the survivors' pools).
 */
function heldJobs(run: PhaseRun): HeldJob[] | undefined {
  const kill = run.events.kill;
  if (!kill?.running || !run.sendJobs) return undefined;
  const settledAt = (row: Row | undefined) =>
    typeof row?.finalized_at === "string" ? Date.parse(row.finalized_at) : null;
  const survivors = new Set(
    run.sendJobs.filter((j) => (settledAt(j) ?? 0) > kill.at)
      .map((j) => j.locked_by),
  );
  if (!survivors.size) return undefined;
  const jobs = new Map(run.sendJobs.map((r) => [r.unique_key, r]));
  return kill.running
    .filter((r) => !survivors.has(r.locked_by))
    .map((r) => ({
      messageId: String(r.unique_key).replace(/^message\.send:/, ""),
      handedBackAt: kill.handedBack.get(String(r.unique_key)) ?? null,
      settledAt: settledAt(jobs.get(r.unique_key)),
    }));
}

/** Every figure of a phase. */
export function phaseFigures(run: PhaseRun): PhaseFigures {
  const byMessage = acceptedByMessage(run.records);
  const dup = duplicateFigures(
    byMessage,
    run.campaign.ids.keys(),
    run.stillQueued,
  );
  let kill: KillFigures | undefined;
  let exclude: [number, number] | undefined;
  const killEvent = run.events.kill;
  if (killEvent) {
    kill = killFigures(
      byMessage,
      dup.messages,
      killEvent,
      run.recordedWamid,
      heldJobs(run),
    );
    const recovery = Number.isFinite(kill.recoveryMs ?? NaN)
      ? kill.recoveryMs!
      : RECOVERY_TARGET_MS;
    exclude = [killEvent.at, killEvent.at + recovery];
  }
  const numbers = run.channels.map((c) =>
    numberFigures(run.records, c, run.windowEnd, {
      exclude,
      killAt: killEvent?.at,
    })
  );
  const all = [...run.api, ...run.campaign.samples, ...run.limited];
  const failures: Record<string, number> = {};
  const failedSamples: ApiSample[] = [];
  for (const s of all.sort((a, b) => a.t - b.t)) {
    const why = failureOf(s);
    if (!why) continue;
    failures[why] = (failures[why] ?? 0) + 1;
    failedSamples.push(s);
  }
  return {
    numbers,
    aggregateRate: numbers.reduce((sum, n) => sum + (n.rate || 0), 0),
    upstreamRequests: run.records.length,
    sends: run.records.filter((r) => r.outcome === "accepted").length,
    dup,
    kill,
    failures,
    failedSamples,
    requests: all.length,
    limit: limitFigures(run.limited, run.settings.limitRate),
    cron: run.cronRows
      ? cronFigures(run.cronRows, run.upAt, run.readAt - 5_000)
      : undefined,
  };
}

function limitFigures(samples: ApiSample[], limit: number): LimitFigures {
  const answered = samples.filter((s) => s.status === 200 || s.status === 429);
  const starts = answered.map((s) => s.t).sort((a, b) => a - b);
  const ends = answered.map((s) => s.end).sort((a, b) => a - b);
  const admitted = answered.filter((s) => s.status === 200).map((s) => s.t)
    .sort((a, b) => a - b);
  const byStart = referenceBucket(starts, limit).admitted;
  const byEnd = referenceBucket(ends, limit).admitted;
  return {
    requests: samples.length,
    admitted: admitted.length,
    refused: answered.length - admitted.length,
    errors: samples.length - answered.length,
    reference: [Math.min(byStart, byEnd), Math.max(byStart, byEnd)],
    // Evidence beside the count: a few ms of latency can move one admission
    // past a refill here, so the target is judged on the count.
    nonConformant: nonConformant(admitted, limit),
    spanMs: starts.length ? starts[starts.length - 1]! - starts[0]! : 0,
  };
}

function pct(value: number, of: number): string {
  return `${((value * 100) / of).toFixed(0)} %`;
}

/** The phase's targets. */
export function phaseChecks(run: PhaseRun, f: PhaseFigures): Check[] {
  const rate = run.settings.rate;
  const checks: Check[] = [];
  const add = (target: string, pass: boolean | null, detail: string) =>
    checks.push({ target, pass, detail });
  if (run.status !== "ok") {
    add(
      "phase ran to its end",
      false,
      // The first note says why (the wedge); the others are printed above.
      `${run.status}${run.notes[0] ? `: ${run.notes[0]}` : ""}`,
    );
  }
  const sending = f.numbers.filter((n) => Number.isFinite(n.rate));
  add(
    `each number >= 95 % of ${rate}/s${
      f.kill ? " (outside the recovery)" : ""
    }`,
    sending.length ? sending.every((n) => n.rate >= 0.95 * rate) : null,
    f.numbers.map((n) =>
      `${n.label} ${Number.isFinite(n.rate) ? pct(n.rate, rate) : "n/a"}`
    ).join(", "),
  );
  const throttles = f.numbers.reduce((sum, n) => sum + n.throttles, 0);
  add("0 throttles (130429)", throttles === 0, String(throttles));
  const max1s = Math.max(0, ...f.numbers.map((n) => n.max1s));
  add(`max in any 1 s window <= ${rate}`, max1s <= rate, String(max1s));
  add(
    "0 lost",
    // Without the database, a message never sent may be lost or still queued.
    f.dup.lost === 0 ? true : run.stillQueued ? false : null,
    run.stillQueued
      ? `${f.dup.lost} of ${run.campaign.ids.size}; ${f.dup.unsent} still queued when the phase ended`
      : `${f.dup.lost} of ${run.campaign.ids.size} never reached the upstream; the database could not be read to tell lost from still queued`,
  );
  const outside = f.kill ? f.kill.duplicatesOutside : f.dup.messages.length;
  add(
    f.kill
      ? "duplicates only among the sends in flight at the kill"
      : "0 duplicates",
    f.kill && !f.kill.inFlightKnown ? null : outside === 0,
    f.kill
      ? `${f.dup.duplicates} duplicate sends of ${f.dup.messages.length} messages, ${outside} of those not in flight (${f.kill.inFlight.size} in flight)`
      : `${f.dup.duplicates} duplicate sends of ${f.dup.messages.length} messages`,
  );
  if (f.kill) killChecks(run, f.kill, f, add);
  if (run.name === "restart") {
    const failed = Object.values(f.failures).reduce((a, b) => a + b, 0);
    add("0 failed requests", failed === 0, `${failed} of ${f.requests}`);
  }
  if (f.cron) {
    add(
      "cron: exactly one run per tick",
      f.cron.expected
        ? f.cron.once === f.cron.expected && f.cron.maxRows <= 1 &&
          f.cron.maxRuns <= 1
        : null,
      `${f.cron.once} of ${f.cron.expected} ticks`,
    );
  }
  const l = f.limit;
  add(
    `rate limit: admitted = reference bucket`,
    l.requests
      ? l.admitted >= l.reference[0] && l.admitted <= l.reference[1]
      : null,
    `${l.admitted} admitted, reference ${l.reference[0]}-${
      l.reference[1]
    }; replaying the admitted ones, the bucket refuses ${l.nonConformant}`,
  );

  if (run.sqld) {
    const h = run.sqld;
    add(
      "sqld under 5 % CPU within 5 s after the load (instances up)",
      h.underFiveAtS !== undefined,
      h.afterLoadPct.map((p) => p.toFixed(1)).join(", ") + " % (1 s samples" +
        (run.drained
          ? ")"
          : "; the instances were still sending the campaign)"),
    );
    add(
      "sqld under 5 % CPU once no instance is left (not wedged)",
      h.noClientsPct < 5 && h.noClientsProbeMs < 1000,
      `${h.noClientsPct.toFixed(1)} %, write ${ms(h.noClientsProbeMs)}`,
    );
    add(
      "sqld answers a write in under 1 s after the load",
      h.afterLoadProbeMs < 1000,
      ms(h.afterLoadProbeMs),
    );
  }
  return checks;
}

function killChecks(
  run: PhaseRun,
  k: KillFigures,
  f: PhaseFigures,
  add: (target: string, pass: boolean | null, detail: string) => void,
): void {
  const at = run.events.kill!.at;
  const gap = Math.max(0, ...f.numbers.map((n) => n.gapAfterKillMs ?? 0));
  const recovery = k.recoveryMs;
  add(
    "the victim's work at the upstream within 20 s",
    recovery === undefined
      ? null
      : recovery <= RECOVERY_TARGET_MS && gap <= RECOVERY_TARGET_MS,
    `${
      recovery === undefined
        ? "held jobs unknown"
        : Number.isFinite(recovery)
        ? `the held jobs' work done ${
          ms(recovery)
        } after the kill (handed back after ${ms(k.handedBackMs ?? NaN)})`
        : "the held jobs' work not all done by the end"
    }; longest silence of a number ${ms(gap)}`,
  );
  // Every write started in the 20 s, answered or not: one that failed after
  // 15 s waited 15 s; one refused at once by the dead instance did not wait.
  const started = run.api.filter((s) =>
    s.kind === "write" && s.t >= at && s.t <= at + RECOVERY_TARGET_MS
  );
  const writes = started.map((s) => s.end - s.t);
  const failed = started.filter((s) => s.status !== 201).length;
  const probes = run.probes.filter((p) =>
    p.t >= at && p.t <= at + RECOVERY_TARGET_MS
  )
    .map((p) => p.ms);
  const worst = Math.max(0, ...writes, ...probes);
  add(
    "no write waits more than 1 s after the kill",
    writes.length + probes.length ? worst <= WRITE_WAIT_TARGET_MS : null,
    `${writes.length} API writes, max ${ms(Math.max(0, ...writes))} (p99 ${
      ms(percentile(writes, 99))
    }, ${failed} failed), probe writes max ${ms(Math.max(0, ...probes))}`,
  );
}
