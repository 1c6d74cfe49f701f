// Embedded SQLite runs statements straight on node:sqlite where Kysely
// would (runStatementsDirectly): in a transaction, and outside one while
// none is open; fewer promises, the same results, plugins, ordering and
// isolation as Kysely's own path.
import assert from "node:assert/strict";
import {
  CompiledQuery,
  type KyselyPlugin,
  type PluginTransformResultArgs,
  sql,
} from "kysely";
import { openDatabase } from "../../src/db/database.ts";
import type { SyncResultPlugin } from "../../src/db/sqlite_dialect.ts";

async function openFile() {
  const dir = await Deno.makeTempDir();
  const { db } = openDatabase(`file:${dir}/held.db`);
  await sql`create table t (x integer primary key, y text)`.execute(db);
  return {
    db,
    async [Symbol.asyncDispose]() {
      await db.destroy();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

const insert = (x: number) =>
  CompiledQuery.raw("insert into t (x, y) values (?, ?)", [x, `v${x}`]);
const COUNT = CompiledQuery.raw("select count(*) as n from t") as CompiledQuery<
  { n: number }
>;

/** Lets the microtasks queued so far run, `n` rounds. */
async function ticks(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await Promise.resolve();
}

Deno.test("a statement in a transaction settles within two microtasks, with Kysely's result shape", async () => {
  await using f = await openFile();
  await f.db.transaction().execute(async (trx) => {
    let result: unknown;
    trx.executeQuery(insert(7)).then((r) => result = r);
    await ticks(2);
    // Kysely's own path takes about eight promises for the same statement.
    assert.deepEqual(result, { numAffectedRows: 1n, insertId: 7n, rows: [] });
    const rows = await trx.selectFrom("t" as never).selectAll().execute();
    assert.deepEqual(rows.map((r) => ({ ...(r as object) })), [
      { x: 7, y: "v7" },
    ]);
  });
});

Deno.test("a statement while no transaction is open settles within two microtasks", async () => {
  await using f = await openFile();
  await f.db.executeQuery(COUNT); // the driver opens the connection
  let result: unknown;
  f.db.executeQuery(insert(5)).then((r) => result = r);
  await ticks(2);
  assert.deepEqual(result, { numAffectedRows: 1n, insertId: 5n, rows: [] });
});

Deno.test("a statement outside the transaction waits for its commit instead of running inside it", async () => {
  await using f = await openFile();
  let open!: () => void;
  const gate = new Promise<void>((resolve) => open = resolve);
  const trx = f.db.transaction().execute(async (trx) => {
    await trx.executeQuery(insert(1));
    await gate;
    await trx.executeQuery(insert(2));
  });
  await ticks(5);
  let outside: number | undefined;
  const read = f.db.executeQuery(COUNT).then((r) => outside = r.rows[0]!.n);
  await ticks(20);
  assert.equal(outside, undefined);
  open();
  await trx;
  await read;
  assert.equal(outside, 2);
});

Deno.test("a failing statement rejects, and the transaction it fails rolls back", async () => {
  await using f = await openFile();
  await assert.rejects(
    f.db.transaction().execute(async (trx) => {
      await trx.executeQuery(insert(1));
      await trx.executeQuery(insert(1));
    }),
    /UNIQUE/i,
  );
  assert.equal((await f.db.executeQuery(COUNT)).rows[0]!.n, 0);
});

Deno.test("plugins of the database see the results of statements in its transactions", async () => {
  await using f = await openFile();
  const seen: unknown[] = [];
  const plugin: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult(args: PluginTransformResultArgs) {
      seen.push(args.result.rows.length);
      return Promise.resolve({ ...args.result, rows: [{ tagged: true }] });
    },
  };
  const db = f.db.withPlugin(plugin);
  const rows = await db.transaction().execute(async (trx) => {
    await trx.executeQuery(insert(3));
    return (await trx.executeQuery(COUNT)).rows;
  });
  assert.deepEqual(seen, [0, 1]);
  assert.deepEqual(rows, [{ tagged: true }]);
});

Deno.test("plugins with a synchronous result hook cost no microtask: in order, within the same two as without plugins", async () => {
  await using f = await openFile();
  const tagger = (tag: string): SyncResultPlugin => ({
    transformQuery: (args) => args.node,
    transformResult: () => Promise.reject(new Error("the executor awaited")),
    transformResultNow: (args) => ({
      ...args.result,
      rows: [...args.result.rows, { tag }],
    }),
  });
  const db = f.db.withPlugin(tagger("first")).withPlugin(tagger("second"));
  await db.transaction().execute(async (trx) => {
    let result: unknown;
    trx.executeQuery(insert(9)).then((r) => result = r);
    await ticks(2);
    assert.deepEqual(result, {
      numAffectedRows: 1n,
      insertId: 9n,
      rows: [{ tag: "first" }, { tag: "second" }],
    });
  });
});
