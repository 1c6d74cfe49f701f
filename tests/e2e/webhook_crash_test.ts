// deno-lint-ignore-file no-console
// Webhook crash test: customers write (signed Meta callbacks through the
// simulator process) and the API sends templates (three status callbacks
// each) while the server is killed with SIGKILL three times and restarted on
// the same DATA_DIR. Two subscriptions listen to every event kind. Afterwards
// every (event, subscription) pair of the catch-up feed has reached the
// receiver, correctly signed; duplicates are counted and bounded by what can
// be in flight at a kill. Every random choice (kill moments, the receiver's
// answer delays, which customer writes) comes from one seed, printed at the
// start; WEBHOOK_CRASH_SEED=<seed> replays the same choices (the processes'
// own timing still varies).
import assert from "node:assert/strict";
import { verifySignature } from "../../src/domain/webhooks/envelope.ts";
import { waitFor } from "../_support/wait.ts";
import {
  api,
  type ServerProcess,
  startEngineSetup,
  startServer,
} from "./_process.ts";
import {
  randomBetween,
  seedCrashAccount,
  seededRandom,
  seedFromEnv,
  sleep,
} from "./_crash_clients.ts";

const APP_SECRET = "e2e-webhook-crash-app-secret";
const CHANNEL_PHONE = "+15550100077";
const UPSTREAM_ID = "106540352247777";
const KILLS = 3;
const WEBHOOK_CONCURRENCY = 32;
const SETTLE_DEADLINE_MS = 90_000;
const ALL_EVENTS = [
  "message.received",
  "message.status_changed",
  "conversation.created",
  "contact.created",
];

interface Arrival {
  count: number;
  firstAt: number;
  signed: boolean;
}

/**
 * Records every delivery by (eventId, webhookId) and checks its signature. It
 * answers after 20-150 ms, so attempts are on the wire when a kill comes;
 * `open` counts requests read and not answered yet.
 */
function startRecorder(
  secrets: Map<string, string>,
  random: () => number,
) {
  const arrivals = new Map<string, Arrival>();
  let requests = 0;
  let open = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const raw = await req.text();
      requests++;
      const body = JSON.parse(raw);
      const secret = secrets.get(body.webhookId) ?? "";
      const signed = verifySignature(
        secret,
        req.headers.get("x-service-signature") ?? "",
        raw,
        { nowSeconds: Math.floor(Date.now() / 1_000) },
      );
      const key = `${body.eventId}|${body.webhookId}`;
      const seen = arrivals.get(key);
      if (seen) {
        seen.count++;
        seen.signed &&= signed;
      } else arrivals.set(key, { count: 1, firstAt: Date.now(), signed });
      open++;
      await sleep(randomBetween(20, 150, random));
      open--;
      return new Response("ok");
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    arrivals,
    get requests() {
      return requests;
    },
    get open() {
      return open;
    },
    stop: () => server.shutdown(),
  };
}

/** Every event of the feed, following meta.cursor to the end. */
async function allEvents(baseUrl: string, key: string) {
  const out: Array<{ eventId: string; createdAt: string; type: string }> = [];
  let cursor: string | null = null;
  for (;;) {
    const q: string = `?limit=100${cursor ? `&cursor=${cursor}` : ""}`;
    const res = await api(baseUrl, key, "GET", `/events${q}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    out.push(...res.body.data);
    if (!res.body.meta.hasMore) return out;
    cursor = res.body.meta.cursor;
  }
}

Deno.test("webhook crash: kill -9 under inbound messages and status callbacks loses no delivery", async () => {
  const started = Date.now();
  const seed = seedFromEnv("WEBHOOK_CRASH_SEED");
  console.log(
    `webhook crash seed ${seed} (replay: WEBHOOK_CRASH_SEED=${seed} deno test -A tests/e2e/webhook_crash_test.ts)`,
  );
  const random = seededRandom(seed);
  const setup = await startEngineSetup({
    appSecret: APP_SECRET,
    dataDirPrefix: "bm-e2e-whcrash-",
    env: {
      WEBHOOK_ALLOW_HTTP: "true",
      WEBHOOK_CONCURRENCY: String(WEBHOOK_CONCURRENCY),
      WORKERS: "8",
    },
  });
  await using sim = setup.sim;
  const { port, dataDir, env } = setup;
  const secrets = new Map<string, string>();
  const recorder = startRecorder(secrets, random);
  let server: ServerProcess | undefined;
  let done = false;
  try {
    const { key, channelId } = await seedCrashAccount(env, {
      slug: "hooks",
      phone: CHANNEL_PHONE,
      upstreamId: UPSTREAM_ID,
      simulatorUrl: sim.url,
      template: { name: "hook_notice", body: "Aviso" },
    });
    server = await startServer({ env, port, dataDir });
    const baseUrl = server.baseUrl;
    const hooks: string[] = [];
    for (const path of ["/a", "/b"]) {
      const res = await api(baseUrl, key, "POST", "/webhooks", {
        body: { url: `${recorder.url}${path}`, events: ALL_EVENTS },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      secrets.set(res.body.data.id, res.body.data.secret);
      hooks.push(res.body.data.id);
    }

    let inbound = 0;
    let sends = 0;
    let batched = 0;
    const customers = Array.from(
      { length: 150 },
      (_, i) => `+549115${String(i).padStart(7, "0")}`,
    );
    const writers = [
      (async () => {
        while (!done) {
          const from = customers[randomBetween(0, customers.length, random)]!;
          const res = await fetch(`${sim.url}/_sim/inbound`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({
              to: CHANNEL_PHONE,
              from,
              name: "Cliente",
              type: "text",
              text: { body: `hola ${inbound}` },
            }),
          }).catch(() => undefined);
          await res?.body?.cancel();
          if (res?.ok) inbound++;
          await sleep(15);
        }
      })(),
      (async () => {
        let n = 0;
        while (!done) {
          const res = await api(baseUrl, key, "POST", "/messages", {
            body: {
              phoneNumberId: channelId,
              to: `+549116${String(++n).padStart(7, "0")}`,
              type: "template",
              template: { name: "hook_notice", language: { code: "es_AR" } },
            },
          }).catch(() => undefined);
          if (res?.status === 201) sends++;
          await sleep(25);
        }
      })(),
      // Small campaigns (their events go in the webhook pool's batch lane):
      // two new recipients and two customers who may be writing, whose
      // contact.created a reply then takes along to the live lane.
      (async () => {
        let n = 0;
        while (!done) {
          const to = [
            `+549117${String(++n).padStart(7, "0")}`,
            `+549117${String(++n).padStart(7, "0")}`,
            customers[randomBetween(0, customers.length, random)]!,
            customers[randomBetween(0, customers.length, random)]!,
          ];
          const res = await api(baseUrl, key, "POST", "/messages/batch", {
            body: {
              defaultPhoneNumberId: channelId,
              messages: to.map((phone) => ({
                to: phone,
                type: "template",
                template: {
                  name: "hook_notice",
                  language: { code: "es_AR" },
                },
              })),
            },
          }).catch(() => undefined);
          if (res?.status === 202) batched += res.body.data.accepted;
          await sleep(300);
        }
      })(),
    ];

    const kills: Array<{ at: number; back: number; open: number }> = [];
    for (let k = 1; k <= KILLS; k++) {
      await waitFor(() => recorder.requests >= 150 * k, {
        timeoutMs: 60_000,
        what: `${150 * k} deliveries before kill ${k}`,
      });
      await sleep(randomBetween(200, 1_500, random));
      await server.kill9();
      const at = Date.now();
      await sleep(20); // bytes already on the wire reach the recorder
      const open = recorder.open;
      server = await server.restart();
      kills.push({ at, back: Date.now(), open });
    }
    // Write on until the run holds enough events, however slow the machine.
    await sleep(2_000);
    await waitFor(() => recorder.arrivals.size >= 2 * 350, {
      timeoutMs: 60_000,
      what: "350 events delivered to both subscriptions",
    });
    done = true;
    await Promise.all(writers);

    // Every (event, subscription) pair of the feed reaches the receiver.
    let events = await allEvents(server.baseUrl, key);
    let missing: string[] = [];
    const deadline = Date.now() + SETTLE_DEADLINE_MS;
    for (;;) {
      events = await allEvents(server.baseUrl, key);
      missing = events.flatMap((e) =>
        hooks.map((h) => `${e.eventId}|${h}`).filter((k) =>
          !recorder.arrivals.has(k)
        )
      );
      if (missing.length === 0 || Date.now() > deadline) break;
      await sleep(500);
    }
    const pairs = events.length * hooks.length;
    const duplicates = [...recorder.arrivals.values()]
      .reduce((n, a) => n + a.count - 1, 0);
    const unsigned = [...recorder.arrivals.entries()].filter(([, a]) =>
      !a.signed
    );
    const known = new Set(
      events.flatMap((e) => hooks.map((h) => `${e.eventId}|${h}`)),
    );
    const unknown = [...recorder.arrivals.keys()].filter((k) => !known.has(k));
    // Deliveries of events created before a kill that arrived after the restart: the backlog survived.
    const createdAt = new Map(
      events.map((e) => [e.eventId, Date.parse(e.createdAt)]),
    );
    const survived = kills.map(({ at, back }) =>
      [...recorder.arrivals.entries()].filter(([k, a]) =>
        (createdAt.get(k.split("|")[0]!) ?? Infinity) < at && a.firstAt >= back
      ).length
    );
    const types: Record<string, number> = {};
    for (const e of events) types[e.type] = (types[e.type] ?? 0) + 1;

    console.log([
      `webhook crash test summary (seed ${seed})`,
      `  kills at ${kills.map((k) => new Date(k.at).toISOString()).join(", ")}`,
      `  customers wrote ${inbound} messages, API accepted ${sends} sends and ${batched} batch items`,
      `  events ${events.length} ${JSON.stringify(types)}; pairs ${pairs}`,
      `  delivered pairs ${recorder.arrivals.size}, requests ${recorder.requests}, duplicates ${duplicates} (bound ${
        KILLS * WEBHOOK_CONCURRENCY
      }); unanswered at the kills: ${kills.map((k) => k.open).join(", ")}`,
      `  pre-kill deliveries that arrived after each restart: ${
        survived.join(", ")
      }`,
      `  total ${Date.now() - started} ms`,
    ].join("\n"));

    assert.ok(events.length > 300, `only ${events.length} events`);
    assert.ok(batched > 0, "no batch item was accepted");
    for (const t of ALL_EVENTS) assert.ok(types[t], `no ${t} event`);
    assert.deepEqual(
      missing.slice(0, 5),
      [],
      `${missing.length} pairs never delivered\n${server.output()}`,
    );
    assert.deepEqual(unknown.slice(0, 5), [], "deliveries of unknown events");
    assert.deepEqual(
      unsigned.slice(0, 5),
      [],
      "deliveries failing verification",
    );
    // A pair is sent twice only when its attempt was on the wire when the
    // process died, before its result was committed; at most
    // WEBHOOK_CONCURRENCY attempts are in flight at once.
    assert.ok(
      duplicates <= KILLS * WEBHOOK_CONCURRENCY,
      `${duplicates} duplicates exceed ${KILLS} kills x ${WEBHOOK_CONCURRENCY}`,
    );
    // Honesty check: the kills must have left deliveries to finish.
    assert.ok(
      survived.some((n) => n > 0),
      "no kill left a delivery behind: nothing was exercised",
    );
  } finally {
    done = true;
    if (server) await server[Symbol.asyncDispose]();
    await recorder.stop();
    await Deno.remove(dataDir, { recursive: true });
  }
});
