import assert from "node:assert/strict";
import { ManualClock } from "../../src/clock.ts";
import { AppError } from "../../src/errors.ts";
import {
  senderKey,
  WEBHOOK_GATE_LIMITS,
  WebhookGate,
} from "../../src/http/webhook_gate.ts";

const LIMITS = {
  maxReads: 6,
  maxReadsPerAddress: 3,
  maxSuspectReads: 1,
  blockAfter: 3,
  windowMs: 60_000,
  maxTracked: 100,
};

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof AppError);
    return err.code;
  }
  assert.fail("expected a refusal");
}

Deno.test("the gate refuses at once, never queues: per address, then for everyone", () => {
  const gate = new WebhookGate(new ManualClock(), LIMITS);
  const a = [1, 2, 3].map(() => gate.enter("10.0.0.1"));
  assert.equal(refusal(() => gate.enter("10.0.0.1")), "RATE_LIMITED");
  const b = [1, 2, 3].map(() => gate.enter("10.0.0.2"));
  assert.equal(refusal(() => gate.enter("10.0.0.3")), "SERVICE_UNAVAILABLE");
  b[0]!.done(false);
  gate.enter("10.0.0.3");
  a[0]!.done(false);
  a[0]!.done(false); // a second done changes nothing
  gate.enter("10.0.0.1");
  assert.equal(refusal(() => gate.enter("10.0.0.1")), "RATE_LIMITED");
});

Deno.test("an address that failed shares one read with all suspects and is refused unread after blockAfter failures", () => {
  const clock = new ManualClock();
  const gate = new WebhookGate(clock, LIMITS);
  gate.enter("10.0.0.1").done(true);
  gate.enter("10.0.0.2").done(true);
  const held = gate.enter("10.0.0.1");
  assert.equal(refusal(() => gate.enter("10.0.0.1")), "RATE_LIMITED");
  assert.equal(refusal(() => gate.enter("10.0.0.2")), "RATE_LIMITED");
  const clean = gate.enter("10.0.0.9"); // others keep their own slots
  clean.done(false);
  held.done(true);
  gate.enter("10.0.0.1").done(true);
  assert.equal(refusal(() => gate.enter("10.0.0.1")), "RATE_LIMITED");
  // The window passes: the address is forgiven.
  clock.advance(LIMITS.windowMs);
  gate.enter("10.0.0.1").done(false);
  gate.enter("10.0.0.1");
  gate.enter("10.0.0.1");
});

Deno.test("a verified post clears its address's failures", () => {
  const gate = new WebhookGate(new ManualClock(), LIMITS);
  gate.enter("10.0.0.1").done(true);
  gate.enter("10.0.0.1").done(true);
  gate.enter("10.0.0.1").done(false);
  gate.enter("10.0.0.1").done(true);
  gate.enter("10.0.0.1").done(true);
  // Two failures since the success: still admitted, and no longer alone once clean.
  gate.enter("10.0.0.1").done(false);
  gate.enter("10.0.0.1");
  gate.enter("10.0.0.1");
});

Deno.test("the failure record is bounded: the oldest addresses are forgotten", () => {
  const gate = new WebhookGate(new ManualClock(), { ...LIMITS, maxTracked: 2 });
  for (const ip of ["10.0.0.1", "10.0.0.2", "10.0.0.3"]) {
    for (let i = 0; i < LIMITS.blockAfter; i++) gate.enter(ip).done(true);
  }
  gate.enter("10.0.0.1").done(false);
  assert.equal(refusal(() => gate.enter("10.0.0.3")), "RATE_LIMITED");
});

Deno.test("senders are keyed by IPv4 address or IPv6 /64", () => {
  const cases: [string | undefined, string][] = [
    ["173.252.127.5", "173.252.127.5"],
    ["::ffff:173.252.127.5", "173.252.127.5"],
    ["2a03:2880:f0ff:c::face:b00c", "2a03:2880:f0ff:c::/64"],
    ["2a03:2880:f0ff:000c:1:2:3:4", "2a03:2880:f0ff:c::/64"],
    ["2a03:2880::1", "2a03:2880:0:0::/64"],
    ["::1", "0:0:0:0::/64"],
    ["fe80::1%eth0", "fe80:0:0:0::/64"],
    [undefined, "unknown"],
  ];
  for (const [hostname, key] of cases) {
    assert.equal(senderKey(hostname), key, hostname);
  }
});

Deno.test("the default limits keep room for other senders beyond one address and the suspects", () => {
  const l = WEBHOOK_GATE_LIMITS;
  assert.ok(l.maxReads > l.maxReadsPerAddress + l.maxSuspectReads);
  assert.ok(l.blockAfter >= 1 && l.windowMs > 0);
});
