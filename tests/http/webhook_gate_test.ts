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
  trustMs: 600_000,
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
  [1, 2, 3].map(() => gate.enter("10.0.0.1"));
  assert.equal(refusal(() => gate.enter("10.0.0.1")), "RATE_LIMITED");
  const b = [1, 2, 3].map(() => gate.enter("10.0.0.2"));
  assert.equal(refusal(() => gate.enter("10.0.0.3")), "SERVICE_UNAVAILABLE");
  b[0]!.done(true);
  b[0]!.done(true); // a second done changes nothing
  gate.enter("10.0.0.3");
  assert.equal(refusal(() => gate.enter("10.0.0.4")), "SERVICE_UNAVAILABLE");
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

Deno.test("a verified post clears its address's failures and lets it skip the limits until it fails or trustMs passes", () => {
  const clock = new ManualClock();
  const gate = new WebhookGate(clock, LIMITS);
  gate.enter("10.0.0.1").done(true);
  gate.enter("10.0.0.1").done(true);
  gate.enter("10.0.0.1").done(false);
  // Trusted: a burst beyond every limit is admitted, even with all reads taken.
  const burst = Array.from({ length: 10 }, () => gate.enter("10.0.0.1"));
  const others = ["10.0.0.2", "10.0.0.3"].flatMap((ip) =>
    [1, 2, 3].map(() => gate.enter(ip))
  );
  assert.equal(refusal(() => gate.enter("10.0.0.4")), "SERVICE_UNAVAILABLE");
  gate.enter("10.0.0.1").done(false);
  [...burst, ...others].forEach((t) => t.done(false));
  // One failure ends the trust: the address shares the suspects' single read.
  const held = gate.enter("10.0.0.9");
  gate.enter("10.0.0.1").done(true);
  held.done(true);
  const suspectRead = gate.enter("10.0.0.1");
  assert.equal(refusal(() => gate.enter("10.0.0.1")), "RATE_LIMITED");
  suspectRead.done(false);
  // Trust lapses after trustMs without a verified post.
  clock.advance(LIMITS.trustMs);
  const fresh = new WebhookGate(clock, { ...LIMITS, maxReads: 100 });
  fresh.enter("10.0.0.5").done(false);
  clock.advance(LIMITS.trustMs);
  [1, 2, 3].map(() => fresh.enter("10.0.0.5"));
  assert.equal(refusal(() => fresh.enter("10.0.0.5")), "RATE_LIMITED");
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
