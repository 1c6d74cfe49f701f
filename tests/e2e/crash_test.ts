// deno-lint-ignore-file no-console
// crash: the server is killed with SIGKILL three times while ~2,000 template
// sends are being accepted and delivered, and restarted on the same DATA_DIR
// and port. The simulator is its own process, so it keeps every send it saw.
// Every message the API accepted (2xx) must reach the upstream and end at
// least `sent`; duplicates are reported and bounded.
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { waitFor } from "../_support/wait.ts";
import {
  type ServerProcess,
  simGet,
  startEngineSetup,
  startServer,
} from "./_process.ts";
import {
  client,
  CRASH_TEMPLATE,
  fetchStatuses,
  givenUpWamids,
  randomBetween,
  rescuedJobs,
  seedCrashAccount,
  sleep,
  type Tally,
} from "./_crash_clients.ts";

const APP_SECRET = "e2e-crash-app-secret";
const CHANNEL_PHONE = "+15550100088";
const UPSTREAM_ID = "106540352248888";
const TARGET = 2_000;
const KILLS = 3;
const WORKERS = 16;
/** Concurrent API clients submitting messages. */
const CLIENTS = 3;
/** After the last restart: leases are 30 s and the rescue cron ticks each minute, so up to ~90 s. */
const SETTLE_DEADLINE_MS = 120_000;
const FINAL = new Set(["sent", "delivered", "read", "failed"]);

Deno.test("crash: kill -9 during sends loses no accepted message and bounds duplicates", async () => {
  const started = Date.now();
  const setup = await startEngineSetup({
    appSecret: APP_SECRET,
    dataDirPrefix: "bm-e2e-crash-",
    env: {
      WORKERS: String(WORKERS),
    },
  });
  await using sim = setup.sim;
  const { port, dataDir, env } = setup;
  let server: ServerProcess | undefined;
  let stopped = false;
  try {
    const { key, channelId } = await seedCrashAccount(env, {
      slug: "crash",
      phone: CHANNEL_PHONE,
      upstreamId: UPSTREAM_ID,
      simulatorUrl: sim.url,
      template: { name: CRASH_TEMPLATE, body: "Tu pedido está en camino" },
    });
    server = await startServer({ env, port, dataDir });
    const servers = [server];
    const baseUrl = server.baseUrl;

    const tally: Tally = {
      accepted: new Set(),
      viaBatch: 0,
      viaSingle: 0,
      viaIdempotent: 0,
      idempotentReplays: 0,
      requestErrors: 0,
    };
    let killsDone = 0;
    let clientError: unknown;
    const ctx = {
      key,
      channelId,
      tally,
      done: () =>
        stopped || clientError !== undefined ||
        (killsDone >= KILLS && tally.accepted.size >= TARGET),
    };
    const clients = Array.from(
      { length: CLIENTS },
      (_, n) =>
        client(baseUrl, ctx, n).catch((err) => {
          clientError ??= err;
        }),
    );

    // The killer: each time after a random 200-1500 ms of sending, SIGKILL and restart.
    const killLog: string[] = [];
    /** Jobs a killed process held: each must be handed back by the lease rescue. */
    const heldAtKills = new Set<string>();
    for (let k = 1; k <= KILLS; k++) {
      // Wait until there is a backlog, so sends are in flight at the kill.
      await waitFor(
        () => clientError !== undefined || tally.accepted.size >= 150 * k,
        { timeoutMs: 60_000, what: `${150 * k} accepted messages` },
      );
      if (clientError) break;
      const after = randomBetween(200, 1_500);
      await sleep(after);
      const acceptedAtKill = tally.accepted.size;
      await server.kill9();
      killsDone++;
      const down = Date.now();
      const held = runningJobs(dataDir);
      for (const id of held) heldAtKills.add(id);
      server = await server.restart();
      servers.push(server);
      killLog.push(
        `kill ${k}: ${after} ms after start, ${acceptedAtKill} accepted, ${held.length} jobs running, down ${
          Date.now() - down
        } ms`,
      );
    }
    await Promise.all(clients);
    if (clientError) throw clientError;
    const submittedAt = Date.now();
    const submitMs = submittedAt - servers[0]!.startedAt;

    // Wait until every accepted message settled: read or failed, or sent /
    // delivered when the simulator gave up its callbacks (we were down too long).
    const ids = [...tally.accepted];
    const statuses = new Map<
      string,
      { status: string; waMessageId: string | null } | undefined
    >();
    let pending = ids;
    while (
      pending.length > 0 && Date.now() - submittedAt < SETTLE_DEADLINE_MS
    ) {
      const round = await fetchStatuses(baseUrl, key, pending);
      const givenUp = givenUpWamids(sim.proc.stderr);
      for (const [id, m] of round) statuses.set(id, m);
      pending = pending.filter((id) => {
        const m = statuses.get(id);
        if (!m) return true;
        if (m.status === "read" || m.status === "failed") return false;
        return !(FINAL.has(m.status) && m.waMessageId &&
          givenUp.has(m.waMessageId));
      });
      if (pending.length > 0) await sleep(500);
    }
    const settleMs = Date.now() - submittedAt;
    // Callbacks can settle a message whose send job died after its upstream
    // call; the job itself must still come back once its lease expires.
    let stillHeld = [...heldAtKills];
    while (
      stillHeld.length > 0 && Date.now() - submittedAt < SETTLE_DEADLINE_MS
    ) {
      const running = new Set(runningJobs(dataDir));
      stillHeld = stillHeld.filter((id) => running.has(id));
      if (stillHeld.length > 0) await sleep(500);
    }

    const upstream = await simGet(sim.url, "messages");
    const counts: Record<string, number> = upstream.countsByOpaque;
    const givenUp = givenUpWamids(sim.proc.stderr);
    const byStatus: Record<string, number> = {};
    for (const m of statuses.values()) {
      const s = m?.status ?? "missing";
      byStatus[s] = (byStatus[s] ?? 0) + 1;
    }
    const missing = ids.filter((id) => !statuses.get(id));
    const notFinal = ids.filter((id) =>
      !FINAL.has(statuses.get(id)?.status ?? "")
    );
    const failed = ids.filter((id) => statuses.get(id)?.status === "failed");
    const neverUpstream = ids.filter((id) => !counts[id]);
    const reachedButBelowSent = ids.filter((id) =>
      counts[id] &&
      !["sent", "delivered", "read"].includes(statuses.get(id)?.status ?? "")
    );
    // A message short of read although the simulator delivered all its callbacks: one was lost.
    const lostCallbacks = ids.filter((id) => {
      const m = statuses.get(id);
      return m && (m.status === "sent" || m.status === "delivered") &&
        !(m.waMessageId && givenUp.has(m.waMessageId));
    });
    const duplicated = Object.entries(counts).filter(([, n]) => n > 1);
    const duplicates = duplicated.reduce((sum, [, n]) => sum + n - 1, 0);
    const rescued = servers.reduce((n, s) => n + rescuedJobs(s.proc.stderr), 0);
    const unknownUpstream = Object.keys(counts).filter((id) =>
      !tally.accepted.has(id)
    );

    console.log([
      "crash test summary",
      ...killLog.map((l) => `  ${l}`),
      `  accepted ${ids.length} (batch ${tally.viaBatch}, single ${tally.viaSingle}, idempotent ${tally.viaIdempotent} of which ${tally.idempotentReplays} replayed after a failed attempt); ${tally.requestErrors} requests failed while the server was down; submitting took ${submitMs} ms`,
      `  jobs running at the kills: ${heldAtKills.size}; rescued after their lease expired: ${rescued}`,
      `  statuses after ${settleMs} ms: ${JSON.stringify(byStatus)}`,
      `  upstream sends ${upstream.messages.length}, distinct messages ${
        Object.keys(counts).length
      } (${unknownUpstream.length} sent but never confirmed to a client)`,
      `  duplicates ${duplicates} over ${duplicated.length} messages (bound ${
        KILLS * WORKERS
      })`,
      `  callbacks the simulator gave up on: ${givenUp.size}`,
      `  total ${Date.now() - started} ms`,
    ].join("\n"));

    const sample = (list: string[]) => JSON.stringify(list.slice(0, 5));
    assert.ok(ids.length >= TARGET, `only ${ids.length} accepted`);
    assert.equal(
      missing.length,
      0,
      `accepted but missing from the DB: ${sample(missing)}`,
    );
    assert.equal(
      notFinal.length,
      0,
      `still queued after the deadline: ${
        sample(notFinal)
      }\n${server.output()}`,
    );
    assert.equal(failed.length, 0, `failed: ${sample(failed)}`);
    assert.equal(
      neverUpstream.length,
      0,
      `never reached the upstream: ${sample(neverUpstream)}`,
    );
    assert.equal(
      reachedButBelowSent.length,
      0,
      `reached the upstream but not sent: ${sample(reachedButBelowSent)}`,
    );
    assert.equal(
      lostCallbacks.length,
      0,
      `status callbacks lost: ${sample(lostCallbacks)}`,
    );
    // Bound on duplicates: a send is repeated only when its upstream call
    // happened but the process died before committing the result, and the
    // status callbacks (matched by our opaque id) did not land before the
    // job's lease was rescued. Only a job holding a worker slot makes an
    // upstream call, so at most WORKERS calls are in flight per kill. The
    // governor's burst does not add to it: a token without a free slot sends
    // nothing. Hence duplicates <= KILLS x WORKERS.
    assert.ok(
      duplicates <= KILLS * WORKERS,
      `${duplicates} duplicate sends exceed ${KILLS} kills x ${WORKERS} workers`,
    );
    // Honesty check: the kills must have hit running jobs, and the lease
    // rescue must have handed every one of them back.
    assert.ok(
      heldAtKills.size > 0,
      "no job was running at any kill: nothing was exercised",
    );
    assert.deepEqual(
      stillHeld,
      [],
      "jobs of a killed process were never handed back",
    );
  } finally {
    stopped = true; // clients still running after a failure give up
    if (server) await server[Symbol.asyncDispose]();
    await Deno.remove(dataDir, { recursive: true });
  }
});

/** Ids of the jobs marked running in the database under DATA_DIR (read beside the server). */
function runningJobs(dataDir: string): string[] {
  const db = new DatabaseSync(`${dataDir}/app.db`);
  try {
    db.exec("pragma busy_timeout = 5000");
    return db.prepare("select id from jobs where state = 'running'").all()
      .map((row) => String(row.id));
  } finally {
    db.close();
  }
}
