/** The scale-out harness's printed report: one block per phase, then the side-by-side table and the cross-phase target. */
import { ms, percentile } from "./_bench_load.ts";
import type { Check, PhaseFigures } from "./_scaleout_checks.ts";
import type { PhaseRun } from "./_scaleout_phase.ts";

function s1(msValue: number): string {
  return Number.isFinite(msValue)
    ? `${(msValue / 1000).toFixed(1)} s`
    : "never";
}

function clock(at: number): string {
  return new Date(at).toISOString().slice(11, 19);
}

function verdict(pass: boolean | null): string {
  return pass === null ? " n/a" : pass ? "PASS" : "FAIL";
}

/** The lines of one phase. */
export function formatPhase(
  run: PhaseRun,
  f: PhaseFigures,
  checks: Check[],
): string[] {
  const s = run.settings;
  const c = run.campaign;
  const out: string[] = [];
  const line = (label: string, text: string) =>
    out.push(`  ${label.padEnd(15)} ${text}`);
  const measured = (run.windowEnd - run.t0) / 1000;
  const span = measured < s.duration - 0.5
    ? `${measured.toFixed(1)} s of ${s.duration}`
    : `${s.duration} s`;
  out.push(
    `== ${run.name}: ${run.title} (${span} measured; ${run.status}${
      run.loadAvg ? `; load avg ${run.loadAvg} at its end` : ""
    })`,
  );
  for (const note of run.notes) line("note", note);
  const batchFails = c.samples.filter((x) => x.status !== 202).length;
  line(
    "campaign",
    `${c.ids.size} of ${c.wanted} queued (${batchFails} of ${c.samples.length} batch requests failed, ${c.refusedItems} items refused), enqueued ${
      s1(c.doneAt - run.t0)
    } into the window`,
  );
  line(
    "per number",
    f.numbers.map((n) =>
      `${n.label} ${
        Number.isFinite(n.rate)
          ? `${n.rate.toFixed(1)}/s (${((n.rate * 100) / s.rate).toFixed(0)} %)`
          : "n/a"
      }, max in 1 s ${n.max1s}, ${n.throttles} throttles`
    ).join("; "),
  );
  line(
    "upstream",
    `${f.sends} sends accepted of ${f.upstreamRequests} requests; aggregate ${
      f.aggregateRate.toFixed(1)
    }/s`,
  );
  line(
    "duplicates",
    `${f.dup.duplicates} (${f.dup.messages.length} messages); never sent: ${f.dup.unsent} still queued at the end, ${f.dup.lost} lost`,
  );
  if (run.statuses) {
    line(
      "messages",
      Object.entries(run.statuses).map(([k, v]) => `${v} ${k}`).join(", ") +
        ` (${s.statuses} status callbacks per send)`,
    );
  }
  const kill = run.events.kill;
  if (kill && f.kill) {
    const k = f.kill;
    line(
      "kill",
      `instance ${kill.victim} at ${s1(kill.at - run.t0)}; in flight ${
        k.inFlightKnown ? k.inFlight.size : "unknown"
      } (answered after the kill ${k.unanswered}, oldest sent ${
        ms(k.oldestMs)
      } before it); duplicates outside them ${k.duplicatesOutside}`,
    );
    line(
      "recovery",
      k.held === undefined
        ? `held jobs unknown${
          kill.runningError ? `: ${kill.runningError}` : ""
        }`
        : `${kill.running?.length} send jobs were running at the kill, ${k.held} of them the victim's: the last handed back ${
          s1(k.handedBackMs!)
        } after the kill, the last one's work done ${
          s1(k.recoveryMs!)
        } after it (${k.unrecovered} never; ${k.resent} sent again)`,
    );
  }
  const p = run.events.pause;
  if (p) {
    line(
      "pause",
      `instance ${p.instance} stopped at ${s1(p.at - run.t0)} for ${
        s1(p.until - p.at)
      }`,
    );
  }
  for (const r of run.events.restarts ?? []) {
    line(
      "restart",
      `instance ${r.instance} at ${s1(r.at - run.t0)}: exited in ${
        s1(r.exitMs)
      }${r.killed ? " (SIGKILLed)" : ""}, ready again ${
        s1(r.backMs)
      } after SIGTERM${r.error ? `; ${r.error}` : ""}`,
    );
  }
  const failed = Object.values(f.failures).reduce((a, b) => a + b, 0);
  const reasons = Object.entries(f.failures).map(([k, v]) => `${v} ${k}`).join(
    ", ",
  );
  line(
    "requests",
    `${f.requests}, ${failed} failed${reasons ? ` (${reasons})` : ""}`,
  );
  for (const x of f.failedSamples.slice(0, 5)) {
    line(
      "  failed",
      `${x.kind} at ${s1(x.t - run.t0)}: ${x.failure ?? `HTTP ${x.status}`}${
        x.status ? ` (HTTP ${x.status})` : ""
      } after ${ms(x.end - x.t)}`,
    );
  }
  const lat = (kind: string) => {
    const v = run.api.filter((x) =>
      x.kind === kind && x.status < 300 && x.status > 0
    )
      .map((x) => x.end - x.t);
    return `p50 ${ms(percentile(v, 50))} p99 ${ms(percentile(v, 99))} max ${
      ms(Math.max(0, ...v))
    }`;
  };
  line(
    "API load",
    `${s.apiRate}/s: reads ${lat("read")}; writes ${lat("write")}`,
  );
  const l = f.limit;
  line(
    "rate limit",
    `key at ${s.limitRate}/min, ${l.requests} requests over ${
      s1(l.spanMs)
    }: ${l.admitted} admitted, ${l.refused} refused, ${l.errors} errors; reference bucket ${
      l.reference[0]
    }${
      l.reference[1] !== l.reference[0] ? `-${l.reference[1]}` : ""
    }; replaying only the admitted ones, it refuses ${l.nonConformant}`,
  );
  if (f.cron) {
    line(
      "cron",
      `${f.cron.expected} minute ticks of jobs.rescue from ${
        clock(run.upAt)
      } to ${
        clock(run.readAt - 5_000)
      }, ${f.cron.once} ran exactly once; per tick at most ${f.cron.maxRows} jobs, ${f.cron.maxRuns} runs [${
        f.cron.seen.join("; ")
      }]`,
    );
  }
  if (run.probes.length) {
    const v = run.probes.map((x) => x.ms);
    line(
      "probe writes",
      `${v.length}, p50 ${ms(percentile(v, 50))} p99 ${
        ms(percentile(v, 99))
      } max ${ms(Math.max(...v))}`,
    );
  }
  if (run.sqld) {
    const h = run.sqld;
    line(
      "sqld",
      `CPU during the load ${
        h.cpuDuringPct.toFixed(0)
      } %; after it (1 s samples${
        run.drained ? "" : ", the instances still sending the campaign"
      }) ${h.afterLoadPct.map((x) => x.toFixed(1)).join(", ")} %, write ${
        ms(h.afterLoadProbeMs)
      }; with no instance left ${h.noClientsPct.toFixed(1)} %, write ${
        ms(h.noClientsProbeMs)
      }`,
    );
  }
  if (run.serverLog) {
    const g = run.serverLog;
    line("server log", `${g.errors} errors, ${g.warnings} warnings`);
    for (const t of g.top) line("", t);
  }
  out.push("  targets");
  for (const c of checks) {
    out.push(`    ${verdict(c.pass)}  ${c.target}: ${c.detail}`);
  }
  return out;
}

export interface PhaseOutcome {
  name: string;
  title: string;
  /** ok, wedged, deadline. */
  status?: string;
  figures?: PhaseFigures;
  checks: Check[];
  error?: string;
}

/** The side-by-side table and the aggregate-throughput target. */
export function formatSummary(
  outcomes: PhaseOutcome[],
  rate: number,
): string[] {
  const rows: string[][] = [[
    "phase",
    "status",
    `rate per number (of ${rate}/s)`,
    "max 1 s",
    "throttles",
    "dup",
    "lost",
    "unsent",
    "failed req",
    "admitted (ref)",
    "targets failed",
  ]];
  const notes: string[] = [];
  for (const o of outcomes) {
    const f = o.figures;
    if (!f) {
      notes.push(`  ${o.name}: ${(o.error ?? "no figures").split("\n")[0]}`);
      continue;
    }
    const failed = Object.values(f.failures).reduce((a, b) => a + b, 0);
    rows.push([
      o.name,
      o.status ?? "",
      f.numbers.map((n) =>
        Number.isFinite(n.rate)
          ? `${((n.rate * 100) / rate).toFixed(0)}%`
          : "n/a"
      ).join(" "),
      String(Math.max(0, ...f.numbers.map((n) => n.max1s))),
      String(f.numbers.reduce((a, n) => a + n.throttles, 0)),
      String(f.dup.duplicates),
      String(f.dup.lost),
      String(f.dup.unsent),
      String(failed),
      `${f.limit.admitted} (${f.limit.reference[0]})`,
      `${o.checks.filter((c) => c.pass === false).length} of ${
        o.checks.filter((c) => c.pass !== null).length
      }`,
    ]);
  }
  const widths = rows[0]!.map((_, i) =>
    Math.max(...rows.map((r) => r[i]!.length))
  );
  const out = ["== side by side"];
  for (const r of rows) {
    out.push("  " + r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd());
  }
  out.push(...notes);
  const sqld1 = outcomes.find((o) => o.name === "sqld1");
  const sqld3 = outcomes.find((o) => o.name === "sqld3");
  const one = sqld1?.figures;
  const three = sqld3?.figures;
  if (one && three) {
    // A phase cut short by a wedge compares nothing.
    const judged = sqld1.status === "ok" && sqld3.status === "ok";
    const pass = three.aggregateRate >= 0.9 * one.aggregateRate;
    out.push(
      `  ${
        judged ? (pass ? "PASS" : "FAIL") : " n/a"
      }  3 instances on sqld >= 0.9 x 1 instance: ${
        three.aggregateRate.toFixed(1)
      }/s vs ${one.aggregateRate.toFixed(1)}/s (${
        (three.aggregateRate / Math.max(1e-9, one.aggregateRate)).toFixed(2)
      } x)`,
    );
  }
  return out;
}
