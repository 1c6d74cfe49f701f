import assert from "node:assert/strict";
import { JITTER, WEBHOOK_SCHEDULE_MS } from "../../src/jobs/retry_policy.ts";
import { verifySignature } from "../../src/domain/webhooks/envelope.ts";
import {
  createContact,
  type Json,
  nextPhone,
  type WebhookHarness,
  webhookTest,
} from "../_support/webhooks.ts";

async function log(h: WebhookHarness, id: string, query = ""): Promise<Json[]> {
  const res = await h.request(
    "GET",
    `/api/v2/webhooks/${id}/deliveries?limit=100${query}`,
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
}

async function hookOf(h: WebhookHarness, id: string): Promise<Json> {
  return (await h.request("GET", `/api/v2/webhooks/${id}`)).body.data;
}

const fail500 = () => new Response("down", { status: 500 });

webhookTest(
  "a failing delivery is retried on the published schedule, ten attempts in all",
  async (h, receiver) => {
    receiver.answer(fail500);
    const hook = await h.subscribe({
      url: receiver.url,
      events: ["contact.created"],
    });
    await createContact(h, nextPhone());
    for (let attempt = 1; attempt <= WEBHOOK_SCHEDULE_MS.length; attempt++) {
      assert.equal(await h.deliver(), 1, `attempt ${attempt} runs when due`);
      const rows = await log(h, hook.id);
      const done = rows.find((r) => r.attempt === attempt)!;
      assert.equal(done.status, "failed");
      assert.equal(done.statusCode, 500);
      assert.equal(done.outcome, "5xx");
      if (attempt === WEBHOOK_SCHEDULE_MS.length) {
        assert.equal(done.nextAttemptAt, null, "the last attempt ends it");
        assert.equal(rows.some((r) => r.status === "pending"), false);
        break;
      }
      const base = WEBHOOK_SCHEDULE_MS[attempt]!;
      const waited = Date.parse(done.nextAttemptAt) -
        Date.parse(done.attemptedAt);
      assert.ok(
        waited >= base * (1 - JITTER) - 1 && waited <= base * (1 + JITTER) + 1,
        `wait before attempt ${
          attempt + 1
        }: ${waited} ms, schedule ${base} ms ±20 %`,
      );
      const next = rows.find((r) => r.attempt === attempt + 1)!;
      assert.equal(next.status, "pending");
      assert.equal(next.nextAttemptAt, done.nextAttemptAt);
      assert.equal(next.eventId, done.eventId);
      // Not a moment early.
      h.clock.set(new Date(Date.parse(done.nextAttemptAt) - 1));
      assert.equal(await h.deliver(), 0, `attempt ${attempt + 1} waits`);
      h.clock.advance(1);
    }
    assert.equal(receiver.received.length, WEBHOOK_SCHEDULE_MS.length);
    const attempts = receiver.received.map((r) =>
      r.headers.get("x-service-webhook-attempt")
    );
    assert.deepEqual(
      attempts,
      WEBHOOK_SCHEDULE_MS.map((_, i) => String(i + 1)),
    );
    const bodies = receiver.received.map((r) => r.json);
    assert.deepEqual(bodies.map((b) => b.attempt), attempts.map(Number));
    assert.equal(new Set(bodies.map((b) => b.eventId)).size, 1);
    const first = receiver.received.map((r) =>
      r.headers.get("x-service-first-attempt-at")
    );
    assert.equal(
      new Set(first).size,
      1,
      "X-Service-First-Attempt-At is stable",
    );
    assert.equal(first[0], bodies[0].deliveredAt);
  },
);

webhookTest(
  "Retry-After on a 429 pushes the next attempt past the schedule",
  async (h, receiver) => {
    receiver.answer(() =>
      new Response("slow down", {
        status: 429,
        headers: { "Retry-After": "120" },
      })
    );
    const hook = await h.subscribe({
      url: receiver.url,
      events: ["contact.created"],
    });
    await createContact(h, nextPhone());
    await h.deliver();
    const [row] = await log(h, hook.id, "&status=failed");
    assert.equal(row.statusCode, 429);
    assert.equal(row.outcome, "4xx");
    assert.equal(
      Date.parse(row.nextAttemptAt) - Date.parse(row.attemptedAt),
      120_000,
    );
    h.clock.advance(60_000);
    assert.equal(await h.deliver(), 0);
    h.clock.advance(60_000);
    assert.equal(await h.deliver(), 1);
  },
);

webhookTest(
  "exactly 10 consecutive failures disable; a success resets the count; tests change nothing",
  async (h, receiver) => {
    let failing = true;
    receiver.answer(() => failing ? fail500() : new Response("ok"));
    const hook = await h.subscribe({
      url: receiver.url,
      events: ["contact.created"],
    });
    async function failures(n: number) {
      for (let i = 0; i < n; i++) await createContact(h, nextPhone());
      await h.deliver();
    }
    await failures(9);
    assert.equal((await hookOf(h, hook.id)).consecutiveFailures, 9);
    // A success resets the count.
    failing = false;
    await createContact(h, nextPhone());
    await h.deliver();
    let state = await hookOf(h, hook.id);
    assert.equal(state.consecutiveFailures, 0);
    assert.equal(state.lastDeliveryStatus, "success");
    failing = true;
    // Retries of the nine failed events are not due yet (5 s).
    await failures(9);
    state = await hookOf(h, hook.id);
    assert.equal(state.consecutiveFailures, 9);
    assert.equal(state.enabled, true);
    // A failing test delivery counts for nothing.
    await h.request("POST", `/api/v2/webhooks/${hook.id}/test`);
    await h.deliver();
    assert.equal((await hookOf(h, hook.id)).consecutiveFailures, 9);
    // The tenth consecutive failure disables it.
    await failures(1);
    state = await hookOf(h, hook.id);
    assert.equal(state.consecutiveFailures, 10);
    assert.equal(state.enabled, false);
    assert.equal(state.disabledReason, "auto");
    assert.equal(state.disabledAt, h.clock.now().toISOString());
    assert.equal(h.container.metrics.webhookAutoDisabled.get(), 1);
    // Its queue ends at once: the 19 queued retries are skipped, their jobs done.
    assert.equal((await log(h, hook.id, "&status=pending")).length, 0);
    assert.equal((await log(h, hook.id, "&status=skipped")).length, 19);
    const waiting = await h.container.db.selectFrom("jobs").select("id")
      .where("kind", "=", "webhook.deliver")
      .where("state", "in", ["available", "retryable"]).execute();
    assert.equal(waiting.length, 0);

    // While disabled: new events are skipped rows, queued retries are skipped when due, nothing is sent.
    const sent = receiver.received.length;
    await createContact(h, nextPhone());
    h.clock.advance(60_000);
    await h.deliver();
    assert.equal(receiver.received.length, sent);
    const skipped = await log(h, hook.id, "&status=skipped");
    assert.equal(skipped.length, 1 + 19, "1 new event and 19 queued retries");
    assert.ok(skipped.every((r) => r.statusCode === null));
    assert.equal((await log(h, hook.id, "&status=pending")).length, 0);
    // A disabled subscription still takes tests, but not replays.
    const replayWhileOff = await h.request(
      "POST",
      `/api/v2/webhooks/${hook.id}/replay/${skipped[0].id}`,
    );
    assert.equal(replayWhileOff.status, 409);
    assert.equal(replayWhileOff.body.error.code, "WEBHOOK_DISABLED");

    // Re-enabling resets the counter; a skipped event replays with its own eventId.
    failing = false;
    const on = await h.request("PATCH", `/api/v2/webhooks/${hook.id}`, {
      body: { enabled: true },
    });
    assert.equal(on.body.data.consecutiveFailures, 0);
    const newest = skipped.find((r) => r.attempt === 1)!;
    const replay = await h.request(
      "POST",
      `/api/v2/webhooks/${hook.id}/replay/${newest.id}`,
    );
    assert.equal(replay.status, 202, JSON.stringify(replay.body));
    assert.equal(replay.body.data.kind, "replay");
    assert.equal(replay.body.data.eventId, newest.eventId);
    assert.equal(await h.deliver(), 1);
    const last = receiver.received.at(-1)!;
    assert.equal(last.json.eventId, newest.eventId);
    assert.equal(last.json.event, "contact.created");
    assert.equal(last.json.attempt, 1);
    assert.equal((await hookOf(h, hook.id)).lastDeliveryStatus, "success");
  },
);

webhookTest(
  "after rotation every attempt, queued retries included, verifies only with the new secret",
  async (h, receiver) => {
    receiver.answer(fail500);
    const hook = await h.subscribe({
      url: receiver.url,
      events: ["contact.created"],
    });
    await createContact(h, nextPhone());
    await h.deliver();
    const before = receiver.received[0]!;
    const nowSeconds = () => Math.floor(h.clock.now().getTime() / 1_000);
    const check = (secret: string, r: typeof before) =>
      verifySignature(secret, r.headers.get("x-service-signature")!, r.raw, {
        nowSeconds: nowSeconds(),
      });
    assert.equal(check(hook.secret, before), true);
    const rotated = await h.request(
      "POST",
      `/api/v2/webhooks/${hook.id}/rotate-secret`,
    );
    const secret = rotated.body.data.secret;
    receiver.answer(() => new Response("ok"));
    h.clock.advance(10_000);
    assert.equal(await h.deliver(), 1, "the retry queued before rotation");
    await createContact(h, nextPhone());
    assert.equal(await h.deliver(), 1, "a new event");
    await h.request("POST", `/api/v2/webhooks/${hook.id}/test`);
    assert.equal(await h.deliver(), 1, "a test");
    for (const r of receiver.received.slice(1)) {
      assert.equal(check(secret, r), true);
      assert.equal(check(hook.secret, r), false, "the old secret is dead");
    }
  },
);

webhookTest(
  "the delivery log pages newest first and filters by status, event and time",
  async (h, receiver) => {
    let n = 0;
    receiver.answer(() => ++n % 2 ? new Response("ok") : fail500());
    const hook = await h.subscribe({
      url: receiver.url,
      events: ["contact.created"],
    });
    const started = h.clock.now().toISOString();
    for (let i = 0; i < 6; i++) {
      await createContact(h, nextPhone());
      h.clock.advance(1_000);
    }
    await h.deliver();
    const all = await log(h, hook.id);
    assert.equal(all.length, 9, "6 attempts and 3 pending retries");
    const sorted = [...all].sort((a, b) =>
      b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id)
    );
    assert.deepEqual(all.map((r) => r.id), sorted.map((r) => r.id));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = `?limit=4${cursor ? `&cursor=${cursor}` : ""}`;
      const page = await h.request(
        "GET",
        `/api/v2/webhooks/${hook.id}/deliveries${q}`,
      );
      seen.push(...page.body.data.map((r: Json) => r.id));
      cursor = page.body.meta.hasMore ? page.body.meta.cursor : null;
    } while (cursor);
    assert.deepEqual(seen, all.map((r) => r.id));
    assert.equal((await log(h, hook.id, "&status=success")).length, 3);
    assert.equal((await log(h, hook.id, "&status=failed")).length, 3);
    assert.equal((await log(h, hook.id, "&status=pending")).length, 3);
    assert.equal((await log(h, hook.id, "&event=message.received")).length, 0);
    const late = await log(
      h,
      hook.id,
      `&since=${
        encodeURIComponent(new Date(Date.parse(started) + 3_000).toISOString())
      }`,
    );
    assert.ok(late.length > 0 && late.length < all.length);
    const early = await log(
      h,
      hook.id,
      `&until=${encodeURIComponent(started)}`,
    );
    assert.equal(early.length, 0);
    const bad = await h.request(
      "GET",
      `/api/v2/webhooks/${hook.id}/deliveries?status=lost`,
    );
    assert.equal(bad.status, 400);
  },
);
