// toDbTime() formats as toISOString() does, and formats a second once: the
// due times of a batch's jobs (a few ms apart) cost one toISOString() each
// second, not one each.
import assert from "node:assert/strict";
import { toDbTime } from "../../src/db/time.ts";

function countingToISOString<T>(run: () => T): { calls: number; out: T } {
  const original = Date.prototype.toISOString;
  let calls = 0;
  Date.prototype.toISOString = function (this: Date) {
    calls++;
    return original.call(this);
  };
  try {
    const out = run();
    return { calls, out };
  } finally {
    Date.prototype.toISOString = original;
  }
}

Deno.test("toDbTime() is toISOString() for every instant, in any order", () => {
  const base = Date.UTC(2026, 10, 23, 12, 0, 59, 990);
  const instants = [
    ...Array.from({ length: 300 }, (_, i) => base + i * 7),
    ...Array.from({ length: 50 }, (_, i) => base + 5000 - i * 13),
    0,
    -1,
    -999,
    -1000,
    -1001,
    Date.UTC(1969, 11, 31, 23, 59, 59, 999),
    Date.UTC(10000, 0, 1, 0, 0, 0, 5),
    Date.UTC(10000, 0, 1, 0, 0, 0, 6),
    Date.UTC(-1, 0, 1, 0, 0, 0, 7),
    8.64e15,
    -8.64e15,
    base,
    base + 1,
    base + 1,
  ];
  for (const ms of instants) {
    const date = new Date(ms);
    assert.equal(toDbTime(date), date.toISOString(), `at ${ms}`);
  }
  assert.throws(() => toDbTime(new Date(Number.NaN)), RangeError);
  assert.equal(toDbTime(new Date(base)), new Date(base).toISOString());
});

Deno.test("toDbTime() formats a second once for many instants in it", () => {
  const second = Date.UTC(2026, 10, 23, 12, 1, 0, 0);
  // 80 a second per number: a batch's due times 12.5 ms apart, two seconds.
  const dates = Array.from(
    { length: 160 },
    (_, i) => new Date(second + Math.floor(i * 12.5)),
  );
  const counted = countingToISOString(() => dates.map(toDbTime));
  assert.deepEqual(counted.out, dates.map((d) => d.toISOString()));
  assert.equal(counted.calls, 2);
});
