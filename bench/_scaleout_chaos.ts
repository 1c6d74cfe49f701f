/**
 * The faults of the scale-out phases, each on the phase's clock: `kill -9`
 * of one instance mid-campaign (with the database's running jobs read at
 * once, to tell which ones the victim held), a SIGSTOP/SIGCONT pause of
 * another, and a rolling restart (SIGTERM each instance in turn, start it
 * again on its port and DATA_DIR, wait until the proxy sees it ready).
 */
import type { Cluster, Instance } from "./_scaleout_cluster.ts";
import { stopServer } from "./_scaleout_cluster.ts";
import type { Row } from "./_scaleout_db.ts";
import { nowMs } from "./_strict_upstream.ts";
import { pause } from "./_scaleout_watch.ts";
import { proxyStats } from "./_lb.ts";

export interface KillEvent {
  at: number;
  victim: string;
  /** Send jobs running at the kill (unique_key, locked_by); undefined when they could not be read. */
  running?: Row[];
  runningError?: string;
  /** unique_key -> when the database first showed that job no longer running under its worker at the kill. */
  handedBack: Map<string, number>;
  /** Ends the polling behind handedBack (the phase calls it once the campaign is over). */
  stopWatching(): Promise<void>;
}

const HAND_BACK_POLL_MS = 500;

export interface PauseEvent {
  at: number;
  until: number;
  instance: string;
}

export interface RestartEvent {
  instance: string;
  /** SIGTERM sent. */
  at: number;
  /** Until the old process exited. */
  exitMs: number;
  /** It had to be killed after 30 s. */
  killed: boolean;
  /** From SIGTERM until the new process answered /readyz (NaN if it never did). */
  backMs: number;
  error?: string;
}

export interface ChaosEvents {
  kill?: KillEvent;
  pause?: PauseEvent;
  restarts?: RestartEvent[];
}

/** Kills the first instance at `at`, and reads the running send jobs right after. */
export async function killAt(
  cluster: Cluster,
  at: number,
  signal: AbortSignal,
): Promise<KillEvent | undefined> {
  await pause(at - nowMs(), signal);
  if (signal.aborted) return undefined;
  const victim = cluster.instances[0]!;
  const event: KillEvent = {
    at: nowMs(),
    victim: victim.name,
    handedBack: new Map(),
    stopWatching: () => Promise.resolve(),
  };
  victim.server.proc.signal("SIGKILL");
  try {
    event.running = await cluster.db.query(
      "select unique_key, locked_by from jobs where state = 'running' and kind = 'message.send'",
      [],
      5_000,
    );
    event.stopWatching = watchHandBack(
      cluster.db,
      event.running,
      event.handedBack,
    );
  } catch (err) {
    event.runningError = String((err as Error)?.message ?? err);
  }
  await victim.server.proc.status;
  return event;
}

/**
 * Polls the jobs running at the kill every 500 ms and notes when each is
 * first seen no longer running under the worker it had then (settled, handed
 * back, or claimed by another); returns the function that stops polling.
 */
function watchHandBack(
  db: Cluster["db"],
  running: Row[],
  out: Map<string, number>,
): () => Promise<void> {
  const atKill = new Map(
    running.map((r) => [String(r.unique_key), r.locked_by]),
  );
  const keys = [...atKill.keys()];
  let stopped = false;
  const loop = (async () => {
    while (!stopped && out.size < keys.length) {
      const t = nowMs();
      try {
        const rows = await db.query(
          `select unique_key, state, locked_by from jobs where unique_key in (${
            keys.map(() => "?").join(", ")
          })`,
          keys,
          5_000,
        );
        const seen = new Map(rows.map((r) => [String(r.unique_key), r]));
        const observed = nowMs();
        for (const key of keys) {
          const row = seen.get(key);
          if (out.has(key)) continue;
          if (row?.state !== "running" || row.locked_by !== atKill.get(key)) {
            out.set(key, observed);
          }
        }
      } catch { /* a slow or wedged sqld: look again */ }
      await pause(HAND_BACK_POLL_MS - (nowMs() - t));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}

/** SIGSTOPs the second instance at `at` for `ms`, then SIGCONTs it. */
export async function pauseAt(
  cluster: Cluster,
  at: number,
  ms: number,
  signal: AbortSignal,
): Promise<PauseEvent | undefined> {
  await pause(at - nowMs(), signal);
  if (signal.aborted) return undefined;
  const target = cluster.instances[1]!;
  target.server.proc.signal("SIGSTOP");
  const event: PauseEvent = { at: nowMs(), until: 0, instance: target.name };
  // Always continued, even when the phase is cut short: a stopped process cannot stop.
  await pause(ms);
  target.server.proc.signal("SIGCONT");
  event.until = nowMs();
  return event;
}

/** Restarts every instance in turn from `at`; each waits until the proxy sees the previous one ready. */
export async function rollingRestart(
  cluster: Cluster,
  at: number,
  lbUrl: string,
  signal: AbortSignal,
): Promise<RestartEvent[]> {
  await pause(at - nowMs(), signal);
  const events: RestartEvent[] = [];
  for (const instance of cluster.instances) {
    if (signal.aborted) break;
    events.push(await restartOne(instance, lbUrl));
  }
  return events;
}

async function restartOne(
  instance: Instance,
  lbUrl: string,
): Promise<RestartEvent> {
  const at = nowMs();
  const stopped = await stopServer(instance.server, 30_000);
  const event: RestartEvent = {
    instance: instance.name,
    at,
    exitMs: stopped.ms,
    killed: stopped.killed,
    backMs: NaN,
  };
  instance.earlierOutput.push(instance.server.proc.stderr);
  try {
    instance.server = await instance.server.restart();
    event.backMs = nowMs() - at;
    await seenReady(lbUrl, instance.server.baseUrl);
  } catch (err) {
    event.error = String((err as Error)?.message ?? err).slice(0, 300);
  }
  return event;
}

/** Waits (up to 5 s) until the proxy's last health check found `url` ready. */
async function seenReady(lbUrl: string, url: string): Promise<void> {
  const deadline = nowMs() + 5_000;
  while (nowMs() < deadline) {
    const { targets } = await proxyStats(lbUrl);
    if (targets.some((t) => t.url === url && t.ready)) return;
    await pause(100);
  }
}
