import assert from "node:assert/strict";
import { ManualClock } from "../../src/clock.ts";
import { AppError } from "../../src/errors.ts";
import {
  type GovernorTimer,
  SendGovernor,
  type SendLane,
} from "../../src/upstream/send_governor.ts";

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

function governor(time: FakeTime, rate: number, burst?: number): SendGovernor {
  return new SendGovernor({
    defaultRatePerSecond: rate,
    burst,
    clock: time.clock,
    timer: time.timer,
  });
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

Deno.test("SendGovernor paces 100 sends at 50/s to about 2 s of simulated time", async () => {
  const time = new FakeTime();
  const rate = 50;
  const burst = 5;
  const r = recorder(time, governor(time, rate, burst));
  const all = Array.from(
    { length: 100 },
    (_, i) => r.acquire(`m${i}`, "ch", "batch"),
  );
  await time.runUntil(10_000);
  await Promise.all(all);
  const times = r.grants.map((g) => g.at);
  const window = times.at(-1)! - times[0]!;
  const achieved = ((times.length - 1) / window) * 1000;
  assert.ok(achieved <= rate * 1.3, `achieved ${achieved}/s`);
  assert.ok(achieved >= rate * 0.7, `achieved ${achieved}/s`);
  assert.ok(window >= 1_800 && window <= 2_200, `took ${window} ms`);
  // Token bucket bound: no 1 s window ever holds more than burst + rate grants.
  for (const t of times) {
    const inWindow = times.filter((u) => u >= t && u < t + 1000).length;
    assert.ok(inWindow <= burst + rate, `${inWindow} grants in 1 s from ${t}`);
  }
  assert.equal(time.maxPending, 1);
  assert.equal(time.pending, 0);
});

Deno.test("SendGovernor paces real time at 1000/s without exceeding the rate", async () => {
  const rate = 1000;
  const burst = 10;
  const gov = new SendGovernor({ defaultRatePerSecond: rate, burst });
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
  const paced = stamps.slice(burst);
  const achieved = ((paced.length - 1) / (paced.at(-1)! - paced[0]!)) * 1000;
  assert.ok(achieved <= rate * 1.3, `achieved ${achieved}/s`);
  assert.deepEqual(gov.stats("ch"), {
    waitingLive: 0,
    waitingBatch: 0,
    pausedUntil: null,
  });
});

Deno.test("SendGovernor serves a live send before queued batch sends", async () => {
  const time = new FakeTime();
  const rate = 50;
  const r = recorder(time, governor(time, rate)); // burst defaults to rate: 50
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
  const first = order.indexOf("live-1");
  assert.ok(first <= rate, `live-1 waited behind ${first} batch sends`);
  // Live sends that arrive later jump the queue too, in their own order.
  const batchBefore = order.slice(0, order.indexOf("live-2")).filter((l) =>
    l.startsWith("b")
  );
  assert.ok(
    batchBefore.length <= rate + 6,
    `live-2 waited behind ${batchBefore.length}`,
  );
  assert.equal(order.indexOf("live-3"), order.indexOf("live-2") + 1);
  // Batch sends keep their order.
  const batch = order.filter((l) => l.startsWith("b"));
  assert.deepEqual(batch, Array.from({ length: 200 }, (_, i) => `b${i}`));
});

Deno.test("SendGovernor pause holds the next grant until the pause ends", async () => {
  const time = new FakeTime();
  const gov = governor(time, 10, 1);
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

Deno.test("SendGovernor drops an aborted waiter and gives its token to the next", async () => {
  const time = new FakeTime();
  const gov = governor(time, 1, 1);
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
    at: 1_000,
  }]);
});

Deno.test("SendGovernor leaves no timer behind when the last waiter aborts", async () => {
  const time = new FakeTime();
  const gov = governor(time, 1, 1);
  await gov.acquire("ch", { lane: "live" });
  const controller = new AbortController();
  const waiting = gov.acquire("ch", {
    lane: "live",
    signal: controller.signal,
  });
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

Deno.test("SendGovernor keeps separate buckets per channel", async () => {
  const time = new FakeTime();
  const gov = governor(time, 10, 2);
  const r = recorder(time, gov);
  const all = [
    r.acquire("a1", "A", "batch"),
    r.acquire("a2", "A", "batch"),
    r.acquire("a3", "A", "batch"),
    r.acquire("b1", "B", "batch"),
    r.acquire("b2", "B", "batch"),
  ];
  await time.runUntil(0);
  assert.deepEqual(r.grants.map((g) => g.label).sort(), [
    "a1",
    "a2",
    "b1",
    "b2",
  ]);
  gov.pause("B", 60_000);
  await time.runUntil(1_000);
  await Promise.all(all);
  assert.deepEqual(r.grants.find((g) => g.label === "a3"), {
    label: "a3",
    at: 100,
  });
});

Deno.test("SendGovernor honours a channel's own rate", async () => {
  const time = new FakeTime();
  const r = recorder(time, governor(time, 1, 1));
  const all = Array.from(
    { length: 5 },
    (_, i) => r.acquire(`f${i}`, "fast", "batch", 100),
  );
  await time.runUntil(1_000);
  await Promise.all(all);
  assert.deepEqual(r.grants.map((g) => g.at), [0, 10, 20, 30, 40]);
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

Deno.test("SendGovernor banks no tokens while paused", async () => {
  const time = new FakeTime();
  const gov = governor(time, 10, 10);
  const r = recorder(time, gov);
  await Promise.all(
    Array.from({ length: 10 }, (_, i) => r.acquire(`burst${i}`, "ch", "batch")),
  );
  gov.pause("ch", 5_000);
  const after = Array.from(
    { length: 3 },
    (_, i) => r.acquire(`after${i}`, "ch", "batch"),
  );
  await time.runUntil(10_000);
  await Promise.all(after);
  assert.deepEqual(r.grants.slice(10).map((g) => g.at), [5_000, 5_100, 5_200]);
});
