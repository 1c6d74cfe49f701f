// The newest-first list indexes of contacts and conversations are declared
// ascending (migration 0012): rows arrive newest last, so an ascending index
// takes them at the end of its range and fills its pages, where a `desc`
// one took each at the front and split its pages in half.
import assert from "node:assert/strict";
import { sql } from "kysely";
import { createHarness } from "../_harness.ts";
import type { ManualClock } from "../../src/clock.ts";
import { acceptTemplates, seedTemplate } from "../messaging/_helpers.ts";

const LIST_INDEXES = [
  "contacts_list_idx",
  "conversations_list_idx",
  "conversations_status_idx",
];

Deno.test("the list indexes stay packed as batches of fresh recipients arrive", async () => {
  await using h = await createHarness();
  await seedTemplate(h);
  const clock = h.clock as ManualClock;
  for (let b = 0; b < 20; b++) {
    const to = Array.from(
      { length: 100 },
      (_, k) => `+54911${String(5_000_000 + b * 100 + k).padStart(8, "0")}`,
    );
    const result = await h.container.db.transaction().execute((trx) =>
      acceptTemplates(h, trx, to)
    );
    assert.equal(result.accepted, 100);
    clock.advance(1000);
  }
  // Leaf pages only: how full the pages holding the 2,000 entries are.
  const { rows } = await sql<{ name: string; fill: number }>`
    select name, 1.0 - 1.0 * sum(unused) / sum(pgsize) as fill from dbstat
    where name in (${sql.join(LIST_INDEXES)}) and pagetype = 'leaf'
    group by name`.execute(h.container.db);
  assert.equal(rows.length, LIST_INDEXES.length);
  for (const { name, fill } of rows) {
    assert.ok(
      fill > 0.8,
      `${name} leaf pages are ${Math.round(fill * 100)}% full`,
    );
  }
});
