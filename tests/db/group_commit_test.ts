import assert from "node:assert/strict";
import { Kysely, sql, SqliteDialect, type Transaction } from "kysely";
import { createHarness, engineTest } from "../_harness.ts";
import { keyRow, turns } from "../_support/group_commit.ts";
import { GroupCommit } from "../../src/db/group_commit.ts";
import { openDatabase } from "../../src/db/database.ts";
import { AppError } from "../../src/errors.ts";
import type { Database, Db } from "../../src/db/schema.ts";
import {
  adaptNodeSqlite,
  openSqliteFile,
} from "../../src/db/sqlite_dialect.ts";

/**
 * GroupCommit.run's units are functions of one transaction: on libSQL that
 * is an interactive one, which no program path uses any more (they go in
 * write batches: runAtomic, runPlanned), so these tests of run() allow it.
 */
const groupTest = (name: string, fn: Parameters<typeof engineTest>[1]) =>
  engineTest(name, fn, { allowTransactions: true });

groupTest(
  "GroupCommit commits units together and rolls back only the unit that failed",
  async (h) => {
    const db = h.container.db;
    const commits = new GroupCommit(db);
    const accountId = h.tenant.account.id;
    const runs = Array.from(
      { length: 10 },
      (_, i) =>
        commits.run(async (trx) => {
          await trx.insertInto("idempotency_keys").values(
            keyRow(accountId, `k${i}`),
          )
            .execute();
          if (i === 3) throw new Error("unit 3 fails after its insert");
          return i;
        }),
    );
    const settled = await Promise.allSettled(runs);
    assert.deepEqual(
      settled.map((s) => s.status),
      Array.from({ length: 10 }, (_, i) => i === 3 ? "rejected" : "fulfilled"),
    );
    assert.match(
      String((settled[3] as PromiseRejectedResult).reason),
      /unit 3 fails/,
    );
    assert.deepEqual(
      settled.filter((s) => s.status === "fulfilled").map((s) => s.value),
      [0, 1, 2, 4, 5, 6, 7, 8, 9],
    );
    const keys = (await db.selectFrom("idempotency_keys").select("key")
      .execute()).map((r) => r.key).sort();
    assert.deepEqual(keys, [
      "k0",
      "k1",
      "k2",
      "k4",
      "k5",
      "k6",
      "k7",
      "k8",
      "k9",
    ]);
  },
);

Deno.test("GroupCommit pays one commit for the units that arrive together, and answers after it", async () => {
  const dir = await Deno.makeTempDir();
  const raw = openSqliteFile(`${dir}/a.db`);
  raw.exec("create table t (n integer)");
  const adapted = adaptNodeSqlite(raw);
  let commits = 0;
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({
      database: {
        close: () => adapted.close(),
        prepare(text: string) {
          if (/^\s*commit/i.test(text)) commits++;
          return adapted.prepare(text);
        },
      },
    }),
  });
  try {
    const group = new GroupCommit(db);
    const visibleAtResolve: number[] = [];
    await Promise.all(
      Array.from(
        { length: 20 },
        (_, i) =>
          group.run((trx) => sql`insert into t values (${i})`.execute(trx))
            .then(
              () => {
                const row = raw.prepare("select count(*) as n from t")
                  .get() as {
                    n: number;
                  };
                visibleAtResolve.push(row.n);
              },
            ),
      ),
    );
    assert.equal(commits, 1, "20 units, one commit");
    assert.ok(
      visibleAtResolve.every((n) => n === 20),
      "each unit resolves once the whole batch is committed",
    );
  } finally {
    await db.destroy();
    await Deno.remove(dir, { recursive: true });
  }
});

groupTest(
  "a unit that breaks a constraint or a rule fails alone; the rest of its group commits",
  async (h) => {
    const db = h.container.db;
    const commits = new GroupCommit(db);
    const accountId = h.tenant.account.id;
    const seen = new Set<unknown>();
    const insert = (k: string) => async (trx: Transaction<Database>) => {
      seen.add(trx);
      await trx.insertInto("idempotency_keys")
        .values(keyRow(accountId, k)).execute();
      return k;
    };
    // Queued in one turn: one group, one transaction.
    const runs = [
      commits.run(insert("a")),
      // Same primary key as "a", which is already written in this transaction.
      commits.run(insert("a")),
      commits.run(async (trx) => {
        await insert("b")(trx);
        throw new AppError("TEMPLATE_NOT_FOUND", "Rule failed after a write");
      }),
      commits.run(insert("c")),
    ];
    const settled = await Promise.allSettled(runs);
    assert.equal(seen.size, 1, "every unit ran in the same transaction");
    assert.equal(commits.stats.groups, 1);
    assert.deepEqual(settled.map((s) => s.status), [
      "fulfilled",
      "rejected",
      "rejected",
      "fulfilled",
    ]);
    const constraint = (settled[1] as PromiseRejectedResult).reason;
    assert.ok(!(constraint instanceof AppError));
    assert.match(String(constraint), /UNIQUE|constraint/i);
    const rule = (settled[2] as PromiseRejectedResult).reason;
    assert.ok(rule instanceof AppError);
    assert.equal(rule.code, "TEMPLATE_NOT_FOUND");
    const keys = (await db.selectFrom("idempotency_keys").select("key")
      .execute()).map((r) => r.key).sort();
    assert.deepEqual(keys, ["a", "c"], "b rolled back with its unit");
  },
);

groupTest(
  "units that arrive while a group commits form the next group",
  async (h) => {
    const commits = new GroupCommit(h.container.db);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => open = resolve);
    let running!: () => void;
    const started = new Promise<void>((resolve) => running = resolve);
    const first = commits.run(async () => {
      running();
      await gate;
    });
    // The writer is busy with `first`: these wait and go together.
    await started;
    const later = Array.from(
      { length: 5 },
      (_, i) => commits.run(() => Promise.resolve(i)),
    );
    open();
    await first;
    assert.deepEqual(await Promise.all(later), [0, 1, 2, 3, 4]);
    assert.deepEqual(commits.stats, { groups: 2, units: 6, largest: 5 });
  },
);

/** A GroupCommit whose gathering windows close when the test says. */
function gatheringCommits(h: { container: { db: Db } }) {
  const windows: Array<{ close: () => void; ms: number }> = [];
  const commits = new GroupCommit(h.container.db, {
    defer: (close, ms) => windows.push({ close, ms }),
  });
  return { commits, windows };
}

groupTest(
  "units that may wait, arriving in separate turns, commit together once their window closes",
  async (h) => {
    const { commits, windows } = gatheringCommits(h);
    const accountId = h.tenant.account.id;
    const done: number[] = [];
    const runs: Promise<number>[] = [];
    for (let i = 0; i < 3; i++) {
      runs.push(
        commits.run(async (trx) => {
          await trx.insertInto("idempotency_keys")
            .values(keyRow(accountId, `g${i}`)).execute();
          return i;
        }, { gatherMs: 2 }).then((v) => {
          done.push(v);
          return v;
        }),
      );
      await turns();
    }
    assert.equal(windows.length, 1, "one window for the three");
    assert.equal(windows[0]!.ms, 2);
    assert.deepEqual(done, [], "nothing runs before the window closes");
    assert.equal(commits.stats.groups, 0);
    windows[0]!.close();
    assert.deepEqual(await Promise.all(runs), [0, 1, 2]);
    assert.deepEqual(commits.stats, { groups: 1, units: 3, largest: 3 });
    const keys = await h.container.db.selectFrom("idempotency_keys")
      .select("key").where("key", "like", "g%").execute();
    assert.equal(keys.length, 3);
  },
);

groupTest(
  "a unit that cannot wait starts the writer at once and takes the waiting units along",
  async (h) => {
    const { commits, windows } = gatheringCommits(h);
    const waiting = [1, 2].map((i) =>
      commits.run(() => Promise.resolve(i), { gatherMs: 2 })
    );
    await turns();
    assert.equal(await commits.run(() => Promise.resolve(3)), 3);
    assert.deepEqual(await Promise.all(waiting), [1, 2]);
    assert.deepEqual(commits.stats, { groups: 1, units: 3, largest: 3 });
    // The window closing afterwards finds nothing left to commit.
    windows[0]!.close();
    await turns();
    assert.equal(commits.stats.groups, 1);
    // A unit that may wait, arriving while no window is open, opens a new one.
    const next = commits.run(() => Promise.resolve(4), { gatherMs: 2 });
    assert.equal(windows.length, 2);
    windows[1]!.close();
    assert.equal(await next, 4);
    assert.deepEqual(commits.stats, { groups: 2, units: 4, largest: 3 });
  },
);

Deno.test("a group a concurrent writer commits under still commits: the write lock is taken at begin", async () => {
  const dir = await Deno.makeTempDir();
  const { db } = openDatabase(`file:${dir}/a.db`);
  // Another process on the same file (the admin CLI), here one that does
  // not wait for the lock, so the test needs no timing.
  const other = openSqliteFile(`${dir}/a.db`);
  other.exec("pragma busy_timeout = 0");
  try {
    await sql`create table t (n integer)`.execute(db);
    const group = new GroupCommit(db);
    let cli: unknown = null;
    await group.run(async (trx) => {
      await sql`select count(*) from t`.execute(trx);
      // Between the group's first read and its first write. With a deferred
      // BEGIN this commit succeeded and the group's write then failed with
      // "database is locked" (a stale snapshot, which busy_timeout cannot
      // wait out), failing every unit of the group.
      try {
        other.exec("insert into t values (100)");
      } catch (err) {
        cli = err;
      }
      await sql`insert into t values (1)`.execute(trx);
    });
    assert.match(String(cli), /locked/, "the other writer waits for the group");
    other.exec("insert into t values (100)");
    const row = other.prepare("select count(*) as n from t").get() as {
      n: number;
    };
    assert.equal(row.n, 2);
  } finally {
    other.close();
    await db.destroy();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a unit error that ends the whole transaction (disk full) fails every unit of the group with that error, and nothing of it is stored", async () => {
  const dir = await Deno.makeTempDir();
  const { db } = openDatabase(`file:${dir}/a.db`);
  try {
    await sql`create table t (n integer, b blob)`.execute(db);
    const pages = (await sql<{ page_count: number }>`pragma page_count`
      .execute(db)).rows[0]!.page_count;
    // The database cannot grow by more than a few pages: a "full disk".
    await sql.raw(`pragma max_page_count = ${Number(pages) + 3}`).execute(db);
    const group = new GroupCommit(db);
    const settled = await Promise.allSettled([
      group.run((trx) => sql`insert into t values (1, null)`.execute(trx)),
      group.run((trx) =>
        sql`insert into t values (2, randomblob(200000))`.execute(trx)
      ),
      group.run((trx) => sql`insert into t values (3, null)`.execute(trx)),
    ]);
    // SQLite rolled back the whole transaction on SQLITE_FULL: no unit of
    // it committed, so none may be acknowledged, and each says why.
    assert.deepEqual(settled.map((s) => s.status), [
      "rejected",
      "rejected",
      "rejected",
    ]);
    for (const s of settled) {
      assert.match(String((s as PromiseRejectedResult).reason), /full/);
    }
    assert.deepEqual((await sql`select n from t`.execute(db)).rows, []);
    // The connection is left outside any transaction: the next group commits.
    await group.run((trx) => sql`insert into t values (4, null)`.execute(trx));
    assert.equal((await sql`select n from t`.execute(db)).rows.length, 1);
  } finally {
    await db.destroy();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("units queued by separate tasks before the writer starts share one group", async () => {
  await using h = await createHarness();
  const commits = new GroupCommit(h.container.db);
  // Two HTTP requests are two tasks: the first one's unit must not start a
  // group alone before the second one's unit (ready in the same turn) queues.
  // Two immediates are two tasks queued in one turn, as two requests read in
  // one poll are (two zero timeouts may straddle a millisecond and fire in
  // different turns, which made this test flaky).
  const units = await new Promise<Promise<number>[]>((resolve) => {
    const out: Promise<number>[] = [];
    setImmediate(() => out.push(commits.run(() => Promise.resolve(1))));
    setImmediate(() => {
      out.push(commits.run(() => Promise.resolve(2)));
      resolve(out);
    });
  });
  assert.deepEqual(await Promise.all(units), [1, 2]);
  assert.deepEqual(commits.stats, { groups: 1, units: 2, largest: 2 });
});

Deno.test("under concurrent HTTP requests a group gathers the requests that arrived while the previous one ran", async () => {
  await using h = await createHarness();
  const commits = new GroupCommit(h.container.db);
  const accountId = h.tenant.account.id;
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      const k = await req.text();
      await commits.run((trx) =>
        trx.insertInto("idempotency_keys").values(keyRow(accountId, k))
          .execute()
      );
      return new Response("ok");
    },
  );
  const url = `http://127.0.0.1:${server.addr.port}/`;
  let next = 0;
  const client = async () => {
    while (next < 400) {
      const res = await fetch(url, { method: "POST", body: `k${next++}` });
      await res.text();
    }
  };
  await Promise.all(Array.from({ length: 16 }, client));
  const stored = await h.container.db.selectFrom("idempotency_keys")
    .select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  assert.equal(Number(stored.n), 400);
  assert.equal(commits.stats.units, 400);
  // With 16 requests in flight, groups of one mean the gathering failed.
  assert.ok(
    commits.stats.units / commits.stats.groups >= 3,
    `400 requests in ${commits.stats.groups} groups`,
  );
});

Deno.test("a live unit queued after bulk units commits first, in a group without them; bulk units commit one per group", async () => {
  await using h = await createHarness();
  const commits = new GroupCommit(h.container.db);
  const groupOf = new Map<string, number>();
  const unit = (name: string) => () => {
    groupOf.set(name, commits.stats.groups);
    return Promise.resolve(name);
  };
  // Queued in one turn, before the writer starts: campaign batches first.
  const runs = [
    commits.run(unit("bulk1"), { lane: "bulk" }),
    commits.run(unit("bulk2"), { lane: "bulk" }),
    commits.run(unit("other")),
    commits.run(unit("bulk3"), { lane: "bulk" }),
    commits.run(unit("live"), { lane: "live" }),
  ];
  assert.deepEqual(await Promise.all(runs), [
    "bulk1",
    "bulk2",
    "other",
    "bulk3",
    "live",
  ]);
  assert.deepEqual(Object.fromEntries(groupOf), {
    live: 1,
    other: 1,
    bulk1: 2,
    bulk2: 3,
    bulk3: 4,
  });
  assert.deepEqual(commits.stats, { groups: 4, units: 5, largest: 2 });
});

Deno.test("a bulk unit sits out at most four groups that hold live units", async () => {
  await using h = await createHarness();
  const commits = new GroupCommit(h.container.db);
  let bulkGroup = 0;
  const live: Promise<number>[] = [];
  // Each live unit queues the next, so every group has a live unit.
  const liveUnit = (i: number) => () => {
    if (i < 8) live.push(commits.run(liveUnit(i + 1), { lane: "live" }));
    return Promise.resolve(commits.stats.groups);
  };
  const bulk = commits.run(() => {
    bulkGroup = commits.stats.groups;
    return Promise.resolve();
  }, { lane: "bulk" });
  live.push(commits.run(liveUnit(0), { lane: "live" }));
  await bulk;
  while (live.length < 9) await turns(1);
  assert.deepEqual(await Promise.all(live), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assert.equal(bulkGroup, 5, "after four groups of live units alone");
});

Deno.test("a writer kept busy by long groups still lets a request be read before the last one", async () => {
  await using h = await createHarness();
  const commits = new GroupCommit(h.container.db);
  let groupsAtRequest: number | undefined;
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => {
      groupsAtRequest = commits.stats.groups;
      return new Response("ok");
    },
  );
  // The client runs on its own thread, so its request goes out while the
  // writer keeps this one busy.
  const client = new Worker(
    `data:application/javascript,${
      encodeURIComponent(`self.onmessage = async (e) => {
        self.postMessage("sending");
        const res = await fetch(e.data);
        await res.text();
        self.postMessage("done");
      };`)
    }`,
    { type: "module" },
  );
  const messages: string[] = [];
  const next = () =>
    new Promise<void>((resolve) => {
      client.onmessage = (e) => {
        messages.push(e.data);
        resolve();
      };
    });
  try {
    const sending = next();
    client.postMessage(`http://127.0.0.1:${server.addr.port}/`);
    await sending;
    const answered = next();
    // Forty batches of synchronous work (15 ms each), one group each.
    const busy = () => {
      const until = performance.now() + 15;
      while (performance.now() < until) { /* a batch's work */ }
      return Promise.resolve();
    };
    const batches = Array.from(
      { length: 40 },
      () => commits.run(busy, { lane: "bulk" }),
    );
    await Promise.all(batches);
    await answered;
    assert.deepEqual(messages, ["sending", "done"]);
    assert.equal(commits.stats.groups, 40);
    assert.ok(
      groupsAtRequest !== undefined && groupsAtRequest < 40,
      `the request was read after ${groupsAtRequest} of 40 groups`,
    );
  } finally {
    client.terminate();
  }
});

Deno.test("a request that arrived while a live group ran is read before the bulk unit queued behind it starts", async () => {
  await using h = await createHarness();
  const commits = new GroupCommit(h.container.db);
  let read = false;
  let readWhenBulkStarted: boolean | undefined;
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => {
      if (new URL(req.url).pathname === "/next") read = true;
      return new Response("ok");
    },
  );
  // The client, on its own thread, holds a connection the server has
  // already served; when told (flag 0), it writes its next request on it and
  // says so (flag 1) once the bytes are in the server's socket.
  const flags = new Int32Array(new SharedArrayBuffer(8));
  const client = new Worker(
    `data:application/javascript,${
      encodeURIComponent(`self.onmessage = async (e) => {
        const { port, flags } = e.data;
        const conn = await Deno.connect({ hostname: "127.0.0.1", port });
        const request = (path) =>
          new TextEncoder().encode("GET " + path + " HTTP/1.1\\r\\nhost: x\\r\\n\\r\\n");
        const buf = new Uint8Array(4096);
        await conn.write(request("/first"));
        await conn.read(buf);
        self.postMessage("ready");
        Atomics.wait(flags, 0, 0);
        await conn.write(request("/next"));
        Atomics.store(flags, 1, 1);
        await conn.read(buf);
        conn.close();
        self.postMessage("done");
      };`)
    }`,
    { type: "module" },
  );
  const message = () =>
    new Promise<void>((resolve) => client.onmessage = () => resolve());
  try {
    const ready = message();
    client.postMessage({ port: server.addr.port, flags });
    await ready;
    const done = message();
    // Queued together: the live unit's group goes first, without the bulk
    // unit; the request comes while it runs.
    const live = commits.run(() => {
      Atomics.store(flags, 0, 1);
      Atomics.notify(flags, 0);
      const until = performance.now() + 5_000;
      while (Atomics.load(flags, 1) === 0 && performance.now() < until) {
        /* the client writes its request */
      }
      return Promise.resolve();
    }, { lane: "live" });
    const bulk = commits.run(() => {
      readWhenBulkStarted = read;
      return Promise.resolve();
    }, { lane: "bulk" });
    await Promise.all([live, bulk]);
    await done;
    assert.equal(Atomics.load(flags, 1), 1, "the client wrote its request");
    // Started on setImmediate, the bulk unit (tens of milliseconds of a
    // batch) ran before the runtime read the socket.
    assert.equal(readWhenBulkStarted, true);
  } finally {
    client.terminate();
  }
});
