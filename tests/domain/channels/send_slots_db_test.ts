// Issue 30, item 2: instances on one libSQL server take a number's send
// slots from the database, so together they never pass its rate.
import assert from "node:assert/strict";
import { SendGovernor } from "../../../src/upstream/send_governor.ts";
import { DbSlots } from "../../../src/domain/channels/send_slot_service.ts";
import { LATE_MS, slotIntervalMs } from "../../../src/upstream/send_slots.ts";
import { createHarness } from "../../_harness.ts";

Deno.test({
  name:
    "on libSQL, three governors on one database send a number's messages at most its rate in any second, evenly, whatever each one's load",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using h = await createHarness({ engine: "libsql" });
    const rate = 40;
    const governors = [1, 2, 3].map(() =>
      new SendGovernor({
        defaultRatePerSecond: rate,
        slots: new DbSlots(h.container.db),
      })
    );
    const stamps: number[] = [];
    await Promise.all(
      governors.flatMap((gov, i) =>
        Array.from(
          { length: 10 + 15 * i },
          () =>
            gov.acquireSlot("+15550100001", { lane: "batch" }).then((slot) =>
              stamps.push(slot)
            ),
        )
      ),
    );
    stamps.sort((a, b) => a - b);
    assert.equal(stamps.length, 75);
    let most = 0;
    for (let i = 0, j = 0; i < stamps.length; i++) {
      while (stamps[i]! - stamps[j]! >= 1000) j++;
      most = Math.max(most, i - j + 1);
    }
    assert.ok(most <= rate, `${most} sends in one second`);
    // Evenly: the slots the three were granted are an interval apart on
    // the database's clock; on this process's, each governor places them
    // with its estimate of the offset (from its quickest round trip), which
    // may be off by half of it: LATE_MS covers it.
    // The slots, not the wall clock: a loaded machine delays the callbacks.
    const gaps = stamps.slice(1).map((t, i) => t - stamps[i]!);
    assert.ok(
      Math.min(...gaps) >= slotIntervalMs(rate) - LATE_MS,
      `gaps down to ${Math.min(...gaps).toFixed(3)} ms`,
    );
  },
});
