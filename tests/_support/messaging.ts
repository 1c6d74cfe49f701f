// A harness with the messaging engine: the app listening on 127.0.0.1, the
// real upstream simulator pointed at it, and a worker pool to drive jobs.
//
// By default the test drives everything itself: the clock is a ManualClock,
// the pool runs only in runOnce(), and the simulator queues its status
// callbacks until flush(); until() alternates the two (and moves the clock to
// the next due job when nothing else can happen). `realTime: true` runs the
// pool in the background on the system clock with the simulator's timers, as
// production does (kept for a few smoke tests).
import {
  createHarness,
  type Harness,
  type HarnessOptions,
} from "../_harness.ts";
import { type Simulator, startSimulator } from "../../src/simulator/server.ts";
import type { WorkerPool } from "../../src/jobs/worker_pool.ts";
import { createLogger } from "../../src/log.ts";
import { ManualClock, systemClock } from "../../src/clock.ts";
import { waitFor } from "./wait.ts";
import { appWorkerPool } from "./workers.ts";

export const APP_SECRET = "test-app-secret";

export interface MessagingHarness extends Harness {
  simulator: Simulator;
  /** http://127.0.0.1:PORT of the app. */
  baseUrl: string;
  pool: WorkerPool;
  /** False when the test drives jobs and callbacks (the default). */
  realTime: boolean;
  /** POST /_sim/inbound (the customer writes to the tenant's channel). */
  inbound(body: Record<string, unknown>): Promise<{ wamid: string }>;
  /** Waits until the message reaches one of the statuses (driving the work unless real time). */
  waitForStatus(
    messageId: string,
    statuses: string[],
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  /**
   * Resolves with check()'s first truthy value. Driven: runs due jobs and
   * flushes the simulator's callbacks between checks, moving the clock to the
   * next due job when nothing else is left, and throws once nothing can
   * happen any more. Real time: polls with a deadline.
   */
  until<T>(
    check: () => T | Promise<T>,
    what?: string,
  ): Promise<NonNullable<T>>;
  /** Runs due jobs and flushes callbacks until neither has anything left (no-op in real time); returns how many ran. */
  settle(): Promise<number>;
}

export type MessagingHarnessOptions = HarnessOptions & {
  simulator?: Parameters<typeof startSimulator>[0];
  /** Background workers, system clock and simulator timers. @default false */
  realTime?: boolean;
};

/** Jobs more than this far ahead are not waited for by moving the clock. */
const CLOCK_HORIZON_MS = 60 * 60_000;
/** until() gives up after this many rounds even if work keeps appearing. */
const MAX_ROUNDS = 500;
/**
 * A driven step this slow waits on a real timer that the standing clock never
 * lets through (the send governor past its burst, say): fail, do not hang.
 */
const STEP_WATCHDOG_MS = 20_000;

async function watched<T>(step: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const watchdog = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `A driven step took over ${STEP_WATCHDOG_MS} ms: it waits on real time the ManualClock does not move`,
          ),
        ),
      STEP_WATCHDOG_MS,
    );
  });
  try {
    return await Promise.race([step, watchdog]);
  } finally {
    clearTimeout(timer);
  }
}

/** Starts everything on loopback; see the top of this file for the two modes. */
export async function createMessagingHarness(
  options: MessagingHarnessOptions = {},
): Promise<MessagingHarness> {
  const realTime = options.realTime ?? false;
  const simulator = await startSimulator({
    appSecret: APP_SECRET,
    log: createLogger("silent"),
    statusDelaysMs: { sent: 10, delivered: 30, read: 60 },
    retryDelaysMs: [100, 300, 1000, 2000],
    callbackMode: realTime ? "timers" : "queued",
    ...options.simulator,
  });
  const h = await createHarness({
    // The simulator stamps its webhooks with the system time: start there.
    clock: realTime ? systemClock : new ManualClock(new Date()),
    ...options,
    env: {
      META_GRAPH_URL: simulator.graphUrl,
      META_APP_SECRET: APP_SECRET,
      // The simulator serves media from 127.0.0.1 over http.
      MEDIA_DOWNLOAD_HOSTS: "127.0.0.1",
      MEDIA_DOWNLOAD_ALLOW_PRIVATE_NETWORKS: "true",
      ...options.env,
    },
  });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    h.app.fetch,
  );
  const baseUrl = `http://127.0.0.1:${server.addr.port}`;
  simulator.setCallbackUrl(`${baseUrl}/meta/webhook`);
  await registerNumber(
    simulator.url,
    h.tenant.channel.upstreamPhoneNumberId,
    h.tenant.channel.phoneNumber,
  );
  const pool = appWorkerPool(h.container);
  const unsubscribe = h.container.jobs.subscribe(() => pool.notify());
  if (realTime) pool.start();

  async function settle(): Promise<number> {
    if (realTime) return 0;
    let total = 0;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const done = await watched(pool.runOnce()) +
        await watched(simulator.flush());
      if (done === 0) return total;
      total += done;
    }
    throw new Error(`Work kept coming after ${MAX_ROUNDS} rounds`);
  }

  /** Moves a ManualClock to the earliest job due within the horizon; false if there is none. */
  async function skipToNextJob(): Promise<boolean> {
    const clock = h.clock;
    if (!(clock instanceof ManualClock)) return false;
    const next = await h.container.db.selectFrom("jobs").select("run_at")
      .where("state", "in", ["available", "retryable"])
      .orderBy("run_at").limit(1).executeTakeFirst();
    if (!next) return false;
    const at = Date.parse(next.run_at);
    const now = clock.now().getTime();
    // A due job runOnce() left alone will not run by waiting either.
    if (at <= now || at - now > CLOCK_HORIZON_MS) return false;
    clock.set(new Date(at));
    return true;
  }

  async function until<T>(
    check: () => T | Promise<T>,
    what = "condition",
  ): Promise<NonNullable<T>> {
    if (realTime) return await waitFor(check, { what });
    let last: unknown;
    const attempt = async () => {
      try {
        return await check();
      } catch (err) {
        last = err;
        return undefined;
      }
    };
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const value = await attempt();
      if (value) return value as NonNullable<T>;
      if (await settle() > 0) continue;
      if (!await skipToNextJob()) break;
    }
    const value = await attempt();
    if (value) return value as NonNullable<T>;
    throw new Error(
      `Nothing left to run, still waiting for ${what}${
        last ? `: ${(last as Error).message}` : ""
      }`,
    );
  }

  async function inbound(body: Record<string, unknown>) {
    // Driven, the clock stands still: let a second pass before each message
    // the customer writes, so "the latest" is as well defined as in real life.
    if (h.clock instanceof ManualClock) h.clock.advance(1_000);
    const res = await fetch(`${simulator.url}/_sim/inbound`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ to: h.tenant.channel.phoneNumber, ...body }),
    });
    const json = await res.json();
    if (!res.ok) {
      throw new Error(
        `Simulator inbound failed: ${res.status} ${JSON.stringify(json)}`,
      );
    }
    return json as { wamid: string };
  }

  async function waitForStatus(
    messageId: string,
    statuses: string[],
    timeoutMs = 10_000,
  ) {
    const check = async () => {
      const res = await h.request("GET", `/api/v2/messages/${messageId}`);
      return statuses.includes(res.body?.data?.status) ? res.body.data : null;
    };
    const what = `message ${messageId} to reach ${statuses.join("/")}`;
    return realTime
      ? await waitFor(check, { timeoutMs, what })
      : await until(check, what);
  }

  return {
    ...h,
    simulator,
    baseUrl,
    pool,
    realTime,
    inbound,
    waitForStatus,
    until,
    settle,
    async [Symbol.asyncDispose]() {
      unsubscribe();
      await pool.drain(2_000);
      await simulator.stop();
      await server.shutdown();
      await h[Symbol.asyncDispose]();
    },
  };
}

/** Tells the simulator which business number belongs to which phone number id. */
export async function registerNumber(
  simulatorUrl: string,
  phoneNumberId: string,
  displayPhoneNumber: string,
): Promise<void> {
  const res = await fetch(`${simulatorUrl}/_sim/numbers`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ phoneNumberId, displayPhoneNumber }),
  });
  await res.body?.cancel();
}
