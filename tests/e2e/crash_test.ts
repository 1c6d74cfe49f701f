// deno-lint-ignore-file no-console
// crash: the server is killed with SIGKILL three times while ~2,000 template
// sends are being accepted and delivered, and restarted on the same DATA_DIR
// and port. The simulator is its own process, so it keeps every send it saw.
// Every message the API accepted (2xx) must reach the upstream and end at
// least `sent`; duplicates are reported and bounded.
import assert from "node:assert/strict";
import { freePort } from "../_support/wait.ts";
import {
  api,
  cliJson,
  type ServerProcess,
  simGet,
  simPost,
  startServer,
  startSimulatorProcess,
  TEST_SECRET_KEY,
} from "./_process.ts";

const APP_SECRET = "e2e-crash-app-secret";
const CHANNEL_PHONE = "+15550100088";
const UPSTREAM_ID = "106540352248888";
const TEMPLATE = "crash_notice";
const TARGET = 2_000;
const KILLS = 3;
const WORKERS = 16;
/** Concurrent API clients submitting messages. */
const CLIENTS = 3;
/** After the last restart: leases are 30 s and the rescue cron ticks each minute, so up to ~90 s. */
const SETTLE_DEADLINE_MS = 120_000;
const FINAL = new Set(["sent", "delivered", "read", "failed"]);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const randomBetween = (lo: number, hi: number) =>
  lo + Math.floor(Math.random() * (hi - lo));

let numberSeq = 0;
/** A fresh Argentine mobile number per message: templates need no window. */
function nextNumber(): string {
  return `+549114${String(++numberSeq).padStart(7, "0")}`;
}

function templateMessage(to: string) {
  return {
    to,
    type: "template",
    template: { name: TEMPLATE, language: { code: "es_AR" } },
  };
}

interface Tally {
  accepted: Set<string>;
  viaBatch: number;
  viaSingle: number;
  viaIdempotent: number;
  idempotentReplays: number;
  requestErrors: number;
}

/**
 * One client: alternates batches of 100 and runs of single sends (every
 * other one with an Idempotency-Key, retried with the same key when the
 * request fails). Only 2xx answers count as accepted.
 */
async function client(
  baseUrl: string,
  ctx: { key: string; channelId: string; tally: Tally; done: () => boolean },
  n: number,
): Promise<void> {
  const { tally } = ctx;
  for (let round = 0; !ctx.done(); round++) {
    try {
      if ((round + n) % 3 !== 2) {
        const r = await api(baseUrl, ctx.key, "POST", "/messages/batch", {
          body: {
            defaultPhoneNumberId: ctx.channelId,
            messages: Array.from(
              { length: 100 },
              () => templateMessage(nextNumber()),
            ),
          },
        });
        if (r.status !== 202) throw new Error(`batch answered ${r.status}`);
        for (const item of r.body.data.items) {
          assert.equal(item.result, "queued", JSON.stringify(item));
          tally.accepted.add(item.message.id);
          tally.viaBatch++;
        }
      } else {
        for (let i = 0; i < 10 && !ctx.done(); i++) {
          const body = {
            phoneNumberId: ctx.channelId,
            ...templateMessage(nextNumber()),
          };
          if (i % 2 === 0) {
            await idempotentSend(baseUrl, ctx, body);
          } else {
            const r = await api(baseUrl, ctx.key, "POST", "/messages", {
              body,
            });
            if (r.status !== 201) throw new Error(`send answered ${r.status}`);
            tally.accepted.add(r.body.data.id);
            tally.viaSingle++;
          }
        }
      }
    } catch (err) {
      if (err instanceof assert.AssertionError) throw err;
      tally.requestErrors++; // the server died under us: not accepted
      await sleep(50);
    }
  }
}

async function idempotentSend(
  baseUrl: string,
  ctx: { key: string; tally: Tally; done: () => boolean },
  body: unknown,
): Promise<void> {
  const key = crypto.randomUUID();
  for (let attempt = 1; attempt <= 200 && !ctx.done(); attempt++) {
    try {
      const r = await api(baseUrl, ctx.key, "POST", "/messages", {
        body,
        headers: { "idempotency-key": key },
      });
      if (r.status === 201) {
        ctx.tally.accepted.add(r.body.data.id);
        ctx.tally.viaIdempotent++;
        if (r.headers.get("idempotent-replayed") === "true") {
          ctx.tally.idempotentReplays++;
        }
        return;
      }
      throw new Error(`send answered ${r.status}`);
    } catch {
      ctx.tally.requestErrors++;
      await sleep(50); // server restarting: same key again
    }
  }
}

/** GET /messages/:id for each id, 16 at a time; undefined for a 404. */
async function fetchStatuses(
  baseUrl: string,
  key: string,
  ids: string[],
): Promise<
  Map<string, { status: string; waMessageId: string | null } | undefined>
> {
  const out = new Map<
    string,
    { status: string; waMessageId: string | null } | undefined
  >();
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < ids.length) {
      const id = ids[next++]!;
      const r = await api(baseUrl, key, "GET", `/messages/${id}`);
      if (r.status === 404) out.set(id, undefined);
      else if (r.status === 200) out.set(id, r.body.data);
      else throw new Error(`GET /messages/${id} answered ${r.status}`);
    }
  }));
  return out;
}

/** Wamids whose status callbacks the simulator gave up on (every retry failed while we were down). */
function givenUpWamids(simulatorStderr: string): Set<string> {
  const out = new Set<string>();
  for (const line of simulatorStderr.split("\n")) {
    if (!line.includes("Callback delivery failed")) continue;
    try {
      out.add(JSON.parse(line).wamid);
    } catch {
      // a partial line
    }
  }
  return out;
}

Deno.test("crash: kill -9 during sends loses no accepted message and bounds duplicates", async () => {
  const started = Date.now();
  const port = freePort();
  await using sim = await startSimulatorProcess({
    appSecret: APP_SECRET,
    callbackUrl: `http://127.0.0.1:${port}/meta/webhook`,
  });
  const dataDir = await Deno.makeTempDir({ prefix: "bm-e2e-crash-" });
  const env = {
    DATA_DIR: dataDir,
    SECRET_KEY: TEST_SECRET_KEY,
    META_APP_SECRET: APP_SECRET,
    META_VERIFY_TOKEN: "e2e-verify-token",
    META_GRAPH_URL: sim.graphUrl,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    WORKERS: String(WORKERS),
    LOG_LEVEL: "warn",
  };
  let server: ServerProcess | undefined;
  try {
    await cliJson(
      ["accounts", "create", "--name", "Crash", "--slug", "crash"],
      env,
    );
    const { key } = await cliJson([
      "keys",
      "create",
      "--account",
      "crash",
      "--scopes",
      "all",
      "--rate-limit",
      "1000000",
    ], env);
    const channel = await cliJson([
      "channels",
      "create",
      "--account",
      "crash",
      "--phone",
      CHANNEL_PHONE,
      "--display-name",
      "Crash line",
      "--upstream-phone-number-id",
      UPSTREAM_ID,
      "--waba-id",
      "102290129348888",
      "--access-token",
      "EAAG-crash",
    ], env);
    await cliJson([
      "templates",
      "create",
      "--account",
      "crash",
      "--name",
      TEMPLATE,
      "--language",
      "es_AR",
      "--category",
      "UTILITY",
      "--status",
      "approved",
      "--components",
      '[{"type":"BODY","text":"Tu pedido está en camino"}]',
    ], env);
    await simPost(sim.url, "numbers", {
      phoneNumberId: UPSTREAM_ID,
      displayPhoneNumber: CHANNEL_PHONE,
    });
    server = await startServer({ env, port, dataDir });
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
    const ctx = {
      key,
      channelId: channel.id,
      tally,
      done: () => killsDone >= KILLS && tally.accepted.size >= TARGET,
    };
    const clients = Array.from(
      { length: CLIENTS },
      (_, n) => client(baseUrl, ctx, n),
    );

    // The killer: each time after a random 200-1500 ms of sending, SIGKILL and restart.
    const killLog: string[] = [];
    for (let k = 1; k <= KILLS; k++) {
      // Wait until there is a backlog, so sends are in flight at the kill.
      while (tally.accepted.size < 150 * k) await sleep(20);
      const after = randomBetween(200, 1_500);
      await sleep(after);
      const acceptedAtKill = tally.accepted.size;
      await server.kill9();
      killsDone++;
      const down = Date.now();
      server = await server.restart();
      killLog.push(
        `kill ${k}: ${after} ms after start, ${acceptedAtKill} accepted, down ${
          Date.now() - down
        } ms`,
      );
    }
    await Promise.all(clients);
    const submittedAt = Date.now();

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
    const unknownUpstream = Object.keys(counts).filter((id) =>
      !tally.accepted.has(id)
    );

    console.log([
      "crash test summary",
      ...killLog.map((l) => `  ${l}`),
      `  accepted ${ids.length} (batch ${tally.viaBatch}, single ${tally.viaSingle}, idempotent ${tally.viaIdempotent} of which ${tally.idempotentReplays} replayed after a failed attempt); ${tally.requestErrors} requests failed while the server was down`,
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
  } finally {
    if (server) await server[Symbol.asyncDispose]();
    await Deno.remove(dataDir, { recursive: true });
  }
});
