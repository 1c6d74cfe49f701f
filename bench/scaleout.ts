// deno-lint-ignore-file no-console
/**
 * The scale-out harness (issue 30): `serve` instances on embedded SQLite or
 * on one `sqld`, behind a round-robin proxy that follows /readyz and never
 * retries (_lb.ts), sending a campaign to a strict upstream that allows
 * `--rate` sends per number in any sliding second and records every send
 * (_strict_upstream.ts). Each phase runs on a fresh database; it prints per
 * phase the per-number rate and its maximum in any 1 s window, throttles,
 * duplicates (and the sends in flight at a kill), lost messages, the
 * recovery after a kill, failed requests, the rate-limited key's admissions
 * against a reference bucket, cron runs per tick and sqld's CPU and write
 * latency after the load, with PASS/FAIL per target, then a side-by-side
 * table. See docs/benchmarks.md, "The scale-out harness".
 *
 *   deno run -A bench/scaleout.ts [--phases embedded,sqld1,sqld3,kill,pause,restart]
 *     [--duration 60] [--numbers 3] [--rate 80] [--messages <per number; rate x duration>]
 *     [--api-rate 20] [--statuses 0] [--drain 90] [--pause 20]
 *     [--limit-rate 30] [--limit-requests 90] [--dump <dir>]
 */
import { parseArgs } from "node:util";
import { machine } from "./_bench_load.ts";
import { sqldBinary } from "../tests/_support/sqld.ts";
import { within } from "../tests/e2e/_process.ts";
import {
  type Helper,
  startHelper,
  stopAllClusters,
} from "./_scaleout_cluster.ts";
import {
  type HarnessSettings,
  phaseBudgetMs,
  type PhaseName,
  type PhaseRun,
  PHASES,
  runPhase,
} from "./_scaleout_phase.ts";
import { phaseChecks, phaseFigures } from "./_scaleout_checks.ts";
import {
  formatPhase,
  formatSummary,
  type PhaseOutcome,
} from "./_scaleout_print.ts";

const APP_SECRET = "scaleout-app-secret";

export interface ScaleoutOptions {
  phases: PhaseName[];
  duration: number;
  numbers: number;
  rate: number;
  /** Campaign messages per number; default rate x duration. */
  messages?: number;
  apiRate: number;
  statuses: number;
  drain: number;
  pause: number;
  limitRate: number;
  limitRequests: number;
  /** A directory to write each phase's raw record to (<phase>.json), for a closer look. */
  dump?: string;
  /** Where the report goes, line by line (stdout by default). */
  print?: (line: string) => void;
  /** Progress (stderr by default). */
  log?: (line: string) => void;
}

export interface ScaleoutResult extends PhaseOutcome {
  run?: PhaseRun;
}

/** Runs the phases one after the other and prints each as it ends; sqld phases are skipped without sqld. */
export async function runScaleout(
  opts: ScaleoutOptions,
): Promise<ScaleoutResult[]> {
  const print = opts.print ?? ((line: string) => console.log(line));
  const log = opts.log ??
    ((line: string) => console.error(`[scaleout] ${line}`));
  const helpers: Helper[] = [];
  const results: ScaleoutResult[] = [];
  try {
    const upstream = await startHelper("bench/_strict_upstream.ts", [
      ...["--app-secret", APP_SECRET, "--rate", String(opts.rate)],
    ]);
    helpers.push(upstream);
    const lb = await startHelper("bench/_lb.ts", []);
    helpers.push(lb);
    const settings: HarnessSettings = {
      upstreamUrl: upstream.url,
      lbUrl: lb.url,
      appSecret: APP_SECRET,
      duration: opts.duration,
      numbers: opts.numbers,
      rate: opts.rate,
      perNumber: opts.messages ?? Math.round(opts.rate * opts.duration),
      apiRate: opts.apiRate,
      statuses: opts.statuses,
      drain: opts.drain,
      limitRate: opts.limitRate,
      limitRequests: opts.limitRequests,
      pauseSeconds: opts.pause,
      log,
    };
    print(
      `bench_scaleout: ${machine()}; ${opts.numbers} numbers at ${opts.rate}/s, ${settings.perNumber} messages each, ${opts.duration} s per phase, API load ${opts.apiRate}/s, ${opts.statuses} status callbacks per send`,
    );
    for (const name of opts.phases) {
      const title = PHASES[name].title;
      if (PHASES[name].engine === "sqld" && !sqldBinary()) {
        print(
          `== ${name}: ${title}: skipped, sqld is not installed (deno run -A scripts/ensure_tools.ts)`,
        );
        results.push({ name, title, checks: [], error: "skipped: no sqld" });
        continue;
      }
      try {
        // Every wait inside a phase is bounded; this is the backstop if one is not.
        const run = await within(
          runPhase(name, settings),
          phaseBudgetMs(settings) + 180_000,
          `phase ${name}`,
        ).catch(async (err) => {
          await stopAllClusters();
          throw err;
        });
        if (opts.dump) await dumpRun(opts.dump, run);
        const figures = phaseFigures(run);
        const checks = phaseChecks(run, figures);
        for (const line of formatPhase(run, figures, checks)) print(line);
        results.push({ name, title, status: run.status, run, figures, checks });
      } catch (err) {
        const error = String((err as Error)?.stack ?? err);
        print(`== ${name}: ${title}: could not run: ${error}`);
        results.push({ name, title, checks: [], error });
      }
    }
    for (const line of formatSummary(results, opts.rate)) print(line);
    return results;
  } finally {
    for (const helper of helpers) await helper.stop();
  }
}

async function dumpRun(dir: string, run: PhaseRun): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  const kill = run.events.kill;
  const plain = {
    ...run,
    settings: { ...run.settings, log: undefined },
    campaign: { ...run.campaign, ids: [...run.campaign.ids] },
    recordedWamid: run.recordedWamid && [...run.recordedWamid],
    stillQueued: run.stillQueued && [...run.stillQueued],
    events: {
      ...run.events,
      kill: kill && { ...kill, handedBack: [...kill.handedBack] },
    },
  };
  await Deno.writeTextFile(`${dir}/${run.name}.json`, JSON.stringify(plain));
}

function parseOptions(args: string[]): ScaleoutOptions {
  const { values } = parseArgs({
    args,
    options: {
      phases: { type: "string", default: Object.keys(PHASES).join(",") },
      duration: { type: "string", default: "60" },
      numbers: { type: "string", default: "3" },
      rate: { type: "string", default: "80" },
      messages: { type: "string" },
      "api-rate": { type: "string", default: "20" },
      statuses: { type: "string", default: "0" },
      drain: { type: "string", default: "90" },
      pause: { type: "string", default: "20" },
      "limit-rate": { type: "string", default: "30" },
      "limit-requests": { type: "string", default: "90" },
      dump: { type: "string" },
    },
  });
  const num = (name: keyof typeof values, min: number) => {
    const n = Number(values[name]);
    if (!Number.isFinite(n) || n < min) {
      throw new Error(
        `--${name} must be a number >= ${min}, got "${values[name]}"`,
      );
    }
    return n;
  };
  const phases = String(values.phases).split(",").map((p) => p.trim())
    .filter((p) => p !== "");
  for (const p of phases) {
    if (!(p in PHASES)) {
      throw new Error(
        `Unknown phase "${p}": one of ${Object.keys(PHASES).join(", ")}`,
      );
    }
  }
  return {
    phases: phases as PhaseName[],
    duration: num("duration", 1),
    numbers: num("numbers", 1),
    rate: num("rate", 1),
    messages: values.messages === undefined ? undefined : num("messages", 1),
    apiRate: num("api-rate", 0),
    statuses: Math.min(3, num("statuses", 0)),
    drain: num("drain", 0),
    pause: num("pause", 1),
    limitRate: num("limit-rate", 1),
    limitRequests: num("limit-requests", 0),
    dump: values.dump,
  };
}

if (import.meta.main) {
  const options = parseOptions(Deno.args);
  const needsSqld = options.phases.some((p) => PHASES[p].engine === "sqld");
  if (needsSqld && !sqldBinary()) {
    await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "scripts/ensure_tools.ts"],
      cwd: new URL("../", import.meta.url).pathname,
      stdout: "inherit",
      stderr: "inherit",
    }).output();
  }
  Deno.addSignalListener("SIGINT", () => {
    stopAllClusters().finally(() => Deno.exit(130));
  });
  await runScaleout(options);
}
