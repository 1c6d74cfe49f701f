// A harness with the messaging engine: the app listening on 127.0.0.1, the
// real upstream simulator pointed at it, and a worker pool to drive jobs.
import {
  createHarness,
  type Harness,
  type HarnessOptions,
} from "../_harness.ts";
import { type Simulator, startSimulator } from "../../src/simulator/server.ts";
import { WorkerPool } from "../../src/jobs/worker_pool.ts";
import { createJobHandlers } from "../../src/jobs/registry.ts";
import { createLogger } from "../../src/log.ts";
import { systemClock } from "../../src/clock.ts";
import { waitFor } from "./wait.ts";

export const APP_SECRET = "test-app-secret";

export interface MessagingHarness extends Harness {
  simulator: Simulator;
  /** http://127.0.0.1:PORT of the app. */
  baseUrl: string;
  pool: WorkerPool;
  /** POST /_sim/inbound (the customer writes to the tenant's channel). */
  inbound(body: Record<string, unknown>): Promise<{ wamid: string }>;
  /** Waits until the message reaches one of the statuses (running workers must be started). */
  waitForStatus(
    messageId: string,
    statuses: string[],
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
}

/**
 * Starts everything on loopback. Workers run in the background (start());
 * the system clock is used so the simulator's timestamps and ours agree.
 */
export async function createMessagingHarness(
  options: HarnessOptions & {
    simulator?: Parameters<typeof startSimulator>[0];
  } = {},
): Promise<MessagingHarness> {
  const simulator = await startSimulator({
    appSecret: APP_SECRET,
    log: createLogger("silent"),
    statusDelaysMs: { sent: 10, delivered: 30, read: 60 },
    retryDelaysMs: [100, 300, 1000, 2000],
    ...options.simulator,
  });
  const h = await createHarness({
    clock: systemClock,
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
  const pool = new WorkerPool({
    db: h.container.db,
    clock: h.container.clock,
    log: createLogger("silent"),
    handlers: createJobHandlers(h.container),
    concurrency: 8,
    pollMs: 10,
  });
  const unsubscribe = h.container.jobs.subscribe(() => pool.notify());
  pool.start();

  async function inbound(body: Record<string, unknown>) {
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
    return await waitFor(async () => {
      const res = await h.request("GET", `/api/v2/messages/${messageId}`);
      return statuses.includes(res.body?.data?.status) ? res.body.data : null;
    }, {
      timeoutMs,
      what: `message ${messageId} to reach ${statuses.join("/")}`,
    });
  }

  return {
    ...h,
    simulator,
    baseUrl,
    pool,
    inbound,
    waitForStatus,
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
