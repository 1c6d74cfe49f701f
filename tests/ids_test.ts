// newId: a UUIDv7 whose first 48 bits are the time given, in the shape
// UUID_REGEXP accepts, version 7, variant 10, distinct and time-ordered.
import assert from "node:assert/strict";
import { idTime, isUuid, newId } from "../src/ids.ts";

Deno.test("newId makes UUIDv7 ids that carry their time and sort by it", () => {
  const times = [
    0,
    1,
    0xffff,
    0x10000,
    Date.UTC(2026, 10, 23, 12, 0, 0, 123),
    2 ** 48 - 1,
  ];
  for (const t of times) {
    const id = newId(t);
    assert.ok(isUuid(id), id);
    assert.match(
      id,
      /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    assert.equal(idTime(id).getTime(), t, id);
  }
  const ids = times.map((t) => newId(t));
  assert.deepEqual([...ids].sort(), ids);
});

Deno.test("newId draws 10,000 distinct ids in one millisecond", () => {
  const now = Date.now();
  const ids = new Set(Array.from({ length: 10_000 }, () => newId(now)));
  assert.equal(ids.size, 10_000);
  // Each is its own string, not the buffer it was written in.
  const [a, b] = [newId(now), newId(now)];
  assert.notEqual(a, b);
  assert.equal(a.length, 36);
});
