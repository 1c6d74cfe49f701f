import assert from "node:assert/strict";
import { Cron } from "croner";
import { createHarness } from "../_harness.ts";
import { waitFor } from "../_support/wait.ts";
import type { Logger } from "../../src/log.ts";
import {
  DEFAULT_SCHEDULES,
  type Schedule,
  scheduledTick,
  startCron,
} from "../../src/cron/schedules.ts";
import { PRIORITY } from "../../src/jobs/queue.ts";
import { createJobHandlers } from "../../src/jobs/registry.ts";

interface Line {
  msg: string;
  fields: Record<string, unknown>;
}

function recordingLogger(lines: Line[]): Logger {
  const write = (msg: string, fields: Record<string, unknown> = {}) => {
    lines.push({ msg, fields });
  };
  const log: Logger = {
    debug: write,
    info: write,
    warn: write,
    error: write,
    child: () => log,
  };
  return log;
}

/** Ticks that both instances attempted, with how each attempt ended. */
function attemptsByTick(lines: Line[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of lines) {
    if (!line.msg.startsWith("Cron tick")) continue;
    const tick = String(line.fields.tick);
    out.set(tick, [...(out.get(tick) ?? []), line.msg].sort());
  }
  return out;
}

Deno.test("startCron() enqueues one job per tick with two instances running", async () => {
  await using h = await createHarness();
  const lines: Line[] = [];
  const deps = {
    db: h.container.db,
    clock: h.clock,
    log: recordingLogger(lines),
  };
  const schedules: Schedule[] = [{
    kind: "jobs.rescue",
    pattern: "* * * * * *",
  }];
  const first = startCron(deps, schedules);
  const second = startCron(deps, schedules);
  try {
    await waitFor(
      () =>
        [...attemptsByTick(lines).values()].filter((a) => a.length === 2)
          .length >= 2,
      { what: "two ticks attempted by both instances" },
    );
  } finally {
    await first.stop();
    await second.stop();
  }
  assert.deepEqual(lines.filter((l) => !l.msg.startsWith("Cron tick")), []);
  const attempts = attemptsByTick(lines);
  const rows = await h.container.db.selectFrom("jobs")
    .select(["unique_key", "priority", "state"])
    .where("kind", "=", "jobs.rescue").execute();
  assert.equal(rows.length, attempts.size, "one job per tick");
  for (const [tick, outcomes] of attempts) {
    assert.match(tick, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
    assert.ok(rows.some((r) => r.unique_key === `cron:jobs.rescue:${tick}`));
    if (outcomes.length === 2) {
      assert.deepEqual(outcomes, [
        "Cron tick already enqueued",
        "Cron tick enqueued",
      ]);
    }
  }
  assert.ok(rows.every((r) => r.priority === PRIORITY.maintenance));
  assert.ok(rows.every((r) => r.state === "available"));
});

Deno.test("scheduledTick() maps a late firing back to the scheduled second", () => {
  const everyMinute = new Cron("0 * * * * *", {
    timezone: "UTC",
    paused: true,
  });
  const cases = [
    ["2026-11-20T12:00:00.350Z", "2026-11-20T12:00:00.000Z"],
    ["2026-11-20T12:00:02.900Z", "2026-11-20T12:00:00.000Z"],
    ["2026-11-20T12:00:59.999Z", "2026-11-20T12:00:00.000Z"],
  ];
  for (const [fired, tick] of cases) {
    assert.equal(
      scheduledTick(everyMinute, new Date(fired!)).toISOString(),
      tick,
    );
  }
  const everySecond = new Cron("* * * * * *", {
    timezone: "UTC",
    paused: true,
  });
  assert.equal(
    scheduledTick(everySecond, new Date("2026-11-20T12:00:07.012Z"))
      .toISOString(),
    "2026-11-20T12:00:07.000Z",
  );
});

Deno.test("every default schedule has a registered handler", async () => {
  await using h = await createHarness();
  const handlers = createJobHandlers(h.container);
  const missing = DEFAULT_SCHEDULES.map((s) => s.kind)
    .filter((kind) => !handlers[kind]);
  assert.deepEqual(missing, []);
  // The maintenance kinds are the housekeeping schedules.
  const maintenance = ["jobs.rescue", "jobs.prune"];
  for (const kind of maintenance) {
    assert.ok(DEFAULT_SCHEDULES.some((s) => s.kind === kind), kind);
  }
});
