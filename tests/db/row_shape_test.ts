// A statement marked ROWS_AS_ARRAYS gets its rows as arrays from the embedded SQLite adapter; others keep objects.
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { adaptNodeSqlite } from "../../src/db/sqlite_dialect.ts";
import { ROWS_AS_ARRAYS } from "../../src/db/row_shape.ts";

Deno.test("a statement marked ROWS_AS_ARRAYS returns arrays, in column order; an unmarked one objects", () => {
  const raw = new DatabaseSync(":memory:");
  try {
    const db = adaptNodeSqlite(raw);
    const text = "select 1 as a, 'x' as b, null as c";
    assert.deepEqual(db.prepare(ROWS_AS_ARRAYS + text).all([]), [[
      1,
      "x",
      null,
    ]]);
    assert.deepEqual(
      db.prepare(text).all([]).map((r) => ({ ...(r as object) })),
      [{ a: 1, b: "x", c: null }],
    );
  } finally {
    raw.close();
  }
});
