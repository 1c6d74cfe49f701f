// The bookkeeping bench_pipeline's figures rest on: webhook deliveries and
// duplicates counted from what the receiver saw, and CPU read from /proc.
import assert from "node:assert/strict";
import { newId } from "../../src/ids.ts";
import {
  customerLags,
  enqueueSplit,
  eventsOutstanding,
  eventsPartial,
  newHooks,
  recordDelivery,
  type Run,
  statusLagsByLane,
} from "../../bench/_bench_pipeline_report.ts";
import { statCpuTicks } from "../../bench/_bench_serve.ts";
import type { Delivery } from "../../bench/_bench_receiver.ts";

function status(
  webhookId: string,
  eventId: string,
  messageId: string,
  newStatus: string,
): Delivery {
  return {
    at: Date.now(),
    event: "message.status_changed",
    eventId,
    webhookId,
    data: { id: messageId, newStatus },
  };
}

/** A run with batch messages `ids` and the given subscriptions; nothing else is read. */
function runWith(ids: string[], subscriptions: string[]): Run {
  const hooks = newHooks("read");
  hooks.subscriptions.push(...subscriptions);
  return {
    batchIds: new Set(ids),
    live: [],
    hooks,
    inbound: new Map(),
  } as unknown as Run;
}

Deno.test("a repeated eventId to one subscription is a duplicate, the same eventId to another is not", () => {
  const run = runWith(["m1"], ["s1", "s2"]);
  const e1 = newId();
  recordDelivery(run.hooks, status("s1", e1, "m1", "sent"));
  recordDelivery(run.hooks, status("s1", e1, "m1", "sent"));
  recordDelivery(run.hooks, status("s2", e1, "m1", "sent"));
  recordDelivery(run.hooks, {
    at: Date.now(),
    event: "contact.created",
    eventId: newId(),
    webhookId: "s2",
    data: { id: "c1" },
  });
  assert.deepEqual(run.hooks.duplicates.get("s1"), 1);
  assert.equal(run.hooks.duplicates.get("s2"), undefined);
  assert.deepEqual(
    [...run.hooks.counts.get("s1")!],
    [["message.status_changed", 1]],
  );
  assert.deepEqual([...run.hooks.counts.get("s2")!], [
    ["message.status_changed", 1],
    ["contact.created", 1],
  ]);
  assert.equal(run.hooks.lags.length, 3);
});

Deno.test("a message is outstanding until its final status reached every subscription once", () => {
  const run = runWith(["m1", "m2"], ["s1", "s2"]);
  assert.equal(eventsOutstanding(run), 2);
  const read1 = newId();
  recordDelivery(run.hooks, status("s1", newId(), "m1", "delivered"));
  recordDelivery(run.hooks, status("s1", read1, "m1", "read"));
  // A duplicate of s1's read must not stand in for s2's.
  recordDelivery(run.hooks, status("s1", read1, "m1", "read"));
  assert.equal(eventsOutstanding(run), 2);
  recordDelivery(run.hooks, status("s2", newId(), "m1", "read"));
  assert.equal(eventsOutstanding(run), 1);
  recordDelivery(run.hooks, status("s1", newId(), "m2", "read"));
  recordDelivery(run.hooks, status("s2", newId(), "m2", "read"));
  assert.equal(eventsOutstanding(run), 0);
});

Deno.test("an event is owed while it reached some subscriptions but not every one, and a duplicate does not stand in for a missing one", () => {
  const run = runWith(["m1"], ["s1", "s2"]);
  const contact = newId();
  const sent = newId();
  const contactCreated = (webhookId: string): Delivery => ({
    at: Date.now(),
    event: "contact.created",
    eventId: contact,
    webhookId,
    data: { id: "c1" },
  });
  assert.equal(eventsPartial(run.hooks), 0);
  recordDelivery(run.hooks, contactCreated("s1"));
  recordDelivery(run.hooks, contactCreated("s1"));
  recordDelivery(run.hooks, status("s2", sent, "m1", "sent"));
  assert.equal(eventsPartial(run.hooks), 2);
  recordDelivery(run.hooks, contactCreated("s2"));
  assert.equal(eventsPartial(run.hooks), 1);
  recordDelivery(run.hooks, status("s1", sent, "m1", "sent"));
  assert.equal(eventsPartial(run.hooks), 0);
});

Deno.test("CPU ticks are utime + stime even when the command name holds spaces and parentheses", () => {
  const stat =
    "4242 (deno (x) y) S 1 4242 4242 0 -1 4194560 1 0 0 0 1234 567 0 0 20 0 9 0 100 0 0";
  assert.equal(statCpuTicks(stat), 1234 + 567);
  const own = Deno.readTextFileSync(`/proc/${Deno.pid}/stat`);
  assert.ok(Number.isInteger(statCpuTicks(own)));
});

Deno.test("the enqueue phase's live latencies split at one second after the start; drain sends and unsent ones are left out", () => {
  const started = 1_000_000;
  const send = (id: string | null, at: number, phase: "enqueue" | "drain") => ({
    id,
    ch: 0,
    acceptAt: started + at,
    httpMs: 0,
    phase,
    status: id ? 201 : 0,
  });
  const run = {
    started,
    live: [
      send("a", 0, "enqueue"),
      send("b", 999, "enqueue"),
      send("c", 1_000, "enqueue"),
      send("d", 1_500, "drain"),
      send(null, 10, "enqueue"),
      send("never", 20, "enqueue"),
    ],
    firstAt: new Map([
      ["a", started + 400],
      ["b", started + 1_099],
      ["c", started + 1_050],
      ["d", started + 1_510],
    ]),
  };
  assert.deepEqual(enqueueSplit(run), { firstSecond: [400, 100], after: [50] });
});

Deno.test("status event lags are split by the lane of their message: live sends apart from batch messages", () => {
  const run = runWith(["b1"], ["s1"]);
  (run.live as { id: string | null }[]).push({ id: "l1" }, { id: null });
  const at = Date.now();
  const lagOf = (messageId: string, lag: number): Delivery => ({
    ...status("s1", newId(at - lag), messageId, "sent"),
    at,
  });
  recordDelivery(run.hooks, lagOf("l1", 40));
  recordDelivery(run.hooks, lagOf("b1", 900));
  recordDelivery(run.hooks, lagOf("b1", 700));
  recordDelivery(run.hooks, {
    at,
    event: "contact.created",
    eventId: newId(at - 5),
    webhookId: "s1",
    data: { id: "c1" },
  });
  const { live, batch } = statusLagsByLane(run);
  assert.deepEqual(live, [40]);
  assert.deepEqual(batch, [900, 700]);
  assert.equal(run.hooks.lags.length, 4);
});

Deno.test("a customer's message.received lag runs from when they wrote to each receipt; other customers' are left out", () => {
  const run = runWith([], ["s1", "s2"]);
  run.inbound.set("+5491100000001", 1_000);
  const received = (
    webhookId: string,
    phone: string,
    at: number,
  ): Delivery => ({
    at,
    event: "message.received",
    eventId: newId(at),
    webhookId,
    data: { id: "m", contact: { phoneNumber: phone } },
  });
  recordDelivery(run.hooks, received("s1", "+5491100000001", 1_040));
  recordDelivery(run.hooks, received("s2", "+5491100000001", 1_250));
  recordDelivery(run.hooks, received("s1", "+5491100000009", 1_100));
  assert.deepEqual(customerLags(run), [40, 250]);
});
