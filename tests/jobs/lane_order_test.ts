// Issue 30 (found by the scale-out harness): during a campaign cron's ticks
// never ran, and a dead instance's rescued send waited behind the backlog.
import assert from "node:assert/strict";
import {
  claim,
  enqueueManyUnchecked,
  PRIORITY,
  rescueExpiredLeases,
} from "../../src/jobs/queue.ts";
import { addMs } from "../../src/db/time.ts";
import { engineTest } from "../_harness.ts";
import type { ManualClock } from "../../src/clock.ts";

const MAIN = [
  PRIORITY.live,
  PRIORITY.inbound,
  PRIORITY.media,
  PRIORITY.maintenance,
  PRIORITY.batch,
];

engineTest(
  "a cron tick's job is claimed ahead of a campaign's due sends",
  async (h) => {
    const db = h.container.db;
    const now = h.clock.now();
    await enqueueManyUnchecked(
      db,
      Array.from({ length: 50 }, (_, i) => ({
        kind: "t.send",
        payload: { i },
        priority: PRIORITY.batch,
        runAt: addMs(now, -60_000),
      })),
      now,
    );
    await enqueueManyUnchecked(db, [{
      kind: "t.tick",
      payload: {},
      priority: PRIORITY.maintenance,
    }], now);
    const [first] = await claim(db, {
      workerId: "w",
      limit: 1,
      leaseMs: 12_000,
      now,
      lanes: MAIN,
    });
    assert.equal(first?.kind, "t.tick");
  },
);

engineTest(
  "a rescued job keeps its place in its lane: it goes before the backlog that came due after it",
  async (h) => {
    const db = h.container.db;
    const clock = h.clock as ManualClock;
    const t0 = clock.now();
    await enqueueManyUnchecked(db, [{
      kind: "t.victim",
      payload: {},
      priority: PRIORITY.batch,
    }], t0);
    const [victim] = await claim(db, {
      workerId: "dead",
      limit: 1,
      leaseMs: 12_000,
      now: t0,
      lanes: MAIN,
    });
    assert.equal(victim?.kind, "t.victim");
    clock.advance(5_000);
    await enqueueManyUnchecked(
      db,
      Array.from({ length: 20 }, (_, i) => ({
        kind: "t.backlog",
        payload: { i },
        priority: PRIORITY.batch,
      })),
      clock.now(),
    );
    clock.advance(10_000);
    assert.equal(await rescueExpiredLeases(db, clock.now()), 1);
    const [next] = await claim(db, {
      workerId: "alive",
      limit: 1,
      leaseMs: 12_000,
      now: clock.now(),
      lanes: MAIN,
    });
    assert.equal(next?.kind, "t.victim");
  },
);
