// Status-only Meta webhooks are applied in the request's own transaction,
// without a meta.inbound job; anything else goes down the job path.
import { SendGovernor } from "../../src/upstream/send_governor.ts";
import assert from "node:assert/strict";
import { engineTest, type Harness } from "../_harness.ts";
import { queuedTemplate } from "../_support/queued_message.ts";
import {
  deliverMessage,
  failUndeliverable,
} from "../../src/domain/messages/delivery_service.ts";
import { UpstreamError } from "../../src/upstream/graph_api.ts";
import { acceptMetaWebhook } from "../../src/domain/inbound/inbound_service.ts";
import { acceptingUpstream } from "../_support/accepting_upstream.ts";
import { metaChange } from "../messaging/_helpers.ts";
import { holdWriter } from "../_support/group_commit.ts";
import { statementsOfGathered } from "../_support/statements.ts";
import type { ManualClock } from "../../src/clock.ts";
import {
  findMessageById,
  toMessage,
} from "../../src/domain/messages/message_repo.ts";
import { statusChangedPayload } from "../../src/domain/messages/message_events.ts";
import { sql } from "kysely";
import type { Plan } from "../../src/db/planned_writes.ts";
import { REFRESH_WINDOW_MS } from "../../src/domain/templates/template_refresh_service.ts";
import type { RunOptions } from "../../src/db/group_commit.ts";

/** A template message sent upstream as `wamid`, so status reports can match it. */
async function sentMessage(h: Harness, wamid: string): Promise<string> {
  const id = await queuedTemplate(h);
  await send(h, id, wamid);
  return id;
}

/** Sends queued message `id`, the upstream answering `wamid` (recorded through `commits`). */
async function send(
  h: Harness,
  id: string,
  wamid: string,
  commits = h.container.commits,
): Promise<void> {
  const { graph } = acceptingUpstream(() => wamid);
  await deliverMessage(
    { ...h.container, graph, commits, governor: UNPACED },
    id,
  );
}

/** Lets sends go at once: these tests count statements, not the pace. */
const UNPACED = new SendGovernor({ defaultRatePerSecond: 1e9 });

function webhook(h: Harness, value: Record<string, unknown>): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(metaChange(h, value)));
}

function status(id: string, value: string) {
  return { id, status: value, timestamp: "1700000000" };
}

async function jobsOf(h: Harness, kind: string) {
  const rows = await h.container.db.selectFrom("jobs").select(["unique_key"])
    .where("kind", "=", kind).execute();
  return rows.map((r) => ({ unique_key: r.unique_key }));
}

async function payload(h: Harness, id: string) {
  return await h.container.db.selectFrom("inbound_payloads")
    .select(["processed_at", "error"]).where("id", "=", id)
    .executeTakeFirstOrThrow();
}

/** A subscription to message.status_changed (its deliveries are written with each event). */
async function subscribeStatusChanges(h: Harness): Promise<void> {
  const res = await h.request("POST", "/api/v2/webhooks", {
    body: {
      url: "http://127.0.0.1:9/hook",
      events: ["message.status_changed"],
    },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
}

async function messageStatus(h: Harness, id: string) {
  const row = await h.container.db.selectFrom("messages").select("status")
    .where("id", "=", id).executeTakeFirstOrThrow();
  return row.status;
}

engineTest(
  "a status-only webhook is applied before it is acknowledged, with no job, and keeps the rank rule",
  async (h) => {
    const id = await sentMessage(h, "wamid.S1");
    assert.equal(await messageStatus(h, id), "sent");
    const delivered = await acceptMetaWebhook(
      h.container,
      webhook(h, { statuses: [status("wamid.S1", "delivered")] }),
    );
    assert.equal(await messageStatus(h, id), "delivered");
    assert.deepEqual(await jobsOf(h, "meta.inbound"), []);
    const stored = await payload(h, delivered);
    assert.ok(stored.processed_at);
    assert.equal(stored.error, null);
    // A late "sent" never moves it back; "read" moves it on.
    await acceptMetaWebhook(
      h.container,
      webhook(h, {
        statuses: [status("wamid.S1", "sent"), status("wamid.S1", "read")],
      }),
    );
    assert.equal(await messageStatus(h, id), "read");
    const changes = await h.container.db.selectFrom("events")
      .select("data").where("type", "=", "message.status_changed").execute();
    assert.deepEqual(
      changes.map((e) => JSON.parse(e.data).newStatus),
      ["sent", "delivered", "read"],
    );
    assert.deepEqual(await jobsOf(h, "meta.inbound"), []);
  },
);

engineTest(
  "a status-only webhook whose status matches no message queues a meta.status retry for it alone",
  async (h) => {
    const id = await sentMessage(h, "wamid.S2");
    const stored = await acceptMetaWebhook(
      h.container,
      webhook(h, {
        statuses: [
          status("wamid.S2", "delivered"),
          status("wamid.unknown", "delivered"),
        ],
      }),
    );
    assert.equal(await messageStatus(h, id), "delivered");
    assert.deepEqual(await jobsOf(h, "meta.status"), [
      { unique_key: `meta.status:${stored}:0.0.1` },
    ]);
    assert.deepEqual(await jobsOf(h, "meta.inbound"), []);
    assert.match(String((await payload(h, stored)).error), /1 status report/);
  },
);

engineTest(
  "a webhook with anything besides statuses, or from an unknown number, goes down the job path",
  async (h) => {
    const id = await sentMessage(h, "wamid.S3");
    const mixed = await acceptMetaWebhook(
      h.container,
      webhook(h, {
        contacts: [{ wa_id: "5491144445555", profile: { name: "Ana" } }],
        messages: [{
          from: "5491144445555",
          id: "wamid.IN1",
          timestamp: "1700000000",
          type: "text",
          text: { body: "hi" },
        }],
        statuses: [status("wamid.S3", "delivered")],
      }),
    );
    assert.equal(await messageStatus(h, id), "sent", "not applied yet");
    assert.equal((await payload(h, mixed)).processed_at, null);
    const unknown = new TextEncoder().encode(
      new TextDecoder().decode(
        webhook(h, { statuses: [status("wamid.S3", "read")] }),
      ).replace(h.tenant.channel.upstreamPhoneNumberId, "999000999"),
    );
    const other = await acceptMetaWebhook(h.container, unknown);
    assert.equal((await payload(h, other)).processed_at, null);
    assert.deepEqual(
      (await jobsOf(h, "meta.inbound")).map((j) => j.unique_key).sort(),
      [`meta.inbound:${mixed}`, `meta.inbound:${other}`].sort(),
    );
  },
);

engineTest(
  "status webhooks that arrive together share one transaction; one whose write fails goes down the job path alone",
  async (h) => {
    const ids = [
      await sentMessage(h, "wamid.G1"),
      await sentMessage(h, "wamid.G2"),
      await sentMessage(h, "wamid.G3"),
    ];
    // The stored payload of the status path (processed at once) of G2 cannot be written.
    await sql`create trigger refuse_g2 before insert on inbound_payloads
      when new.processed_at is not null and new.body like '%wamid.G2%'
      begin select raise(abort, 'refused by the test'); end`
      .execute(h.container.db);
    const { open, blocker } = await holdWriter(h);
    const before = { ...h.container.commits.stats };
    const pending = ["wamid.G1", "wamid.G2", "wamid.G3"].map((wamid) =>
      acceptMetaWebhook(
        h.container,
        webhook(h, { statuses: [status(wamid, "delivered")] }),
      )
    );
    for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 0));
    open();
    await blocker;
    const [g1, g2, g3] = await Promise.all(pending);
    const stats = h.container.commits.stats;
    if (h.engine === "sqlite") {
      // One unit of the three, rolled back whole; then each alone, in one
      // more transaction: never one transaction each. Then G2's payload is
      // stored with its job, a unit of the group transaction too. (On
      // libSQL the units are planned writes in write batches, which the
      // group transaction neither holds nor counts.)
      assert.equal(stats.units - before.units, 1 + 3 + 1);
      assert.ok(
        stats.groups - before.groups < 4,
        `${stats.groups - before.groups} commits for 3 callbacks`,
      );
    }
    assert.equal(await messageStatus(h, ids[0]!), "delivered");
    assert.equal(await messageStatus(h, ids[2]!), "delivered");
    // G2's unit rolled back alone (its status too) and was queued instead.
    assert.equal(await messageStatus(h, ids[1]!), "sent");
    assert.ok((await payload(h, g1!)).processed_at);
    assert.ok((await payload(h, g3!)).processed_at);
    assert.equal((await payload(h, g2!)).processed_at, null);
    assert.deepEqual(await jobsOf(h, "meta.inbound"), [
      { unique_key: `meta.inbound:${g2}` },
    ]);
    const events = await h.container.db.selectFrom("events")
      .select("data").where("type", "=", "message.status_changed").execute();
    assert.deepEqual(
      events.map((e) => JSON.parse(e.data).newStatus).sort(),
      ["delivered", "delivered", "sent", "sent", "sent"],
      "no event of the rolled-back unit",
    );
  },
);

/**
 * Accepts one "delivered" callback per wamid, all gathered into one group
 * commit (over a db that counts statements; its gathering window closes when
 * every callback has reached it). Returns the statements they cost.
 */
async function statementsOfCallbacks(
  h: Harness,
  wamids: string[],
): Promise<number> {
  return await statementsOfGathered(
    h.container.db,
    (commits) =>
      wamids.map((wamid) =>
        acceptMetaWebhook(
          { ...h.container, commits },
          webhook(h, { statuses: [status(wamid, "delivered")] }),
        )
      ),
  );
}

engineTest(
  "status callbacks that arrive together are one unit: channel, subscriptions, events, deliveries, jobs and payloads cost one statement each, not one per callback",
  async (h) => {
    for (const events of [["message.status_changed"], ["contact.created"]]) {
      const res = await h.request("POST", "/api/v2/webhooks", {
        body: { url: "http://127.0.0.1:9/hook", events },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    const wamids = Array.from({ length: 6 }, (_, i) => `wamid.N${i}`);
    const ids: string[] = [];
    for (const wamid of wamids) ids.push(await sentMessage(h, wamid));
    // The first signed post verifies the channel's webhook once (two
    // statements, tested below); the counts are of a verified channel's.
    await h.container.db.updateTable("channels").set({ webhook_verified: 1 })
      .execute();
    const one = await statementsOfCallbacks(h, wamids.slice(0, 1));
    const two = await statementsOfCallbacks(h, wamids.slice(1, 3));
    const three = await statementsOfCallbacks(h, wamids.slice(3, 6));
    // a + b * n: b what each status costs itself, a what the unit pays once
    // whatever its size.
    const each = two - one;
    assert.equal(three - two, each, JSON.stringify({ one, two, three }));
    // Its message read by upstream id, its status moved, its conversation's
    // mirror: the moved row is not read again.
    assert.equal(each, 3, JSON.stringify({ one, two, three }));
    assert.ok(
      one - each >= 6,
      `shared by the unit: ${one - each} statements (${
        JSON.stringify({ one, two, three })
      })`,
    );
    for (const id of ids) assert.equal(await messageStatus(h, id), "delivered");
    // Every callback's event has its delivery and its job, both written in
    // event order (a subscription's jobs of the same run_at are claimed in
    // the order they were written).
    const events = await h.container.db.selectFrom("events").select("id")
      .where("type", "=", "message.status_changed")
      .where("data", "like", '%"newStatus":"delivered"%')
      .orderBy("seq").execute();
    assert.equal(events.length, 6);
    const deliveries = await h.container.db.selectFrom("webhook_deliveries")
      .select(["id", "event_id"]).where("event", "=", "message.status_changed")
      .orderBy(sql`rowid`).execute();
    const delivered = deliveries.filter((d) =>
      events.some((e) => e.id === d.event_id)
    );
    assert.deepEqual(delivered.map((d) => d.event_id), events.map((e) => e.id));
    const jobs = await h.container.db.selectFrom("jobs").select("unique_key")
      .where("kind", "=", "webhook.deliver").orderBy(sql`rowid`).execute();
    const keys = delivered.map((d) => `webhook.deliver:${d.id}`);
    assert.deepEqual(
      jobs.map((j) => j.unique_key).filter((k) => keys.includes(k!)),
      keys,
    );
  },
  // Counted in a group transaction of the test's own (statementsOfGathered).
  { allowTransactions: true },
);

engineTest(
  "each status_changed event carries the message as stored after its change (sent sets the upstream id, failed its error)",
  async (h) => {
    const lastEvent = async () => {
      const e = await h.container.db.selectFrom("events").select("data")
        .where("type", "=", "message.status_changed").orderBy("seq", "desc")
        .executeTakeFirstOrThrow();
      return JSON.parse(e.data);
    };
    const stored = async (id: string, previous: string) =>
      JSON.parse(JSON.stringify(statusChangedPayload(
        toMessage((await findMessageById(h.container.db, id))!),
        previous,
      )));
    // queued -> sent by the send itself: the upstream id appears.
    const id = await sentMessage(h, "wamid.E1");
    assert.deepEqual(await lastEvent(), await stored(id, "queued"));
    (h.clock as ManualClock).advance(1_000);
    await acceptMetaWebhook(
      h.container,
      webhook(h, { statuses: [status("wamid.E1", "delivered")] }),
    );
    assert.deepEqual(await lastEvent(), await stored(id, "sent"));
    // A failure report on another message: its error columns.
    const other = await sentMessage(h, "wamid.E2");
    await acceptMetaWebhook(
      h.container,
      webhook(h, {
        statuses: [{
          ...status("wamid.E2", "failed"),
          errors: [{ code: 131047, title: "Re-engagement message" }],
        }],
      }),
    );
    const failed = await lastEvent();
    assert.equal(failed.errorCode, "131047");
    assert.deepEqual(failed, await stored(other, "sent"));
  },
);

engineTest(
  "sends that end together are recorded in one unit: their sent events, deliveries and jobs cost one statement each, not one per send",
  async (h) => {
    await subscribeStatusChanges(h);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await queuedTemplate(h));
    const statementsOf = (from: number, to: number) =>
      statementsOfGathered(
        h.container.db,
        (commits) =>
          ids.slice(from, to).map((id) =>
            send(h, id, `wamid.R-${id}`, commits)
          ),
      );
    const one = await statementsOf(0, 1);
    const two = await statementsOf(1, 3);
    const three = await statementsOf(3, 6);
    const each = two - one;
    assert.equal(three - two, each, JSON.stringify({ one, two, three }));
    // Its message read, its status moved, its upstream id kept, its
    // conversation's mirror; the rest once per unit.
    assert.equal(each, 4, JSON.stringify({ one, two, three }));
    assert.ok(one - each >= 5, JSON.stringify({ one, two, three }));
    const sent = await h.container.db.selectFrom("messages")
      .select(["id", "status", "wa_message_id"]).where("id", "in", ids)
      .execute();
    for (const m of sent) {
      assert.equal(m.status, "sent");
      assert.equal(m.wa_message_id, `wamid.R-${m.id}`);
    }
    // One event, delivery and job per send, written in the order recorded.
    const events = await h.container.db.selectFrom("events").select("id")
      .where("type", "=", "message.status_changed").orderBy("seq").execute();
    assert.equal(events.length, 6);
    const deliveries = await h.container.db.selectFrom("webhook_deliveries")
      .select(["id", "event_id"]).orderBy(sql`rowid`).execute();
    assert.deepEqual(
      deliveries.map((d) => d.event_id),
      events.map((e) => e.id),
    );
    const jobs = await h.container.db.selectFrom("jobs").select("unique_key")
      .where("kind", "=", "webhook.deliver").orderBy(sql`rowid`).execute();
    assert.deepEqual(
      jobs.map((j) => j.unique_key),
      deliveries.map((d) => `webhook.deliver:${d.id}`),
    );
  },
  // Counted in a group transaction of the test's own (statementsOfGathered).
  { allowTransactions: true },
);

engineTest(
  "the first signed status callback of a WABA verifies its channels' webhook, and a verified one costs no statement for it",
  async (h) => {
    const wamids = ["wamid.V1", "wamid.V2"];
    for (const wamid of wamids) await sentMessage(h, wamid);
    const verified = async () =>
      (await h.container.db.selectFrom("channels").select("webhook_verified")
        .where("id", "=", h.tenant.channel.id).executeTakeFirstOrThrow())
        .webhook_verified;
    assert.equal(await verified(), 0);
    const first = await statementsOfCallbacks(h, wamids.slice(0, 1));
    assert.equal(await verified(), 1);
    const second = await statementsOfCallbacks(h, wamids.slice(1, 2));
    assert.equal(first - second, 2, "a select and an update, the first time");
  },
  // Counted in a group transaction of the test's own (statementsOfGathered).
  { allowTransactions: true },
);

engineTest(
  "status callbacks open no transaction on libSQL: a callback's statuses of one message see each other, an unmatched one is queued, the channel verified",
  async (h) => {
    await subscribeStatusChanges(h);
    const id = await sentMessage(h, "wamid.T1");
    if (h.engine === "libsql") h.container.dbBatch!.forbidTransactions = true;
    const before = await h.container.db.selectFrom("events").select("id")
      .where("type", "=", "message.status_changed").execute();
    // Delivered and read in one callback (one unit: the second's read does
    // not see the first's write, the unit's own rows do), and a status of a
    // message not stored yet.
    const stored = await acceptMetaWebhook(
      h.container,
      webhook(h, {
        statuses: [
          status("wamid.T1", "delivered"),
          status("wamid.T1", "read"),
          status("wamid.UNKNOWN", "delivered"),
        ],
      }),
    );
    assert.ok((await payload(h, stored)).processed_at, "the status path");
    assert.match(String((await payload(h, stored)).error), /1 status report/);
    assert.equal(await messageStatus(h, id), "read");
    const events = await h.container.db.selectFrom("events").select([
      "id",
      "data",
    ])
      .where("type", "=", "message.status_changed").orderBy("seq").execute();
    assert.deepEqual(
      events.slice(before.length).map((e) => {
        const d = JSON.parse(e.data);
        return [d.previousStatus, d.newStatus];
      }),
      [["sent", "delivered"], ["delivered", "read"]],
    );
    const deliveries = await h.container.db.selectFrom("webhook_deliveries")
      .select("event_id").execute();
    for (const e of events.slice(before.length)) {
      assert.ok(deliveries.some((d) => d.event_id === e.id));
    }
    const conversation = await h.container.db.selectFrom("conversations")
      .select("last_message_status").executeTakeFirstOrThrow();
    assert.equal(conversation.last_message_status, "read");
    assert.equal((await jobsOf(h, "meta.status")).length, 1);
    const channel = await h.container.db.selectFrom("channels")
      .select("webhook_verified").where("id", "=", h.tenant.channel.id)
      .executeTakeFirstOrThrow();
    assert.equal(channel.webhook_verified, 1);
  },
);

engineTest(
  "a status whose message another writer moved between the unit's reads and its batch is planned again (libSQL's guard)",
  async (h) => {
    // On SQLite the unit holds the write lock from its first read: no
    // writer can come between (and the guards are left out).
    if (h.engine !== "libsql") return;
    const id = await sentMessage(h, "wamid.R1");
    h.container.dbBatch!.forbidTransactions = true;
    let plans = 0;
    const commits = {
      run: h.container.commits.run.bind(h.container.commits),
      runPlanned: <T>(plan: Plan<T>, opts?: RunOptions) =>
        h.container.commits.runPlanned(async (db, writes) => {
          const finish = await plan(db, writes);
          // Another instance applies "read" after this plan read "sent".
          if (plans++ === 0) {
            await sql`update messages set status = 'read' where id = ${id}`
              .execute(h.container.db);
          }
          return finish;
        }, opts),
    };
    const stored = await acceptMetaWebhook(
      { ...h.container, commits },
      webhook(h, { statuses: [status("wamid.R1", "delivered")] }),
    );
    assert.equal(plans, 2, "planned again after the guard failed");
    assert.ok((await payload(h, stored)).processed_at);
    // Planned again from "read": a delivered report changes nothing.
    assert.equal(await messageStatus(h, id), "read");
    const delivered = await h.container.db.selectFrom("events").select("id")
      .where("type", "=", "message.status_changed")
      .where("data", "like", '%"newStatus":"delivered"%').execute();
    assert.deepEqual(delivered, []);
  },
);

engineTest(
  "failed template statuses in the status path ask for one refresh of the template per window (on libSQL without a transaction)",
  async (h) => {
    const ids = [];
    for (const wamid of ["wamid.F1", "wamid.F2", "wamid.F3"]) {
      ids.push(await sentMessage(h, wamid));
    }
    if (h.engine === "libsql") h.container.dbBatch!.forbidTransactions = true;
    const failed = (wamid: string) => ({
      ...status(wamid, "failed"),
      errors: [{ code: 132001, title: "Template does not exist" }],
    });
    // Two in one unit: one request taken, one job.
    await acceptMetaWebhook(
      h.container,
      webhook(h, { statuses: [failed("wamid.F1"), failed("wamid.F2")] }),
    );
    assert.equal((await jobsOf(h, "template.refresh")).length, 1);
    (h.clock as ManualClock).advance(60_000);
    await acceptMetaWebhook(
      h.container,
      webhook(h, { statuses: [failed("wamid.F3")] }),
    );
    assert.equal((await jobsOf(h, "template.refresh")).length, 1, "in 5 min");
    for (const id of ids) assert.equal(await messageStatus(h, id), "failed");
    // After the window a failure asks again.
    await h.container.db.updateTable("messages").set({ status: "sent" })
      .where("id", "=", ids[2]!).execute();
    (h.clock as ManualClock).advance(REFRESH_WINDOW_MS);
    await acceptMetaWebhook(
      h.container,
      webhook(h, { statuses: [failed("wamid.F3")] }),
    );
    assert.equal((await jobsOf(h, "template.refresh")).length, 2);
  },
);

engineTest(
  "an accepted send is recorded without a transaction on libSQL; a report that lands between its read and its batch keeps its status (libSQL's guard)",
  async (h) => {
    await subscribeStatusChanges(h);
    const first = await queuedTemplate(h);
    const second = await queuedTemplate(h);
    if (h.engine === "libsql") h.container.dbBatch!.forbidTransactions = true;
    await send(h, first, "wamid.A1");
    assert.equal(await messageStatus(h, first), "sent");
    if (h.engine !== "libsql") return;
    // Meta's "delivered" (matched by our opaque id) is applied by another
    // instance after the record read the message queued.
    let plans = 0;
    const commits = {
      ...h.container.commits,
      runPlanned: <T>(plan: Plan<T>, opts?: RunOptions) =>
        h.container.commits.runPlanned(async (db, writes) => {
          const finish = await plan(db, writes);
          if (plans++ === 0) {
            await sql`update messages set status = 'delivered'
              where id = ${second}`.execute(h.container.db);
          }
          return finish;
        }, opts),
    } as typeof h.container.commits;
    await send(h, second, "wamid.A2", commits);
    assert.equal(plans, 2, "planned again after the guard failed");
    const row = await h.container.db.selectFrom("messages")
      .select(["status", "wa_message_id"]).where("id", "=", second)
      .executeTakeFirstOrThrow();
    assert.deepEqual({ ...row }, {
      status: "delivered",
      wa_message_id: "wamid.A2",
    });
    const events = await h.container.db.selectFrom("events").select("data")
      .where("type", "=", "message.status_changed").execute();
    assert.equal(events.filter((e) => e.data.includes(first)).length, 1);
    assert.equal(
      events.filter((e) => e.data.includes(second)).length,
      0,
      "no sent event for a message already delivered",
    );
  },
);

engineTest(
  "a send Meta refuses with a template error is marked failed and asks for one refresh, without a transaction on libSQL; a report that got further first wins (libSQL's guard)",
  async (h) => {
    await subscribeStatusChanges(h);
    const ids = [await queuedTemplate(h), await queuedTemplate(h)];
    if (h.engine === "libsql") h.container.dbBatch!.forbidTransactions = true;
    const refused = new UpstreamError("Graph API rejected the send", {
      category: "template_not_found",
      upstreamCode: 132001,
      httpStatus: 400,
    });
    await failUndeliverable(h.container, ids[0]!, refused);
    const row = await h.container.db.selectFrom("messages")
      .select(["status", "error_code"]).where("id", "=", ids[0]!)
      .executeTakeFirstOrThrow();
    assert.deepEqual({ ...row }, { status: "failed", error_code: "132001" });
    assert.equal((await jobsOf(h, "template.refresh")).length, 1);
    const failedEvents = await h.container.db.selectFrom("events")
      .select("id").where("type", "=", "message.status_changed")
      .where("data", "like", `%${ids[0]}%`).execute();
    assert.equal(failedEvents.length, 1);
    if (h.engine !== "libsql") return;
    // A "sent" report lands between the second's read and its batch.
    let plans = 0;
    const commits = {
      runPlanned: <T>(plan: Plan<T>, opts?: RunOptions) =>
        h.container.commits.runPlanned(async (db, writes) => {
          const finish = await plan(db, writes);
          if (plans++ === 0) {
            await sql`update messages set status = 'sent'
              where id = ${ids[1]}`.execute(h.container.db);
          }
          return finish;
        }, opts),
    } as typeof h.container.commits;
    await failUndeliverable({ ...h.container, commits }, ids[1]!, refused);
    assert.equal(plans, 2, "planned again after the guard failed");
    assert.equal(await messageStatus(h, ids[1]!), "sent");
  },
);
