/**
 * One phase of the scale-out harness, start to end under a hard deadline:
 * a fresh cluster, then for `duration` the campaign, the steady API load,
 * the per-credential check and the phase's fault; then the drain (until
 * every queued message reached the upstream, or `drain` ran out), sqld's
 * health after the load, the database's view, and the teardown. A wedged
 * sqld or the deadline cuts the phase short: it is reported as such, with
 * what was measured until then, and the next phase starts on a fresh sqld.
 * Just past 300 lines: runPhase reads best as one sequence.
 */
import { type Cluster, startCluster } from "./_scaleout_cluster.ts";
import {
  type ChaosEvents,
  killAt,
  pauseAt,
  rollingRestart,
} from "./_scaleout_chaos.ts";
import {
  pendingSendJobs,
  probeWrite,
  readEnd,
  type Row,
} from "./_scaleout_db.ts";
import { setProxyTargets } from "./_lb.ts";
import {
  type ApiSample,
  type Campaign,
  enqueueCampaign,
  rateLimitProbe,
  startSteadyLoad,
} from "./_scaleout_load.ts";
import {
  cpuPercent,
  pause,
  type Probe,
  SqldMonitor,
  UpstreamLog,
} from "./_scaleout_watch.ts";
import { nowMs, type SendRecord } from "./_strict_upstream.ts";
import { type LogFigures, logFigures } from "./_scaleout_report.ts";
import { cpuMs } from "./_bench_serve.ts";

export type PhaseName =
  | "embedded"
  | "sqld1"
  | "sqld3"
  | "kill"
  | "pause"
  | "restart";

export const PHASES: Record<
  PhaseName,
  { engine: "embedded" | "sqld"; count: number; title: string }
> = {
  embedded: {
    engine: "embedded",
    count: 1,
    title: "1 instance, embedded SQLite",
  },
  sqld1: { engine: "sqld", count: 1, title: "1 instance on sqld" },
  sqld3: { engine: "sqld", count: 3, title: "3 instances on sqld" },
  kill: { engine: "sqld", count: 3, title: "3 on sqld, kill -9 of one" },
  pause: { engine: "sqld", count: 3, title: "3 on sqld, one paused 20 s" },
  restart: { engine: "sqld", count: 3, title: "3 on sqld, rolling restart" },
};

export interface HarnessSettings {
  upstreamUrl: string;
  lbUrl: string;
  appSecret: string;
  /** Seconds of measured load per phase. */
  duration: number;
  numbers: number;
  /** Sends per second per number (the channels' --send-rate, the upstream's window). */
  rate: number;
  /** Campaign messages per number. */
  perNumber: number;
  /** Steady API requests per second. */
  apiRate: number;
  /** Status callbacks per accepted send (see _strict_upstream.ts). */
  statuses: number;
  /** Longest wait for the campaign to reach the upstream after the window (s). */
  drain: number;
  /** The limited key's --rate-limit, and its requests (one every 100 ms). */
  limitRate: number;
  limitRequests: number;
  /** How long the pause phase keeps its instance stopped (s). */
  pauseSeconds: number;
  /** Progress lines (stderr). */
  log(line: string): void;
}

export interface SqldHealth {
  /** sqld's CPU from the start of the load to its end, % of one core. */
  cpuDuringPct: number;
  /** After the load, with the instances idle: 1 s samples (%), and when one was under 5 % (s). */
  afterLoadPct: number[];
  underFiveAtS: number | undefined;
  afterLoadProbeMs: number;
  /** With every instance stopped: CPU over 2 s and a probe write. */
  noClientsPct: number;
  noClientsProbeMs: number;
}

export interface PhaseRun {
  name: PhaseName;
  title: string;
  status: "ok" | "wedged" | "deadline";
  notes: string[];
  settings: HarnessSettings;
  /** The campaign was over (no send job waiting or running) before the drain ran out. */
  drained: boolean;
  /** Measured window [t0, windowEnd]: t0 + duration, or earlier when cut short. */
  t0: number;
  windowEnd: number;
  /** When the instances were up (for the cron ticks) and when the database was read. */
  upAt: number;
  readAt: number;
  channels: Cluster["channels"];
  campaign: Campaign;
  records: SendRecord[];
  api: ApiSample[];
  limited: ApiSample[];
  probes: Probe[];
  events: ChaosEvents;
  sqld?: SqldHealth;
  /** The database's view at the end; undefined where it could not be read (with the error in notes). */
  recordedWamid?: Map<string, string | null>;
  /** Send jobs at the end (unique_key, locked_by, state, finalized_at), in a kill phase. */
  sendJobs?: Row[];
  cronRows?: { unique_key: string; state: string; attempt: number }[];
  /** Outbound messages still queued at the end. */
  stillQueued?: Set<string>;
  /** Outbound messages by status at the end. */
  statuses?: Record<string, number>;
  /** The machine's load averages when the phase ended (other work skews every figure). */
  loadAvg?: string;
  /** The instances' warnings and errors (LOG_LEVEL=warn). */
  serverLog?: LogFigures;
}

function loadAvg(): string | undefined {
  try {
    return Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3)
      .join(" ");
  } catch {
    return undefined; // not Linux
  }
}

/**
 * A phase's deadline: setup, its load, its drain, and the after-load
 * checks; past it the phase stops waiting and reports "deadline".
 */
export function phaseBudgetMs(s: HarnessSettings): number {
  return (120 + s.duration + s.drain + 90) * 1000;
}

/** Runs one phase; never hangs past its deadline, never throws for a fault of the program under test. */
export async function runPhase(
  name: PhaseName,
  s: HarnessSettings,
): Promise<PhaseRun> {
  const spec = PHASES[name];
  const abort = new AbortController();
  const deadline = setTimeout(
    () => abort.abort("deadline"),
    phaseBudgetMs(s),
  );
  const notes: string[] = [];
  let cluster: Cluster | undefined;
  try {
    await fetch(`${s.upstreamUrl}/_strict/reset`, {
      method: "POST",
      body: JSON.stringify({
        rate: s.rate,
        statuses: s.statuses,
        callbackUrl: `${s.lbUrl}/meta/webhook`,
      }),
    }).then((r) => r.body?.cancel());
    s.log(`${name}: starting ${spec.title}`);
    cluster = await startCluster({
      engine: spec.engine,
      count: spec.count,
      numbers: s.numbers,
      rate: s.rate,
      limitKeyRate: s.limitRate,
      appSecret: s.appSecret,
      lbUrl: s.lbUrl,
      upstreamUrl: s.upstreamUrl,
    });
    const upAt = nowMs();
    await setProxyTargets(
      s.lbUrl,
      cluster.instances.map((i) => i.server.baseUrl),
    );
    const log = new UpstreamLog(s.upstreamUrl);
    const sqld = cluster.sqld;
    const monitor = sqld
      ? new SqldMonitor(cluster.db, sqld.pid, abort)
      : undefined;
    const sqldCpu0 = sqld ? cpuMs(sqld.pid) : 0;
    const t0 = nowMs();
    const plannedEnd = t0 + s.duration * 1000;
    s.log(`${name}: load for ${s.duration} s`);
    const load = startSteadyLoad(s.lbUrl, cluster.loadKey, s.apiRate);
    const limited = pause(1000).then(() =>
      rateLimitProbe(s.lbUrl, cluster!.limitKey, s.limitRequests, 100)
    );
    const campaignDone = enqueueCampaign(
      s.lbUrl,
      cluster.loadKey,
      cluster.channels,
      s.perNumber,
      abort.signal,
    );
    const chaos = runChaos(name, cluster, t0, s, abort.signal);
    while (nowMs() < plannedEnd && !abort.signal.aborted) {
      await pause(Math.min(1000, plannedEnd - nowMs()), abort.signal);
      await log.poll();
    }
    // Cut short by a wedge or the deadline, the window ends there.
    const windowEnd = Math.min(plannedEnd, nowMs());
    const api = await load.stop();
    const events = await chaos;
    const campaign = await campaignDone;
    s.log(`${name}: draining (${campaign.ids.size} queued)`);
    const drainEnd = nowMs() + s.drain * 1000;
    let drained = false;
    while (!abort.signal.aborted && nowMs() < drainEnd) {
      await log.poll();
      const pending = await pendingSendJobs(cluster.db);
      // Without the jobs table, over once every queued message reached the upstream.
      drained = pending === undefined
        ? [...campaign.ids.keys()].every((id) => log.accepted.has(id))
        : pending === 0;
      if (drained) break;
      await pause(1000, abort.signal);
    }
    await events.kill?.stopWatching();
    const sqldCpuDuring = sqld
      ? ((cpuMs(sqld.pid) - sqldCpu0) * 100) / (nowMs() - t0)
      : 0;
    await monitor?.stop();
    if (monitor?.wedgedAt) notes.push(`sqld wedged: ${monitor.wedgeNote}`);
    const run: PhaseRun = {
      name,
      title: spec.title,
      status: abort.signal.aborted
        ? (abort.signal.reason === "wedged" ? "wedged" : "deadline")
        : "ok",
      notes,
      settings: s,
      drained,
      t0,
      windowEnd,
      upAt,
      readAt: 0,
      channels: cluster.channels,
      campaign,
      records: [],
      api,
      limited: await limited,
      probes: monitor?.probes ?? [],
      events,
    };
    const health = sqld ? await afterLoad(cluster) : undefined;
    run.readAt = nowMs();
    const view = await readEnd(cluster.db, { sendJobs: !!events.kill });
    run.notes.push(...view.notes);
    Object.assign(run, {
      recordedWamid: view.recordedWamid,
      sendJobs: view.sendJobs,
      cronRows: view.cronRows,
      statuses: view.statuses,
      stillQueued: view.stillQueued,
    });
    await cluster.stopInstances();
    run.serverLog = logFigures(
      cluster.instances.flatMap((
        i,
      ) => [...i.earlierOutput, i.server.proc.stderr]),
    );
    if (sqld && health) {
      health.noClientsPct = await cpuPercent(sqld.pid, 2000);
      health.noClientsProbeMs = (await probeWrite(cluster.db, 5_000)).ms;
      health.cpuDuringPct = sqldCpuDuring;
      run.sqld = health;
    }
    await log.poll();
    run.records = log.records;
    run.loadAvg = loadAvg();
    return run;
  } finally {
    clearTimeout(deadline);
    await cluster?.stop();
  }
}

function runChaos(
  name: PhaseName,
  cluster: Cluster,
  t0: number,
  s: HarnessSettings,
  signal: AbortSignal,
): Promise<ChaosEvents> {
  const at = (share: number) => t0 + share * s.duration * 1000;
  if (name === "kill") {
    return killAt(cluster, at(1 / 3), signal).then((kill) => ({ kill }));
  }
  if (name === "pause") {
    return pauseAt(cluster, at(1 / 4), s.pauseSeconds * 1000, signal)
      .then((p) => ({ pause: p }));
  }
  if (name === "restart") {
    return rollingRestart(cluster, at(1 / 6), s.lbUrl, signal)
      .then((restarts) => ({ restarts }));
  }
  return Promise.resolve({});
}

/** sqld once the load is over, the instances still up: 1 s CPU samples for 5 s, then a probe write. */
async function afterLoad(cluster: Cluster): Promise<SqldHealth> {
  const pid = cluster.sqld!.pid;
  const samples: number[] = [];
  let under: number | undefined;
  for (let i = 1; i <= 5; i++) {
    const pct = await cpuPercent(pid, 1000);
    samples.push(pct);
    if (pct < 5 && under === undefined) under = i;
  }
  return {
    cpuDuringPct: 0,
    afterLoadPct: samples,
    underFiveAtS: under,
    afterLoadProbeMs: (await probeWrite(cluster.db, 5_000)).ms,
    noClientsPct: NaN,
    noClientsProbeMs: NaN,
  };
}
