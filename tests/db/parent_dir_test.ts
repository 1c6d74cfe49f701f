import assert from "node:assert/strict";
import { dirname } from "node:path";
import { openDatabase, parentDir } from "../../src/db/database.ts";

Deno.test("parentDir gives node:path's dirname for the paths a DATABASE_URL holds", () => {
  for (
    const path of [
      "app.db",
      "./app.db",
      "data/app.db",
      "./data/app.db",
      "../data/app.db",
      "/app.db",
      "/var/lib/bm/app.db",
      "/var/lib/bm//app.db",
    ]
  ) {
    assert.equal(parentDir(path), dirname(path), path);
  }
});

Deno.test("openDatabase creates the missing directories of a file database", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bm-parent-dir-" });
  try {
    const { db } = openDatabase(`file:${dir}/a/b/app.db`);
    await db.destroy();
    assert.ok(Deno.statSync(`${dir}/a/b/app.db`).isFile);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
