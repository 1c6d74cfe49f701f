import assert from "node:assert/strict";
import { sql } from "kysely";
import { createHarness, engineTest, type Harness } from "../_harness.ts";
import { openDatabase } from "../../src/db/database.ts";
import { LookupCache } from "../../src/db/lookup_cache.ts";
import type { Executor } from "../../src/db/schema.ts";
import { updateTemplateStatus } from "../../src/domain/templates/template_service.ts";
import { seedTemplate, templateTo } from "../messaging/_helpers.ts";

const ACCOUNT_URL = "/api/v2/account";

function templateSend(h: Harness, to: string) {
  return { phoneNumberId: h.tenant.channel.id, ...templateTo(to) };
}

/** A second connection to the same database, as the admin CLI or another instance has. */
async function otherProcess<T>(
  h: Harness,
  fn: (db: ReturnType<typeof openDatabase>["db"]) => Promise<T>,
): Promise<T> {
  const { db } = openDatabase(h.container.config.databaseUrl);
  try {
    return await fn(db);
  } finally {
    await db.destroy();
  }
}

engineTest(
  "changes made by another connection reach the next request through the cache epoch",
  async (h) => {
    await seedTemplate(h);
    const post = (to: string) =>
      h.request("POST", "/api/v2/messages", { body: templateSend(h, to) });
    // Warm every cached lookup: principal, channel, template.
    assert.equal((await post("+5491155550201")).status, 201);
    assert.equal((await h.request("GET", ACCOUNT_URL)).status, 200);

    await otherProcess(
      h,
      (db) => db.updateTable("templates").set({ status: "paused" }).execute(),
    );
    const paused = await post("+5491155550202");
    assert.equal(paused.body.error?.code, "TEMPLATE_NOT_APPROVED");

    await otherProcess(
      h,
      (db) =>
        db.updateTable("channels").set({ status: "disconnected" }).execute(),
    );
    const down = await post("+5491155550203");
    assert.equal(down.body.error?.code, "CHANNEL_NOT_CONNECTED");

    await otherProcess(
      h,
      (db) =>
        db.updateTable("api_keys").set({
          revoked_at: "2026-01-01T00:00:00.000Z",
        })
          .execute(),
    );
    assert.equal((await h.request("GET", ACCOUNT_URL)).status, 401);
  },
  // libSQL reads the epoch at most every CACHE_TTL_MS; 0 makes it exact here.
  { env: { CACHE_TTL_MS: "0" } },
);

engineTest(
  "this process's own changes are seen at once, whatever the TTL",
  async (h) => {
    const template = await seedTemplate(h);
    const post = (to: string) =>
      h.request("POST", "/api/v2/messages", { body: templateSend(h, to) });
    assert.equal((await post("+5491155550211")).status, 201);
    await updateTemplateStatus(h.container, template.id, "rejected");
    const refused = await post("+5491155550212");
    assert.equal(refused.body.error?.code, "TEMPLATE_NOT_APPROVED");
  },
  { env: { CACHE_TTL_MS: "3600000" } },
);

engineTest(
  "the epoch moves on key changes but not on the last-used write",
  async (h) => {
    const epoch = async () =>
      Number(
        (await sql<{ n: number }>`select n from cache_epoch`.execute(
          h.container.db,
        )).rows[0]!.n,
      );
    const before = await epoch();
    await h.container.db.updateTable("api_keys")
      .set({ last_used_at: "2026-01-01T00:00:00.000Z" }).execute();
    assert.equal(await epoch(), before);
    await h.makeKey(h.tenant.account.id, ["messages:read"]);
    assert.equal(await epoch(), before + 1);
  },
);

engineTest(
  "with a TTL the epoch is read at most once per TTL, and a moved epoch drops every entry",
  async (h) => {
    let now = 0;
    const cache = new LookupCache(h.container.db, {
      ttlMs: 1000,
      now: () => now,
    });
    await cache.refresh();
    let loads = 0;
    const load = () => Promise.resolve(++loads);
    assert.equal(await cache.get("k", load), 1);
    assert.equal(await cache.get("k", load), 1, "served from memory");
    await otherProcess(
      h,
      (db) =>
        db.updateTable("channels").set({ display_name: "renamed" }).execute(),
    );
    now = 999;
    await cache.refresh();
    assert.equal(await cache.get("k", load), 1, "inside the TTL: not re-read");
    now = 1000;
    await cache.refresh();
    assert.equal(await cache.get("k", load), 2, "the moved epoch dropped it");
  },
);

engineTest(
  "a load that raced a change is not kept",
  async (h) => {
    const cache = new LookupCache(h.container.db, { ttlMs: 0 });
    await cache.refresh();
    const value = await cache.get("k", () => {
      cache.clear(); // a change lands while the row is being read
      return Promise.resolve("old");
    });
    assert.equal(value, "old");
    assert.equal(await cache.get("k", () => Promise.resolve("new")), "new");
  },
);

/** Runs `fn` inside a transaction held open on the container's one connection, then rolls it back. */
async function insideOpenTransaction(
  h: Harness,
  fn: (trx: Executor) => Promise<void>,
): Promise<void> {
  const rollback = new Error("roll back");
  await assert.rejects(
    h.container.db.transaction().execute(async (trx) => {
      await fn(trx);
      throw rollback;
    }),
    (err) => err === rollback,
  );
}

Deno.test("[sqlite] an unchanged epoch is read without waiting for the open transaction's commit", async () => {
  await using h = await createHarness();
  const cache = h.container.lookups;
  await cache.refresh();
  await insideOpenTransaction(h, async () => {
    // Through Kysely this read would queue until the transaction ends.
    assert.equal(cache.refresh(), undefined, "answered at once, no promise");
    await Promise.resolve();
  });
});

Deno.test("[sqlite] an epoch moved by a transaction that rolls back is not taken for a committed one", async () => {
  await using h = await createHarness();
  const cache = h.container.lookups;
  await cache.refresh();
  let loads = 0;
  const load = () => Promise.resolve(++loads);
  assert.equal(await cache.get("k", load), 1);
  let pending: Promise<void> | undefined;
  await insideOpenTransaction(h, async (trx) => {
    // This process's own change, uncommitted: the epoch reads one higher.
    await trx.updateTable("channels").set({ display_name: "x" }).execute();
    pending = cache.refresh();
    assert.ok(pending, "a moved epoch waits for the committed value");
  });
  await pending;
  assert.equal(await cache.get("k", load), 2, "dropped on the move");
  // Another process's change now lands on the very number the rolled-back
  // transaction showed: it must still drop the entries.
  await otherProcess(
    h,
    (db) => db.updateTable("channels").set({ display_name: "y" }).execute(),
  );
  await cache.refresh();
  assert.equal(await cache.get("k", load), 3, "the other process's change");
});
