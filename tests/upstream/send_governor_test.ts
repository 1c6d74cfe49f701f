import assert from "node:assert/strict";
import { ManualClock } from "../../src/clock.ts";
import { AppError } from "../../src/errors.ts";
import {
  type GovernorTimer,
  SendGovernor,
  type SendLane,
} from "../../src/upstream/send_governor.ts";
import {
  LATE_MS,
  MemorySlots,
  slotIntervalMs,
  type SlotSource,
} from "../../src/upstream/send_slots.ts";

/** Simulated time: a manual clock plus timers that fire only when the test runs them. */
class FakeTime {
  readonly clock = new ManualClock("2026-11-20T12:00:00.000Z");
  readonly start = this.clock.now().getTime();
  #timers = new Map<number, { at: number; run: () => void }>();
  #nextId = 1;
  maxPending = 0;

  readonly timer: GovernorTimer = {
    setTimeout: (run, ms) => {
      const id = this.#nextId++;
      this.#timers.set(id, { at: this.clock.now().getTime() + ms, run });
      this.maxPending = Math.max(this.maxPending, this.#timers.size);
      return id;
    },
    clearTimeout: (id) => {
      this.#timers.delete(id as number);
    },
  };

  get pending(): number {
    return this.#timers.size;
  }

  /** Simulated ms since the start. */
  elapsed(): number {
    return this.clock.now().getTime() - this.start;
  }

  /** Fires due timers in time order, letting promise callbacks run after each. */
  async runUntil(ms: number): Promise<void> {
    await flush();
    while (true) {
      const [id, next] = [...this.#timers].sort((a, b) =>
        a[1].at - b[1].at
      )[0] ?? [];
      if (id === undefined || !next || next.at > this.start + ms) break;
      this.#timers.delete(id);
      this.clock.set(new Date(Math.max(next.at, this.clock.now().getTime())));
      next.run();
      await flush();
    }
    this.clock.set(
      new Date(Math.max(this.start + ms, this.clock.now().getTime())),
    );
  }
}

function flush(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

function governor(
  time: FakeTime,
  rate: number,
  slots?: SlotSource,
): SendGovernor {
  return new SendGovernor({
    defaultRatePerSecond: rate,
    clock: time.clock,
    timer: time.timer,
    ...(slots ? { slots } : {}),
  });
}

/** The most grants in any sliding window of `ms` (a strict upstream's count). */
function mostInWindow(times: number[], ms = 1000): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= ms) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

/** Queues acquisitions and records when (simulated ms) and in which order each is granted. */
function recorder(time: FakeTime, gov: SendGovernor) {
  const grants: { label: string; at: number }[] = [];
  return {
    grants,
    acquire(
      label: string,
      channel: string,
      lane: SendLane,
      ratePerSecond?: number,
    ) {
      return gov.acquire(channel, { lane, ratePerSecond }).then(() => {
        grants.push({ label, at: time.elapsed() });
      });
    },
  };
}

Deno.test("SendGovernor paces 100 sends at 50/s evenly, never more than 50 in any second", async () => {
  const time = new FakeTime();
  const rate = 50;
  const r = recorder(time, governor(time, rate));
  const all = Array.from(
    { length: 100 },
    (_, i) => r.acquire(`m${i}`, "ch", "batch"),
  );
  await time.runUntil(10_000);
  await Promise.all(all);
  const times = r.grants.map((g) => g.at);
  assert.equal(times[0], 0, "an idle channel sends at once");
  const window = times.at(-1)! - times[0]!;
  // 99 intervals of (1 s + margin) / 50.
  assert.ok(
    Math.abs(window - 99 * slotIntervalMs(rate)) <= 2,
    `took ${window} ms`,
  );
  assert.equal(mostInWindow(times), rate - 1);
  assert.equal(time.maxPending, 1);
  assert.equal(time.pending, 0);
});

Deno.test("SendGovernor paces real time at 1000/s without exceeding the rate", async () => {
  const rate = 1000;
  const gov = new SendGovernor({ defaultRatePerSecond: rate });
  const stamps: number[] = [];
  await Promise.all(
    Array.from(
      { length: 300 },
      () =>
        gov.acquire("ch", { lane: "batch" }).then(() =>
          stamps.push(performance.now())
        ),
    ),
  );
  const achieved = ((stamps.length - 1) / (stamps.at(-1)! - stamps[0]!)) *
    1000;
  assert.ok(achieved <= rate, `achieved ${achieved}/s`);
  assert.deepEqual(gov.stats("ch"), {
    waitingLive: 0,
    waitingBatch: 0,
    pausedUntil: null,
  });
});

Deno.test("governors sharing one slot source (instances on one database) keep a number at its rate together, at over 95 % of it while they have sends", async () => {
  const time = new FakeTime();
  const rate = 80;
  const shared = new MemorySlots();
  const instances = [1, 2, 3].map(() => governor(time, rate, shared));
  const stamps: number[] = [];
  const all = instances.flatMap((gov) =>
    Array.from(
      { length: 200 },
      () =>
        gov.acquire("number", { lane: "batch" }).then(() =>
          stamps.push(time.elapsed())
        ),
    )
  );
  await time.runUntil(20_000);
  await Promise.all(all);
  assert.equal(stamps.length, 600);
  assert.ok(mostInWindow(stamps) <= rate, `${mostInWindow(stamps)} in 1 s`);
  const span = stamps.at(-1)! - stamps[0]!;
  const achieved = ((stamps.length - 1) / span) * 1000;
  assert.ok(achieved >= 0.95 * rate, `${achieved.toFixed(1)}/s`);
});

Deno.test("a slot the process was too late for (paused, starved) is dropped, never used in a bunch", async () => {
  const time = new FakeTime();
  const shared = new MemorySlots();
  const gov = governor(time, 10, shared);
  const r = recorder(time, gov);
  const all = Array.from(
    { length: 5 },
    (_, i) => r.acquire(`m${i}`, "ch", "batch"),
  );
  await time.runUntil(0);
  assert.deepEqual(r.grants.map((g) => g.label), ["m0"]);
  // The process stops for 20 s (SIGSTOP) holding reserved slots; then the
  // overdue timer fires.
  time.clock.advance(20_000);
  await time.runUntil(40_000);
  await Promise.all(all);
  const after = r.grants.slice(1).map((g) => g.at);
  for (let i = 1; i < after.length; i++) {
    assert.ok(
      after[i]! - after[i - 1]! >= slotIntervalMs(10) - 1,
      `grants ${after.join(", ")} bunch up`,
    );
  }
  assert.ok(after[0]! >= 20_000 - LATE_MS);
});

Deno.test("SendGovernor serves a live send before queued batch sends", async () => {
  const time = new FakeTime();
  const rate = 50;
  const r = recorder(time, governor(time, rate));
  const all = Array.from(
    { length: 200 },
    (_, i) => r.acquire(`b${i}`, "ch", "batch"),
  );
  all.push(r.acquire("live-1", "ch", "live"));
  await time.runUntil(100);
  all.push(
    r.acquire("live-2", "ch", "live"),
    r.acquire("live-3", "ch", "live"),
  );
  await time.runUntil(60_000);
  await Promise.all(all);
  const order = r.grants.map((g) => g.label);
  assert.equal(order.length, 203);
  assert.ok(
    order.indexOf("live-1") <= 1,
    `live-1 at ${order.indexOf("live-1")}`,
  );
  // Live sends that arrive later jump the queue too, in their own order.
  const batchBefore = order.slice(0, order.indexOf("live-2")).filter((l) =>
    l.startsWith("b")
  );
  assert.ok(
    batchBefore.length <= 8,
    `live-2 waited behind ${batchBefore.length}`,
  );
  assert.equal(order.indexOf("live-3"), order.indexOf("live-2") + 1);
  // Batch sends keep their order.
  const batch = order.filter((l) => l.startsWith("b"));
  assert.deepEqual(batch, Array.from({ length: 200 }, (_, i) => `b${i}`));
});

Deno.test("SendGovernor pause holds the next grant until the pause ends", async () => {
  const time = new FakeTime();
  const gov = governor(time, 10);
  const r = recorder(time, gov);
  await r.acquire("first", "ch", "live");
  const waiting = r.acquire("second", "ch", "live");
  gov.pause("ch", 5_000);
  assert.deepEqual(gov.stats("ch"), {
    waitingLive: 1,
    waitingBatch: 0,
    pausedUntil: new Date(time.start + 5_000),
  });
  await time.runUntil(4_999);
  assert.deepEqual(r.grants.map((g) => g.label), ["first"]);
  await time.runUntil(10_000);
  await waiting;
  assert.equal(r.grants[1]!.at, 5_000);
  assert.equal(gov.stats("ch").pausedUntil, null);
  assert.equal(time.maxPending, 1);
});

Deno.test("a pause reaches every governor sharing the slots: none sends on the number before it ends", async () => {
  const time = new FakeTime();
  const shared = new MemorySlots();
  const a = governor(time, 10, shared);
  const b = governor(time, 10, shared);
  await a.acquire("ch", { lane: "live" });
  a.pause("ch", 5_000);
  const r = recorder(time, b);
  const next = r.acquire("from-b", "ch", "live");
  await time.runUntil(10_000);
  await next;
  assert.equal(r.grants[0]!.at, 5_000);
});

Deno.test("SendGovernor drops an aborted waiter and gives its slot to the next", async () => {
  const time = new FakeTime();
  const gov = governor(time, 1);
  const r = recorder(time, gov);
  await r.acquire("first", "ch", "batch");
  const controller = new AbortController();
  const aborted = gov.acquire("ch", {
    lane: "batch",
    signal: controller.signal,
  });
  const third = r.acquire("third", "ch", "batch");
  assert.equal(gov.stats("ch").waitingBatch, 2);
  controller.abort(new Error("job cancelled"));
  await assert.rejects(aborted, /job cancelled/);
  assert.equal(gov.stats("ch").waitingBatch, 1);
  await time.runUntil(10_000);
  await third;
  assert.deepEqual(r.grants, [{ label: "first", at: 0 }, {
    label: "third",
    at: Math.ceil(slotIntervalMs(1)),
  }]);
});

Deno.test("SendGovernor leaves no timer behind when the last waiter aborts", async () => {
  const time = new FakeTime();
  const gov = governor(time, 1);
  await gov.acquire("ch", { lane: "live" });
  const controller = new AbortController();
  const waiting = gov.acquire("ch", {
    lane: "live",
    signal: controller.signal,
  });
  await time.runUntil(0);
  assert.equal(time.pending, 1);
  controller.abort(new Error("stop"));
  await assert.rejects(waiting, /stop/);
  assert.equal(time.pending, 0);
  await assert.rejects(
    gov.acquire("ch", {
      lane: "live",
      signal: AbortSignal.abort(new Error("already")),
    }),
    /already/,
  );
});

Deno.test("SendGovernor keeps separate slots per channel", async () => {
  const time = new FakeTime();
  const gov = governor(time, 10);
  const r = recorder(time, gov);
  const all = [
    r.acquire("a1", "A", "batch"),
    r.acquire("a2", "A", "batch"),
    r.acquire("b1", "B", "batch"),
    r.acquire("b2", "B", "batch"),
  ];
  await time.runUntil(0);
  assert.deepEqual(r.grants.map((g) => g.label).sort(), ["a1", "b1"]);
  gov.pause("B", 60_000);
  await time.runUntil(1_000);
  await Promise.all(all.slice(0, 3));
  assert.deepEqual(r.grants.find((g) => g.label === "a2"), {
    label: "a2",
    at: Math.ceil(slotIntervalMs(10)),
  });
  assert.equal(r.grants.some((g) => g.label === "b2"), false);
  await time.runUntil(61_000);
  await all[3];
});

Deno.test("SendGovernor honours a channel's own rate", async () => {
  const time = new FakeTime();
  const r = recorder(time, governor(time, 1));
  const all = Array.from(
    { length: 5 },
    (_, i) => r.acquire(`f${i}`, "fast", "batch", 100),
  );
  await time.runUntil(1_000);
  await Promise.all(all);
  r.grants.forEach((g, i) => {
    const slot = i * slotIntervalMs(100);
    assert.ok(g.at >= slot && g.at < slot + 1, `${g.at} for slot ${slot}`);
  });
});

Deno.test("SendGovernor rejects a rate that is not positive", () => {
  for (const rate of [0, -1, Number.NaN, Infinity]) {
    assert.throws(
      () => new SendGovernor({ defaultRatePerSecond: rate }),
      AppError,
    );
  }
  const gov = new SendGovernor({ defaultRatePerSecond: 10 });
  assert.throws(
    () => gov.acquire("ch", { lane: "live", ratePerSecond: 0 }),
    AppError,
  );
});

Deno.test("SendGovernor banks nothing while paused: after the pause, one send per interval", async () => {
  const time = new FakeTime();
  const gov = governor(time, 10);
  const r = recorder(time, gov);
  const first = Array.from(
    { length: 10 },
    (_, i) => r.acquire(`first${i}`, "ch", "batch"),
  );
  await time.runUntil(2_000);
  await Promise.all(first);
  gov.pause("ch", 5_000);
  const after = Array.from(
    { length: 3 },
    (_, i) => r.acquire(`after${i}`, "ch", "batch"),
  );
  await time.runUntil(20_000);
  await Promise.all(after);
  const interval = slotIntervalMs(10);
  assert.deepEqual(
    r.grants.slice(10).map((g) => g.at),
    [7_000, 7_000 + interval, 7_000 + 2 * interval].map(Math.ceil),
  );
});
