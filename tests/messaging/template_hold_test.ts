// A template Meta pauses holds the queued sends of it (issue 28, item 3):
// they wait without spending an attempt until it is approved again (then go
// at once), or fail with TEMPLATE_NOT_APPROVED after 24 h; a disabled one
// fails them at once. And a template error from Meta (132001 ...) has the
// template read again, at most once per template per 5 minutes.
import assert from "node:assert/strict";
import { ManualClock } from "../../src/clock.ts";
import { syncWabaTemplates } from "../../src/domain/templates/template_sync_service.ts";
import {
  holdForMetaPause,
  TEMPLATE_HOLD_LIMIT_MS,
  TEMPLATE_RECHECK_MS,
} from "../../src/domain/messages/queued_template_service.ts";
import { findChannelById } from "../../src/domain/channels/channel_repo.ts";
import { HoldJob } from "../../src/errors.ts";
import { REFRESH_WINDOW_MS } from "../../src/domain/templates/template_refresh_service.ts";
import { metaTest, type MetaWorld } from "../_support/meta.ts";

const ORDER_UPDATE = {
  type: "template",
  template: {
    name: "order_update",
    language: { code: "es_AR" },
    components: [{
      type: "body",
      parameters: [{ type: "text", text: "Ana" }, {
        type: "text",
        text: "A-1",
      }],
    }],
  },
};

/** A campaign of `n` order_update sends (batch lane: behind Meta's webhooks); their message ids. */
async function campaign(w: MetaWorld, n: number): Promise<string[]> {
  const res = await w.request("POST", "/api/v2/messages/batch", {
    body: {
      defaultPhoneNumberId: w.tenant.channel.id,
      messages: Array.from({ length: n }, (_, i) => ({
        to: `+54911555${String(10000 + i)}`,
        ...ORDER_UPDATE,
      })),
    },
  });
  assert.equal(res.body.data?.accepted, n, JSON.stringify(res.body));
  return res.body.data.items.map((i: { message: { id: string } }) =>
    i.message.id
  );
}

async function sendJobs(w: MetaWorld, ids: string[]) {
  const rows = await w.container.db.selectFrom("jobs").selectAll()
    .where("kind", "=", "message.send").execute();
  return rows.filter((r) => ids.some((id) => r.payload.includes(id)));
}

async function statuses(w: MetaWorld, ids: string[]) {
  const rows = await w.container.db.selectFrom("messages")
    .select(["id", "status", "error_code"]).where("id", "in", ids).execute();
  return rows.map((r) => [r.status, r.error_code]);
}

/**
 * Runs what is due a second from now: a campaign's sends are paced (80 a
 * second per number), so they fall due a few milliseconds apart.
 */
async function run(w: MetaWorld): Promise<void> {
  (w.clock as ManualClock).advance(1_000);
  await w.settle();
}

/**
 * Meta's webhook about a template, applied before the queued sends are due:
 * the clock goes back a few seconds while it is posted and its job runs
 * (otherwise both run at once, and a send can meet Meta's own refusal,
 * 132015 or 132016, first).
 */
async function metaSays(
  w: MetaWorld,
  name: string,
  body: Record<string, unknown>,
): Promise<void> {
  const clock = w.clock as ManualClock;
  const now = clock.now();
  clock.set(new Date(now.getTime() - 5_000));
  await w.sim(`/templates/${name}/status`, { wabaId: w.wabaId, ...body });
  await w.settle();
  clock.set(now);
}

async function templateId(w: MetaWorld, name = "order_update/es_AR") {
  return (await w.templates()).get(name)!.id;
}

metaTest(
  "a template Meta pauses holds its queued sends without spending attempts, until it is approved again",
  async (w) => {
    await syncWabaTemplates(w.container, w.wabaId, { mode: "live" });
    const ids = await campaign(w, 3);
    await metaSays(w, "order_update", { status: "PAUSED" });
    await run(w);
    const key = `template:${await templateId(w)}`;
    let jobs = await sendJobs(w, ids);
    assert.equal(jobs.length, 3);
    for (const job of jobs) {
      assert.equal(job.state, "available");
      assert.equal(job.attempt, 0, "no attempt spent");
      assert.equal(job.hold_key, key);
      assert.ok(job.held_since);
      assert.ok(
        Date.parse(job.run_at) - w.clock.now().getTime() <= TEMPLATE_RECHECK_MS,
      );
    }
    assert.deepEqual(await statuses(w, ids), Array(3).fill(["queued", null]));
    const sentBefore = (await w.simGet("/messages")).messages as unknown[];
    assert.equal(sentBefore.length, 0, "nothing reached Meta");
    // A new send of it is refused at once.
    const refused = await w.request("POST", "/api/v2/messages", {
      body: {
        phoneNumberId: w.tenant.channel.id,
        to: "+5491155599999",
        ...ORDER_UPDATE,
      },
    });
    assert.equal(refused.status, 422);
    assert.equal(refused.body.error.code, "TEMPLATE_NOT_APPROVED");
    assert.match(refused.body.error.message, /"paused" \(Meta: PAUSED\)/);

    // Approved again: the webhook wakes the held sends; they go at once.
    await w.sim("/templates/order_update/status", {
      wabaId: w.wabaId,
      status: "APPROVED",
    });
    await run(w);
    jobs = await sendJobs(w, ids);
    for (const job of jobs) {
      assert.equal(job.state, "completed");
      assert.equal(job.attempt, 1, "one attempt: the one that sent");
    }
    for (const [status] of await statuses(w, ids)) {
      assert.ok(["sent", "delivered", "read"].includes(status!), status!);
    }
  },
);

metaTest(
  "a send held 24 h fails with TEMPLATE_NOT_APPROVED; a disabled template fails its sends at once",
  async (w) => {
    await syncWabaTemplates(w.container, w.wabaId, { mode: "live" });
    const held = await campaign(w, 2);
    await metaSays(w, "order_update", { status: "PAUSED" });
    await run(w);
    assert.deepEqual(await statuses(w, held), Array(2).fill(["queued", null]));
    // Looked at every TEMPLATE_RECHECK_MS, still paused, for a day.
    const clock = w.clock as ManualClock;
    for (
      let waited = 0;
      waited <= TEMPLATE_HOLD_LIMIT_MS;
      waited += TEMPLATE_RECHECK_MS
    ) {
      clock.advance(TEMPLATE_RECHECK_MS);
      await run(w);
    }
    assert.deepEqual(
      await statuses(w, held),
      Array(2).fill(["failed", "TEMPLATE_NOT_APPROVED"]),
    );
    for (const job of await sendJobs(w, held)) {
      assert.equal(job.attempt, 1, "the holds spent none; the failure one");
    }

    const disabled = await campaign(w, 2).catch(() => null);
    assert.equal(disabled, null, "a paused template is refused at admission");
    await w.sim("/templates/welcome/status", {
      wabaId: w.wabaId,
      language: "en_US",
      status: "APPROVED",
    });
    await run(w);
    const res = await w.request("POST", "/api/v2/messages/batch", {
      body: {
        defaultPhoneNumberId: w.tenant.channel.id,
        messages: [1, 2].map((i) => ({
          to: `+54911666000${i}`,
          type: "template",
          template: {
            name: "welcome",
            language: { code: "en_US" },
            components: [{
              type: "body",
              parameters: [{ type: "text", text: "Ana" }],
            }],
          },
        })),
      },
    });
    const welcome = res.body.data.items.map((
      i: { message: { id: string } },
    ) => i.message.id);
    await metaSays(w, "welcome", { language: "en_US", status: "DISABLED" });
    await run(w);
    assert.deepEqual(
      await statuses(w, welcome),
      Array(2).fill(["failed", "TEMPLATE_NOT_APPROVED"]),
    );
    for (const job of await sendJobs(w, welcome)) {
      assert.equal(job.hold_key, null, "never held");
    }
  },
);

metaTest(
  "a 132001 from Meta reads the template again, at most once per template per 5 minutes",
  async (w) => {
    await syncWabaTemplates(w.container, w.wabaId, { mode: "live" });
    // Meta deleted the template meanwhile: its sends fail with 132001.
    await fetch(
      `${w.simulator.url}/_sim/wabas/${w.wabaId}/templates/order_update`,
      { method: "DELETE" },
    ).then((r) => r.body?.cancel());
    await w.sim("/behaviour", { unknownTemplates: ["order_update"] });
    const refreshes = async () =>
      (await w.calls()).filter((c) => c.path.includes("name=order_update"))
        .length;
    const first = await campaign(w, 5);
    await run(w);
    assert.deepEqual(
      await statuses(w, first),
      Array(5).fill(["failed", "132001"]),
    );
    assert.equal(await refreshes(), 1, "five failures, one refresh");
    const row = (await w.templates()).get("order_update/es_AR")!;
    assert.equal(row.status, "disabled", "gone from Meta: disabled");
    assert.equal(row.meta_status, "DELETED");
    const refused = await w.request("POST", "/api/v2/messages", {
      body: {
        phoneNumberId: w.tenant.channel.id,
        to: "+5491155599998",
        ...ORDER_UPDATE,
      },
    });
    assert.equal(refused.body.error.code, "TEMPLATE_NOT_APPROVED");

    // Within the window another failure sets off nothing; after it, one more.
    await w.container.db.updateTable("templates").set({ status: "approved" })
      .where("id", "=", row.id).execute();
    (w.clock as ManualClock).advance(60_000);
    await campaign(w, 2);
    await run(w);
    assert.equal(await refreshes(), 1, "inside 5 minutes: none");
    await w.container.db.updateTable("templates").set({ status: "approved" })
      .where("id", "=", row.id).execute();
    (w.clock as ManualClock).advance(REFRESH_WINDOW_MS);
    await campaign(w, 2);
    await run(w);
    assert.equal(await refreshes(), 2, "after 5 minutes: one more");
  },
);

metaTest(
  "a send Meta refuses as paused (132015) before its webhook holds, and asks for one template refresh a window, in one write (no transaction on libSQL)",
  async (w) => {
    await syncWabaTemplates(w.container, w.wabaId, { mode: "live" });
    const [id] = await campaign(w, 1);
    const row = await w.container.db.selectFrom("messages")
      .select(["type", "channel_id", "content", "account_id"])
      .where("id", "=", id!).executeTakeFirstOrThrow();
    const channel = (await findChannelById(w.container.db, row.channel_id!))!;
    if (w.container.dbBatch) w.container.dbBatch.forbidTransactions = true;
    const refreshJobs = async () =>
      (await w.container.db.selectFrom("jobs").select("id")
        .where("kind", "=", "template.refresh").execute()).length;
    const before = await refreshJobs();
    for (let i = 0; i < 2; i++) {
      const held = await holdForMetaPause(w.container, row, {
        channel,
        heldSince: null,
      });
      assert.ok(held instanceof HoldJob, String(held));
    }
    assert.equal(await refreshJobs() - before, 1, "one refresh a window");
  },
);
