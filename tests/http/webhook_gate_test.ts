import assert from "node:assert/strict";
import { ManualClock } from "../../src/clock.ts";
import { AppError } from "../../src/errors.ts";
import {
  type GateRequest,
  type GateTicket,
  WEBHOOK_GATE_LIMITS,
  WebhookGate,
  type WebhookGateLimits,
} from "../../src/http/webhook_gate.ts";

const KB = 1024;
const LIMITS: WebhookGateLimits = {
  ...WEBHOOK_GATE_LIMITS,
  maxReads: 4,
  maxBufferedBytes: 100 * KB,
  blockAfter: 3,
};

/** A gate on a manual clock whose sweeps run only when the test says so. */
function manualGate(limits: Partial<WebhookGateLimits> = {}) {
  const clock = new ManualClock();
  const refused: string[] = [];
  const gate = new WebhookGate(clock, { ...LIMITS, ...limits }, {
    schedule: () => () => {},
    events: { refused: (reason) => refused.push(reason) },
  });
  return { clock, gate, refused };
}

/** The proxy's address: every sender has it, so it tells nobody apart. */
function shared(bytes = KB): GateRequest {
  return { address: "127.0.0.1", distinct: false, bytes };
}

function from(address: string, bytes = KB): GateRequest {
  return { address, distinct: true, bytes };
}

/** Where an enter() stands right now: admitted, waiting, or refused with a code. */
function track(entered: () => Promise<GateTicket>) {
  const state: {
    ticket?: GateTicket;
    error?: string;
    waiting: boolean;
  } = { waiting: true };
  try {
    entered().then(
      (ticket) => Object.assign(state, { ticket, waiting: false }),
      (err) => Object.assign(state, { error: code(err), waiting: false }),
    );
  } catch (err) {
    Object.assign(state, { error: code(err), waiting: false });
  }
  return state;
}

function code(err: unknown): string {
  assert.ok(err instanceof AppError, String(err));
  return err.code;
}

/** Lets settled promises run their callbacks. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

Deno.test("without distinct addresses no failure count ever refuses a sender: forged posts from the proxy's address do not block Meta's", async () => {
  const { gate } = manualGate();
  for (let i = 0; i < 50; i++) (await gate.enter(shared())).done(true);
  const meta = await gate.enter(shared());
  meta.done(false);
  assert.equal(gate.stats().reads, 0);
});

Deno.test("a post that does not fit waits instead of being refused, and is admitted when a read ends", async () => {
  const { gate, clock } = manualGate();
  const held = await Promise.all([1, 2, 3, 4].map(() => gate.enter(shared())));
  const waiting = track(() => gate.enter(shared()));
  await tick();
  assert.equal(waiting.waiting, true);
  assert.equal(gate.stats().waiting, 1);
  clock.advance(50); // too young to evict
  gate.sweep();
  await tick();
  assert.equal(waiting.waiting, true);
  held[0]!.done(false);
  await tick();
  assert.ok(waiting.ticket, "admitted as soon as a slot is free");
  assert.deepEqual(
    { reads: gate.stats().reads, waiting: gate.stats().waiting },
    { reads: 4, waiting: 0 },
  );
});

Deno.test("a post waits at most maxWaitMs, then it is refused 503", async () => {
  const { gate, clock, refused } = manualGate({
    evictAfterMs: 60_000,
    graceMs: 60_000,
  });
  await Promise.all([1, 2, 3, 4].map(() => gate.enter(shared())));
  const waiting = track(() => gate.enter(shared()));
  clock.advance(LIMITS.maxWaitMs - 1);
  gate.sweep();
  await tick();
  assert.equal(waiting.waiting, true);
  clock.advance(1);
  gate.sweep();
  await tick();
  assert.equal(waiting.error, "SERVICE_UNAVAILABLE");
  assert.deepEqual(refused, ["full"]);
});

Deno.test("when full, the slowest read old enough to judge is evicted for a waiting post", async () => {
  const { gate, clock, refused } = manualGate();
  const reads = await Promise.all([1, 2, 3, 4].map(() => gate.enter(shared())));
  [4_000, 3_000, 1_000, 2_000].forEach((n, i) => reads[i]!.received(n));
  const waiting = track(() => gate.enter(shared()));
  await tick();
  assert.equal(waiting.waiting, true, "nobody is old enough yet");
  clock.advance(LIMITS.evictAfterMs);
  gate.sweep();
  await tick();
  assert.ok(waiting.ticket);
  assert.equal(reads[2]!.signal.aborted, true);
  assert.equal(code(reads[2]!.signal.reason), "SERVICE_UNAVAILABLE");
  assert.deepEqual(reads.map((t) => t.signal.aborted), [
    false,
    false,
    true,
    false,
  ]);
  assert.deepEqual(refused, ["evicted"]);
  reads[2]!.done(true); // the route ends it; nothing is counted twice
  assert.equal(gate.stats().reads, 4);
});

Deno.test("bytes are bounded: a body reserves its length, and bytes buffered never pass the bound", async () => {
  const { gate } = manualGate({ maxReads: 16 });
  const big = await Promise.all(
    [1, 2, 3].map(() => gate.enter(shared(30 * KB))),
  );
  assert.equal(gate.stats().reservedBytes, 90 * KB);
  const next = track(() => gate.enter(shared(30 * KB)));
  const small = track(() => gate.enter(shared(10 * KB)));
  await tick();
  assert.equal(next.waiting, true);
  assert.ok(
    small.ticket,
    "a body that fits is not held behind one that does not",
  );
  big.forEach((t) => t.received(30 * KB));
  small.ticket!.received(10 * KB);
  assert.equal(gate.stats().bufferedBytes, 100 * KB);
  assert.equal(next.waiting, true);
  big[0]!.done(false);
  await tick();
  assert.ok(next.ticket, "admitted once its bytes are free");
  assert.ok(gate.stats().reservedBytes <= LIMITS.maxBufferedBytes);
  assert.ok(gate.stats().peakBufferedBytes <= LIMITS.maxBufferedBytes);
  assert.equal(gate.stats().peakBufferedBytes, 100 * KB);
});

Deno.test("waiting posts go oldest first, but one that does not fit holds back none that do", async () => {
  const { gate } = manualGate({ maxReads: 2, evictAfterMs: 60_000 });
  const first = await gate.enter(shared(60 * KB));
  const second = await gate.enter(shared(KB));
  const large = track(() => gate.enter(shared(50 * KB)));
  const small1 = track(() => gate.enter(shared(KB)));
  const small2 = track(() => gate.enter(shared(KB)));
  second.done(false);
  await tick();
  assert.ok(small1.ticket, "the large one does not fit: the next one goes");
  assert.equal(small2.waiting, true);
  first.done(false);
  await tick();
  assert.ok(large.ticket, "then the oldest");
  assert.equal(small2.waiting, true);
});

Deno.test("a read keeping pace is evicted only for a smaller body, or for one about to be refused", async () => {
  const { gate, clock } = manualGate({ maxReads: 2 });
  const held = await Promise.all([1, 2].map(() => gate.enter(shared(30 * KB))));
  held[0]!.received(29 * KB);
  held[1]!.received(20 * KB);
  clock.advance(LIMITS.evictAfterMs);
  const same = track(() => gate.enter(shared(30 * KB)));
  gate.sweep();
  await tick();
  assert.equal(same.waiting, true, "posts of one size cannot churn each other");
  const smaller = track(() => gate.enter(shared(KB)));
  await tick();
  assert.ok(smaller.ticket);
  assert.deepEqual(held.map((t) => t.signal.aborted), [false, true]);
  clock.advance(LIMITS.maxWaitMs - LIMITS.evictAfterMs);
  gate.sweep();
  await tick();
  assert.ok(
    same.ticket,
    "at its deadline it evicts the slowest instead of being refused",
  );
  assert.equal(held[0]!.signal.aborted, true);
});

Deno.test("after its first second a body slower than the minimum rate is dropped; a faster one reads on", async () => {
  const { gate, clock, refused } = manualGate({
    maxBufferedBytes: 1024 * KB,
  });
  const slow = await gate.enter(shared(200 * KB));
  const fast = await gate.enter(shared(200 * KB));
  slow.received(10 * KB);
  fast.received(70 * KB);
  clock.advance(LIMITS.graceMs - 1);
  gate.sweep();
  assert.equal(slow.signal.aborted, false, "never within the first second");
  clock.advance(1);
  gate.sweep();
  assert.equal(slow.signal.aborted, true);
  assert.match((slow.signal.reason as AppError).message, /slower than 65536/);
  assert.equal(fast.signal.aborted, false);
  assert.deepEqual(refused, ["too_slow"]);
  clock.advance(LIMITS.maxReadMs);
  fast.received(LIMITS.minBytesPerSecond * 12);
  gate.sweep();
  assert.equal(fast.signal.aborted, true, "not whole within maxReadMs");
  assert.deepEqual(refused, ["too_slow", "timeout"]);
});

Deno.test("a distinct address is refused unread after blockAfter failures within the window; others are heard", async () => {
  const { gate, clock, refused } = manualGate();
  for (let i = 0; i < LIMITS.blockAfter; i++) {
    (await gate.enter(from("203.0.113.9"))).done(true);
  }
  const blocked = track(() => gate.enter(from("203.0.113.9")));
  assert.equal(blocked.error, "RATE_LIMITED");
  assert.deepEqual(refused, ["blocked"]);
  (await gate.enter(from("203.0.113.10"))).done(false);
  clock.advance(LIMITS.windowMs);
  (await gate.enter(from("203.0.113.9"))).done(false);
});

Deno.test("a verified post skips no limit: the address's next posts meet the same bounds", async () => {
  const { gate } = manualGate();
  (await gate.enter(from("173.252.127.1"))).done(false);
  await Promise.all([1, 2, 3, 4].map(() => gate.enter(from("173.252.127.1"))));
  const fifth = track(() => gate.enter(from("173.252.127.1")));
  await tick();
  assert.equal(
    fifth.waiting,
    true,
    "no uncounted ticket after a verified post",
  );
  assert.equal(gate.stats().reads, LIMITS.maxReads);
});

Deno.test("a verified post clears its address's failures", async () => {
  const { gate } = manualGate();
  for (let i = 0; i < LIMITS.blockAfter - 1; i++) {
    (await gate.enter(from("173.252.127.1"))).done(true);
  }
  (await gate.enter(from("173.252.127.1"))).done(false);
  for (let i = 0; i < LIMITS.blockAfter - 1; i++) {
    (await gate.enter(from("173.252.127.1"))).done(true);
  }
  (await gate.enter(from("173.252.127.1"))).done(false);
});

Deno.test("waiting posts are bounded: past maxWaiting one is refused at once", async () => {
  const { gate } = manualGate({ maxWaiting: 2, evictAfterMs: 60_000 });
  await Promise.all([1, 2, 3, 4].map(() => gate.enter(shared())));
  track(() => gate.enter(shared()));
  track(() => gate.enter(shared()));
  assert.equal(track(() => gate.enter(shared())).error, "SERVICE_UNAVAILABLE");
});

Deno.test("the failure record is bounded: the oldest addresses are forgotten", async () => {
  const { gate } = manualGate({ maxTracked: 2 });
  for (const ip of ["10.0.0.1", "10.0.0.2", "10.0.0.3"]) {
    for (let i = 0; i < LIMITS.blockAfter; i++) {
      (await gate.enter(from(ip))).done(true);
    }
  }
  (await gate.enter(from("10.0.0.1"))).done(false);
  assert.equal(track(() => gate.enter(from("10.0.0.3"))).error, "RATE_LIMITED");
});

Deno.test("the gate schedules sweeps only while something is read or waiting", async () => {
  const clock = new ManualClock();
  let scheduled = 0;
  let cancelled = 0;
  const gate = new WebhookGate(clock, LIMITS, {
    schedule: () => {
      scheduled++;
      return () => cancelled++;
    },
  });
  const ticket = await gate.enter(shared());
  assert.equal(scheduled, 1);
  ticket.done(false);
  assert.equal(cancelled, 1, "idle: no timer left behind");
});
