// Start checks a current database with one statement instead of the
// Migrator's introspection, and leaves every other case to the Migrator:
// pending migrations are applied, one this code does not know is refused.
import assert from "node:assert/strict";
import { type KyselyPlugin, sql } from "kysely";
import { migrations } from "../../migrations/mod.ts";
import { migrateToLatest, migrationsCurrent } from "../../src/db/migrator.ts";
import { engineTest } from "../_harness.ts";
import type { Db } from "../../src/db/schema.ts";
import { acceptTemplates, seedTemplate } from "../messaging/_helpers.ts";
import { enqueueManyUnchecked } from "../../src/jobs/queue.ts";
import { openDatabase } from "../../src/db/database.ts";
import { startSqld } from "../_support/sqld.ts";

const NAMES = Object.keys(migrations);

/** Each migration after 0021 and the statements that undo it (add yours). */
const UNDO_LATER: Record<string, string[]> = {
  "0022_rate_buckets": ["drop table rate_buckets"],
  "0023_send_slots": ["drop table send_slots"],
  "0024_batch_guard": ["drop table batch_guard"],
  "0025_maintenance_lane": [],
};

/** The database with a plugin that counts the statements run through it. */
function counted(db: Db): { db: Db; count: () => number } {
  let n = 0;
  const plugin: KyselyPlugin = {
    transformQuery: (args) => {
      n++;
      return args.node;
    },
    transformResult: (args) => Promise.resolve(args.result),
  };
  return { db: db.withPlugin(plugin), count: () => n };
}

engineTest(
  "a current database is checked with one statement and nothing is applied",
  async (h) => {
    const { db, count } = counted(h.container.db);
    assert.deepEqual(await migrateToLatest(db), []);
    assert.equal(count(), 1);
    assert.equal(await migrationsCurrent(db), true);
    assert.equal(count(), 2);
  },
);

engineTest(
  "a pending migration is applied, and the database is current only then",
  async (h) => {
    const db = h.container.db;
    // Back to the schema before 0010 and the migrations after it, with
    // queued batch sends for 0010 to count into its new table and webhook
    // attempts queued under their subscription alone for 0017 to give to
    // their account.
    const pending = NAMES.slice(NAMES.indexOf("0010_channel_batch_backlog"));
    assert.deepEqual(pending, [
      "0010_channel_batch_backlog",
      "0011_drop_messages_inbound_idx",
      "0012_list_indexes_ascending",
      "0013_webhook_deliveries_lean_indexes",
      "0014_backlog_counted_per_insert",
      "0015_drop_conversations_contact_idx",
      "0016_webhook_batch_lane",
      "0017_webhook_jobs_owned_groups",
      "0018_panel_agents",
      "0019_conversations_activity_idx",
      "0020_meta_sync",
      "0021_job_holds",
      ...Object.keys(UNDO_LATER),
    ]);

    await seedTemplate(h);
    const accepted = await db.transaction().execute((trx) =>
      acceptTemplates(h, trx, [
        "+5491155550001",
        "+5491155550002",
        "+5491155550003",
      ])
    );
    assert.equal(accepted.accepted, 3);
    // 0014 dropped the insert trigger: the others are 0010's to make again.
    for (const side of ["delete", "leave", "enter"]) {
      await sql`drop trigger ${sql.raw(`messages_backlog_${side}`)}`
        .execute(db);
    }
    await sql`drop table channel_batch_backlog`.execute(db);
    await sql`create index messages_channel_backlog_idx
      on messages (channel_id, lane, status)`.execute(db);
    await sql`create index messages_inbound_idx
      on messages (conversation_id, direction, created_at desc)`.execute(db);
    await sql`drop index contacts_list_idx`.execute(db);
    await sql`create index contacts_list_idx
      on contacts (account_id, created_at desc, id desc)`.execute(db);
    await sql`create index conversations_contact_idx
      on conversations (contact_id, created_at, id)`.execute(db);
    await sql`create index webhook_deliveries_created_idx
      on webhook_deliveries (created_at)`.execute(db);
    await sql`create index webhook_deliveries_event_idx
      on webhook_deliveries (event_id) where status = 'pending'`.execute(db);
    await sql`drop index jobs_ungrouped_idx`.execute(db);
    await sql`create index jobs_ungrouped_idx on jobs (priority, run_at)
      where state in ('available', 'retryable') and group_key is null
        and priority in (8, 10)`.execute(db);
    const hook = await h.request("POST", "/api/v2/webhooks", {
      body: { url: "http://127.0.0.1:9/hook", events: ["contact.created"] },
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    const webhookId: string = hook.body.data.id;
    await enqueueManyUnchecked(db, [
      {
        kind: "webhook.deliver",
        payload: {},
        priority: 10,
        groupKey: webhookId,
      },
      { kind: "webhook.deliver", payload: {}, priority: 10, groupKey: "gone" },
    ], h.clock.now());
    // The newest first: those of UNDO_LATER, then 0021 to 0018.
    for (const undo of Object.values(UNDO_LATER).reverse()) {
      for (const statement of undo) await sql.raw(statement).execute(db);
    }
    await undoMetaSync(db);
    await sql`drop index conversations_activity_idx`.execute(db);
    await sql`drop table agent_sessions`.execute(db);
    await sql`drop table agent_login_links`.execute(db);
    await sql`alter table messages drop column agent_id`.execute(db);
    for (const name of pending) {
      await sql`delete from kysely_migration where name = ${name}`.execute(db);
    }
    assert.equal(await migrationsCurrent(db), false);
    assert.deepEqual(await migrateToLatest(db), pending);
    assert.equal(await migrationsCurrent(db), true);
    const index = await sql<{ name: string }>`select name from sqlite_master
      where type = 'index' and name in
        ('messages_channel_backlog_idx', 'messages_inbound_idx',
         'webhook_deliveries_created_idx', 'webhook_deliveries_event_idx',
         'conversations_contact_idx')`
      .execute(db);
    assert.equal(index.rows.length, 0);
    const triggers = await sql<{ name: string }>`select name from sqlite_master
      where type = 'trigger' and tbl_name = 'messages' order by name`
      .execute(db);
    assert.deepEqual(triggers.rows.map((r) => r.name), [
      "messages_backlog_delete",
      "messages_backlog_enter",
      "messages_backlog_leave",
    ]);
    const list = await sql<{ sql: string }>`select sql from sqlite_master
      where name = 'contacts_list_idx'`.execute(db);
    assert.match(list.rows[0]!.sql, /\(account_id, created_at, id\)$/);
    const ungrouped = await sql<{ sql: string }>`select sql from sqlite_master
      where name = 'jobs_ungrouped_idx'`.execute(db);
    assert.match(ungrouped.rows[0]!.sql, /priority in \(8, 10, 12\)$/);
    const groups = await db.selectFrom("jobs").select("group_key")
      .where("kind", "=", "webhook.deliver").orderBy("group_key").execute();
    assert.deepEqual(groups.map((j) => j.group_key), [
      `${h.tenant.account.id}/${webhookId}`,
      "gone",
    ], "a subscription's attempts go to its account; an unknown key stays");
    const backlog = await db.selectFrom("channel_batch_backlog")
      .selectAll().execute();
    assert.deepEqual(
      backlog.map((r) => ({ ...r, queued: Number(r.queued) })),
      [{ channel_id: h.tenant.channel.id, queued: 3 }],
    );
  },
  { allowTransactions: true },
);

/** The schema before 0018 and 0019 (their tables, columns and indexes gone). */
async function undoMetaSync(db: Db): Promise<void> {
  const columns: Record<string, string[]> = {
    templates: [
      "waba_id",
      "source",
      "meta_status",
      "parameter_format",
      "quality_score",
      "rejected_reason",
      "previous_category",
      "correct_category",
      "flagged_at",
      "synced_at",
      "status_event_at",
      "quality_event_at",
      "category_event_at",
      "refresh_requested_at",
    ],
    channels: [
      "throughput_level",
      "messaging_limit",
      "health_checked_at",
      "on_biz_app",
      "meta_status",
      "name_status",
      "status_reason",
      "disconnected_by",
      "restrictions",
      "name_event_at",
      "limit_event_at",
    ],
    jobs: ["hold_key", "held_since"],
  };
  for (
    const index of [
      "templates_waba_key_idx",
      "channels_waba_idx",
      "jobs_hold_idx",
    ]
  ) {
    await sql`drop index ${sql.raw(index)}`.execute(db);
  }
  for (const [table, names] of Object.entries(columns)) {
    for (const name of names) {
      await sql`alter table ${sql.raw(table)} drop column ${sql.raw(name)}`
        .execute(db);
    }
  }
  await sql`drop table meta_events`.execute(db);
  await sql`drop table wabas`.execute(db);
}

engineTest(
  "a database without the migration table is not current",
  async (h) => {
    assert.equal(await migrationsCurrent(h.container.db), true);
    await sql`drop table kysely_migration`.execute(h.container.db);
    assert.equal(await migrationsCurrent(h.container.db), false);
  },
);

engineTest(
  "a database with a migration this code does not know is refused, not taken as current",
  async (h) => {
    const db = h.container.db;
    await sql`insert into kysely_migration (name, timestamp)
      values ('9999_from_a_newer_version', '2026-11-01T00:00:00.000Z')`
      .execute(db);
    await assert.rejects(
      () => migrateToLatest(db),
      /Cannot migrate database: .*9999_from_a_newer_version/,
    );
    // Every migration this code knows is there, so readiness still holds.
    assert.equal(await migrationsCurrent(db), true);
  },
);

Deno.test({
  name:
    "three instances starting together on a fresh sqld migrate once: one applies every migration, the others wait for it and start",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const sqld = await startSqld();
    const dbs = [1, 2, 3].map(() => openDatabase(sqld.url).db);
    try {
      const applied = await Promise.all(dbs.map((db) => migrateToLatest(db)));
      assert.deepEqual(
        applied.map((names) => names.length).sort(),
        [0, 0, NAMES.length],
      );
      const { rows } = await sql<{ n: number }>`select count(*) as n
        from kysely_migration`.execute(dbs[0]!);
      assert.equal(Number(rows[0]!.n), NAMES.length);
      const lock = await sql`select * from migration_lock`.execute(dbs[0]!);
      assert.deepEqual(lock.rows, [], "the lock is released");
    } finally {
      for (const db of dbs) await db.destroy();
      await sqld.stop();
    }
  },
});
