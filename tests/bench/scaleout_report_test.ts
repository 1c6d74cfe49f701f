// The bookkeeping the scale-out harness's figures rest on
// (bench/_scaleout_report.ts): windows, the reference bucket, rates,
// duplicates and in-flight sends at a kill, cron ticks, the server log.
import assert from "node:assert/strict";
import {
  acceptedByMessage,
  cronFigures,
  duplicateFigures,
  killFigures,
  logFigures,
  maxInWindow,
  nonConformant,
  numberFigures,
  referenceBucket,
} from "../../bench/_scaleout_report.ts";
import type { SendRecord } from "../../bench/_strict_upstream.ts";

function send(
  t: number,
  messageId: string,
  over: Partial<SendRecord> = {},
): SendRecord {
  return {
    t,
    done: t + 5,
    phoneNumberId: "111",
    instance: "a",
    messageId,
    attempt: 1,
    outcome: "accepted",
    wamid: `wamid.${messageId}.${t}`,
    code: null,
    ...over,
  };
}

Deno.test("maxInWindow counts the times in (t - 1 s, t]: a time exactly 1 s earlier is out", () => {
  assert.equal(maxInWindow([]), 0);
  assert.equal(maxInWindow([0, 1000, 2000]), 1);
  assert.equal(maxInWindow([0, 999.9, 1000]), 2);
  assert.equal(maxInWindow([5, 1, 3, 2, 4]), 5);
  // 80 evenly paced sends per second never put 81 in a window.
  const paced = Array.from({ length: 800 }, (_, i) => i * 12.5);
  assert.equal(maxInWindow(paced), 80);
  assert.equal(maxInWindow([...paced, 500.1]), 81);
});

Deno.test("the reference bucket admits the limit at once, then limit/60 per second", () => {
  // 90 requests 100 ms apart against 30/min: the first 30 draw the bucket
  // down while it refills 1.5 tokens, so the 31st (3 s) passes too; then
  // one every 2 s. 30 + 8.9 s x 0.5 = 34.
  const times = Array.from({ length: 90 }, (_, i) => i * 100);
  const { admitted, admittedAt } = referenceBucket(times, 30);
  assert.equal(admitted, 34);
  assert.deepEqual(admittedAt.slice(30), [3_000, 4_000, 6_000, 8_000]);
  assert.equal(nonConformant(admittedAt, 30), 0);
  // Every request admitted (three instances counting apart): the excess is what the bucket refused.
  assert.equal(nonConformant(times, 30), 90 - admitted);
});

Deno.test("a number's rate runs from its first send to the window's end, leaving out an excluded span", () => {
  const number = { label: "n1", upstreamId: "111" };
  const sends = Array.from({ length: 101 }, (_, i) => send(i * 50, `m${i}`));
  const throttled = send(10, "x", { outcome: "throttled", wamid: null });
  const other = send(20, "y", { phoneNumberId: "222" });
  const f = numberFigures([...sends, throttled, other], number, 10_000);
  assert.equal(f.sends, 101);
  assert.equal(f.throttles, 1);
  assert.equal(f.max1s, 20);
  // 101 sends 50 ms apart: 100 intervals over 5 s.
  assert.equal(f.rate, 20);
  // Past the window's end, sends do not count towards the rate.
  assert.equal(numberFigures(sends, number, 2_500).rate, 20);
  const cut = numberFigures(sends, number, 10_000, {
    exclude: [1_000, 2_000],
    killAt: 1_000,
  });
  assert.equal(cut.rate, ((100 - 21) * 1000) / 4_000);
  assert.equal(cut.gapAfterKillMs, 50);
  assert.ok(Number.isNaN(numberFigures([send(0, "a")], number, 10).rate));
  // Under a second of sends is a burst, not a pace.
  const burst = [send(0, "a"), send(500, "b"), send(999, "c")];
  assert.ok(Number.isNaN(numberFigures(burst, number, 10_000).rate));
});

Deno.test("a duplicate is an accepted send of a message after its first; one never accepted is unsent while still queued, else lost", () => {
  const records = [
    send(0, "m1"),
    send(10, "m1", { attempt: 2 }),
    send(20, "m2", { outcome: "throttled", wamid: null, code: 130429 }),
    send(30, "m3"),
    send(40, "m3", { attempt: 2 }),
    send(50, "m3", { attempt: 3 }),
  ];
  const byMessage = acceptedByMessage(records);
  // m2 is still queued when the phase ends: unsent; m4 is not: lost.
  const f = duplicateFigures(
    byMessage,
    ["m1", "m2", "m3", "m4"],
    new Set(["m2"]),
  );
  assert.equal(f.duplicates, 3);
  assert.deepEqual(f.messages.sort(), ["m1", "m3"]);
  assert.equal(f.unsent, 1);
  assert.equal(f.lost, 1);
  // Without the database's view, every message never sent counts as lost.
  assert.equal(duplicateFigures(byMessage, ["m2", "m4"]).lost, 2);
});

Deno.test("in flight at a kill: the victim's accepted sends whose wamid the database never recorded", () => {
  const kill = { at: 1_000, victim: "a" };
  const records = [
    send(100, "recorded"),
    send(900, "unrecorded"),
    send(990, "late-answer", { done: 1_010 }),
    send(950, "other-instance", { instance: "b" }),
    // Written by the victim as it died, read by the upstream just after the signal.
    send(1_002, "read-after-kill", { done: 1_003 }),
    send(1_200, "unrecorded", { instance: "b", attempt: 2 }),
    send(1_300, "other-instance", { instance: "c", attempt: 2 }),
  ];
  const byMessage = acceptedByMessage(records);
  const recorded = new Map<string, string | null>([
    ["recorded", "wamid.recorded.100"],
    ["unrecorded", "wamid.unrecorded.1200"],
    ["late-answer", null],
    ["other-instance", "wamid.other-instance.950"],
  ]);
  const dup = duplicateFigures(byMessage, []);
  const f = killFigures(byMessage, dup.messages, kill, recorded, [
    // Sent again at 1200 by b: its work is done then, whenever its job settled.
    { messageId: "unrecorded", handedBackAt: 1_100, settledAt: 1_250 },
    // In flight and never sent again: done when its job settled.
    { messageId: "late-answer", handedBackAt: 3_500, settledAt: 4_000 },
  ]);
  assert.deepEqual([...f.inFlight].sort(), [
    "late-answer",
    "read-after-kill",
    "unrecorded",
  ]);
  assert.equal(f.unanswered, 2);
  assert.equal(f.oldestMs, 100);
  // "other-instance" was sent twice but the survivor b had recorded it: a fault outside the kill.
  assert.equal(f.duplicatesOutside, 1);
  assert.equal(f.held, 2);
  assert.equal(f.resent, 1);
  assert.equal(f.handedBackMs, 2_500);
  assert.equal(f.recoveryMs, 3_000);
  const open = killFigures(byMessage, [], kill, recorded, [
    // Handed back, never sent, never settled: its work is not done.
    { messageId: "never-sent", handedBackAt: 2_000, settledAt: null },
    { messageId: "late-answer", handedBackAt: null, settledAt: null },
  ]);
  assert.equal(open.unrecovered, 2);
  assert.equal(open.recoveryMs, Infinity);
  assert.equal(open.handedBackMs, Infinity);
  // Resent after the kill counts even when its job never settled.
  const resent = killFigures(byMessage, [], kill, recorded, [
    { messageId: "unrecorded", handedBackAt: 1_100, settledAt: null },
  ]);
  assert.equal(resent.recoveryMs, 200);
});

Deno.test("cron ticks: each minute spanned wants one completed job that ran once", () => {
  const from = Date.parse("2026-11-29T10:00:30Z");
  const to = Date.parse("2026-11-29T10:03:00Z");
  const f = cronFigures(
    [
      {
        unique_key: "cron:jobs.rescue:2026-11-29T10:01:00.000Z",
        state: "completed",
        attempt: 1,
      },
      {
        unique_key: "cron:jobs.rescue:2026-11-29T10:02:00.000Z",
        state: "completed",
        attempt: 2,
      },
      {
        unique_key: "cron:jobs.prune:2026-11-29T10:00:00.000Z",
        state: "completed",
        attempt: 1,
      },
    ],
    from,
    to,
  );
  assert.equal(f.expected, 3);
  assert.equal(f.once, 1);
  assert.equal(f.maxRuns, 2);
  assert.equal(f.maxRows, 1);
  assert.equal(f.seen.length, 3);
});

Deno.test("the server log counts warnings and errors, grouped by message", () => {
  const text = [
    JSON.stringify({
      level: "error",
      msg: "Job failed",
      err: { message: "SQLITE_BUSY" },
    }),
    JSON.stringify({
      level: "error",
      msg: "Job failed",
      err: { message: "SQLITE_BUSY" },
    }),
    JSON.stringify({ level: "warn", msg: "Rescued jobs with expired leases" }),
    JSON.stringify({ level: "info", msg: "Listening" }),
    "not json",
  ].join("\n");
  const f = logFigures([text, ""]);
  assert.equal(f.errors, 2);
  assert.equal(f.warnings, 1);
  assert.equal(f.top[0], "2 x error: Job failed (SQLITE_BUSY)");
});
