// The rule that deals a capped claim's free slots: round-robin by owner (a
// webhook subscription's account), then by group (the subscription), each
// within its caps, the starts moving from claim to claim.
import assert from "node:assert/strict";
import {
  moveWithin,
  nextAfter,
  ownedGroupKey,
  ownerOf,
  planClaim,
} from "../../src/jobs/queue_ring.ts";

const job = (groupKey: string | null) => ({ groupKey });

Deno.test("ownerOf() is the part of a group key before the separator, or the key without one", () => {
  assert.equal(ownedGroupKey("acct", "hook"), "acct/hook");
  assert.equal(ownerOf("acct/hook"), "acct");
  assert.equal(ownerOf("hook"), "hook", "a key of before the owners");
});

Deno.test("planClaim() deals one slot per owner per round, each to the owner's next group", () => {
  const due = [null, "a/1", "a/2", "a/3", "b/1", "c/1", "c/2"];
  const plan = planClaim(due, 9, { cap: 16, running: new Map() });
  assert.deepEqual([...plan], [
    [null, 3],
    ["a/1", 1],
    ["b/1", 2],
    ["c/1", 1],
    ["a/2", 1],
    ["c/2", 1],
  ], "rounds: null a/1 b/1 c/1, null a/2 b/1 c/2, null");
  assert.deepEqual(
    [...planClaim(due.slice(1), 3, { cap: 16, running: new Map() })],
    [["a/1", 1], ["b/1", 1], ["c/1", 1]],
    "three slots: one per owner, not three to the first",
  );
});

Deno.test("planClaim() keeps each owner within ownerCap and each group within cap, counting what runs", () => {
  const due = ["a/1", "a/2", "a/3", "b/1"];
  const running = new Map([["a/1", 2], ["a/2", 1], ["b/1", 3]]);
  const plan = planClaim(due, 20, { cap: 4, ownerCap: 5, running });
  assert.deepEqual(
    Object.fromEntries(plan),
    {
      "a/1": 1,
      "a/2": 1,
      "b/1": 1,
    },
    "a had 3 of 5 running: 2 more, to its first two groups; b/1 had 3 of its 4",
  );
  const full = planClaim(due, 20, {
    cap: 4,
    ownerCap: 3,
    running: new Map([["a/1", 3]]),
  });
  assert.deepEqual(Object.fromEntries(full), { "b/1": 3 }, "a is full");
});

Deno.test("planClaim() starts after the last claim's first owner, and within each owner after its last first group", () => {
  const due = ["a/1", "a/2", "b/1", "c/1"];
  const plan = planClaim(due, 3, {
    cap: 16,
    running: new Map(),
    after: "a",
    within: new Map([["a", "a/1"]]),
  });
  assert.deepEqual([...plan.keys()], ["b/1", "c/1", "a/2"]);
});

Deno.test("nextAfter() and moveWithin() move each ring past the first member a claim took", () => {
  assert.equal(nextAfter("a", [job("c/1"), job("a/2")]), "c");
  assert.equal(nextAfter("c", [job("c/1"), job("a/2")]), "a", "wrapping");
  assert.equal(nextAfter("b", []), "b", "nothing claimed: unchanged");
  const within = new Map([["a", "a/2"]]);
  moveWithin(within, [job("a/1"), job("a/3"), job("b/2"), job(null)]);
  assert.deepEqual(Object.fromEntries(within), { a: "a/3", b: "b/2" });
});

Deno.test("slots dealt one at a time go round the owners, then round each owner's groups", () => {
  const due = ["a/1", "a/2", "a/3", "b/1", "c/1", "c/2"];
  let after: string | null | undefined;
  const within = new Map<string, string>();
  const order: (string | null)[] = [];
  for (let i = 0; i < 9; i++) {
    const plan = planClaim(due, 1, {
      cap: 16,
      running: new Map(),
      after,
      within,
    });
    const claimed = [...plan.keys()].map(job);
    order.push(...claimed.map((j) => j.groupKey));
    after = nextAfter(after, claimed);
    moveWithin(within, claimed);
  }
  assert.deepEqual(order, [
    "a/1",
    "b/1",
    "c/1",
    "a/2",
    "b/1",
    "c/2",
    "a/3",
    "b/1",
    "c/1",
  ]);
});
