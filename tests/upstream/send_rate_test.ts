// The per-number send rate (issue 28, item 4): the operator's explicit rate,
// else 1,000 capped by SEND_RATE_MAX for throughput HIGH, else 20 for a
// number shared with the WhatsApp Business app, else SEND_RATE_PER_SECOND.
import assert from "node:assert/strict";
import { sendRateOf } from "../../src/upstream/send_governor.ts";
import { BatchPacer } from "../../src/domain/messages/batch_pacer_service.ts";
import { engineTest } from "../_harness.ts";
import type { Channel } from "../../src/domain/channels/channel.ts";

const LIMITS = { defaultRate: 80, maxRate: 1_000 };
const base = { sendRate: null, throughputLevel: null, onBizApp: false };

Deno.test("throughput level, coexistence and the explicit rate give the number's send rate", () => {
  assert.equal(sendRateOf(base, LIMITS), 80);
  assert.equal(
    sendRateOf({ ...base, throughputLevel: "STANDARD" }, LIMITS),
    80,
  );
  assert.equal(sendRateOf({ ...base, throughputLevel: "HIGH" }, LIMITS), 1_000);
  assert.equal(
    sendRateOf({ ...base, throughputLevel: "HIGH" }, {
      ...LIMITS,
      maxRate: 300,
    }),
    300,
    "SEND_RATE_MAX caps what HIGH gives",
  );
  assert.equal(sendRateOf({ ...base, onBizApp: true }, LIMITS), 20);
  assert.equal(
    sendRateOf({ ...base, throughputLevel: "HIGH", onBizApp: true }, LIMITS),
    1_000,
    "Meta's HIGH level wins over the coexistence default",
  );
  assert.equal(
    sendRateOf(
      { sendRate: 7, throughputLevel: "HIGH", onBizApp: true },
      LIMITS,
    ),
    7,
    "the operator's --send-rate wins over everything",
  );
  assert.equal(
    sendRateOf({ ...base, throughputLevel: "NOT_APPLICABLE" }, LIMITS),
    80,
  );
});

engineTest(
  "a campaign is paced at its number's rate: HIGH throughput 1 ms apart, coexistence 50 ms",
  async (h) => {
    const now = new Date("2026-11-29T00:00:00.000Z");
    const pacer = new BatchPacer(now, LIMITS);
    const high = { ...h.tenant.channel, throughputLevel: "HIGH" };
    const other = await h.makeTenant("pacer-shared");
    const shared = { ...other.channel, onBizApp: true };
    const tenth = async (ch: Channel) => {
      let at = now;
      for (let i = 0; i < 10; i++) at = await pacer.dueAt(h.container.db, ch);
      return at.getTime() - now.getTime();
    };
    assert.equal(await tenth(high), 9, "the 10th send of a HIGH number: 9 ms");
    assert.equal(await tenth(shared), 450, "the 10th at 20 a second: 450 ms");
  },
);
