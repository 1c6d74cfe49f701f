// The scale-out harness (bench/scaleout.ts), short: three `serve`
// instances on a real sqld behind the harness's proxy, a campaign to the
// strict upstream, then a kill -9 of one instance and a rolling restart.
// It asserts what the program guarantees today and the harness's own
// bookkeeping, not issue 30's targets (the harness prints those): no
// message lost, no duplicate beyond the sends in flight at the kill, every
// job the victim held settled, every restart back, and figures that add up.
// Skipped, saying so, when sqld is not installed.
import assert from "node:assert/strict";
import { sqldBinary } from "../_support/sqld.ts";
import { runScaleout, type ScaleoutResult } from "../../bench/scaleout.ts";

const RATE = 20;
const installed = sqldBinary() !== undefined;

function bookkeeping(result: ScaleoutResult): void {
  const { run, figures: f } = result;
  assert.ok(run && f, `${result.name} could not run: ${result.error}`);
  const c = run.campaign;
  // Every item asked for is queued, refused by the API, or in a batch request that failed.
  const failedItems = c.samples.filter((s) => s.status !== 202).length * 100;
  assert.ok(
    c.ids.size + c.refusedItems <= c.wanted &&
      c.ids.size + c.refusedItems + failedItems >= c.wanted,
    `${c.ids.size} queued + ${c.refusedItems} refused of ${c.wanted}`,
  );
  assert.ok(c.ids.size > 0, "no message was queued");
  // The upstream saw only the campaign's messages, and each send has its attempt number.
  for (const r of run.records) {
    assert.ok(
      r.messageId && c.ids.has(r.messageId),
      `foreign send ${r.messageId}`,
    );
  }
  // Each accepted send is a campaign message's first, or one of its duplicates.
  assert.equal(f.sends, c.ids.size - f.dup.lost + f.dup.duplicates);
  // Offline, the windows agree with the upstream's own rule.
  for (const n of f.numbers) {
    assert.ok(n.max1s <= RATE, `${n.label}: ${n.max1s}`);
  }
  const l = f.limit;
  assert.equal(l.admitted + l.refused + l.errors, l.requests);
  assert.ok(result.checks.length > 0);
  // Today's program loses nothing, and sends twice only what a kill caught in flight.
  assert.equal(
    f.dup.lost,
    0,
    `${f.dup.lost} messages never reached the upstream`,
  );
}

Deno.test({
  name: installed
    ? "scale-out harness: kill -9 and rolling restart of 3 instances on sqld lose no message"
    : "scale-out harness: skipped, sqld is not installed (deno run -A scripts/ensure_tools.ts installs it)",
  ignore: !installed,
  // The phases spawn and reap processes, sqld and helpers of their own.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const lines: string[] = [];
    const results = await runScaleout({
      phases: ["kill", "restart"],
      duration: 10,
      numbers: 2,
      rate: RATE,
      apiRate: 10,
      statuses: 0,
      drain: 60,
      pause: 5,
      limitRate: 30,
      limitRequests: 60,
      print: (line) => lines.push(line),
      log: () => {},
    });
    const report = lines.join("\n");
    try {
      for (const result of results) {
        if (result.run?.status === "wedged") {
          // The harness's job here is to say so and move on, which it did.
          assert.match(report, /sqld wedged/);
          continue;
        }
        assert.equal(result.run?.status, "ok", result.error);
        bookkeeping(result);
      }
      const [kill, restart] = results;
      const k = kill?.figures?.kill;
      if (kill?.run?.status === "ok") {
        assert.ok(k, "the kill phase measured no kill");
        assert.equal(k.duplicatesOutside, 0);
        assert.ok(kill.figures!.dup.duplicates <= k.inFlight.size);
        if (k.held !== undefined) assert.equal(k.unrecovered, 0);
      }
      if (restart?.run?.status === "ok") {
        const events = restart.run.events.restarts ?? [];
        assert.equal(events.length, 3);
        for (const e of events) {
          assert.equal(e.error, undefined);
          assert.equal(e.killed, false);
          assert.ok(Number.isFinite(e.backMs));
        }
        assert.equal(restart.figures!.dup.duplicates, 0);
      }
      assert.match(report, /== side by side/);
      assert.match(report, /(PASS|FAIL) {2}max in any 1 s window <= 20/);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${report}`);
    }
  },
});
