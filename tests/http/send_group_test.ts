import assert from "node:assert/strict";
import { engineTest, type Harness } from "../_harness.ts";
import { seedTemplate, templateTo } from "../messaging/_helpers.ts";
import { holdWriter } from "../_support/group_commit.ts";

function templateSend(h: Harness, to: string, name = "greeting", params = 1) {
  return {
    phoneNumberId: h.tenant.channel.id,
    ...templateTo(to, name, Array.from({ length: params }, () => "Ana")),
  };
}

/** Whether units were committed together: in one transaction (SQLite), one batch (libSQL). */
function sharedCommit(h: Harness): boolean {
  const batches = h.container.commits.batchStats;
  if (!batches) return h.container.commits.stats.largest > 1;
  return batches.units > batches.batches;
}

engineTest(
  "sends that share a group commit fail alone with their own code; the others commit",
  async (h) => {
    await seedTemplate(h);
    const used = templateSend(h, "+5491155550100");
    const key = { "Idempotency-Key": "order-7" };
    const first = await h.request("POST", "/api/v2/messages", {
      body: used,
      headers: key,
    });
    assert.equal(first.status, 201);

    const { open, blocker } = await holdWriter(h);
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      h.request("POST", "/api/v2/messages", { body, headers });
    const pending = [
      post(templateSend(h, "+5491155550101")),
      post(templateSend(h, "+5491155550102", "no_such_template")),
      post(templateSend(h, "+5491155550103")),
      post(templateSend(h, "+5491155550104", "greeting", 2)),
      post(templateSend(h, "+5491155550105"), key),
      post(used, key),
      post(templateSend(h, "+5491155550106")),
    ];
    for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 0));
    open();
    await blocker;
    const res = await Promise.all(pending);
    assert.deepEqual(
      res.map((r) => [r.status, r.body?.error?.code ?? null]),
      [
        [201, null],
        [422, "TEMPLATE_NOT_FOUND"],
        [201, null],
        [400, "VALIDATION_ERROR"],
        [409, "IDEMPOTENCY_KEY_REUSED"],
        [201, null],
        [201, null],
      ],
    );
    assert.equal(res[5]!.headers.get("idempotent-replayed"), "true");
    assert.deepEqual(res[5]!.body.data, first.body.data);
    const rows = await h.container.db.selectFrom("messages")
      .innerJoin("contacts", "contacts.id", "messages.contact_id")
      .select("contacts.phone_number").execute();
    assert.deepEqual(rows.map((r) => r.phone_number).sort(), [
      "+5491155550100",
      "+5491155550101",
      "+5491155550103",
      "+5491155550106",
    ]);
    const jobs = await h.container.db.selectFrom("jobs").select("id")
      .where("kind", "=", "message.send").execute();
    assert.equal(jobs.length, 4, "one send job per committed message");
    const contacts = await h.container.db.selectFrom("contacts")
      .select("phone_number").execute();
    assert.equal(contacts.length, 4, "a refused send leaves no contact");
    assert.ok(
      sharedCommit(h),
      "the queued sends shared a transaction (libSQL: a batch)",
    );
  },
);

engineTest(
  "two requests with one new Idempotency-Key in one group: one sends, the other replays it or is refused",
  async (h) => {
    await seedTemplate(h);
    const { open, blocker } = await holdWriter(h);
    const post = (to: string, key: string) =>
      h.request("POST", "/api/v2/messages", {
        body: templateSend(h, to),
        headers: { "Idempotency-Key": key },
      });
    const pending = [
      post("+5491155550301", "same-body"),
      post("+5491155550301", "same-body"),
      post("+5491155550302", "other-body"),
      post("+5491155550303", "other-body"),
    ];
    for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 0));
    open();
    await blocker;
    const res = await Promise.all(pending);
    // The requests reach the writer in any order: per key, one is first.
    const same = res.slice(0, 2);
    assert.deepEqual(same.map((r) => r.status), [201, 201]);
    assert.deepEqual(
      same.map((r) => r.headers.get("idempotent-replayed")).sort(),
      [null, "true"],
      "one sends, the other replays it",
    );
    assert.deepEqual(same[0]!.body.data, same[1]!.body.data);
    const other = res.slice(2);
    assert.deepEqual(
      other.map((r) => r.body?.error?.code ?? r.status).sort(),
      [201, "IDEMPOTENCY_KEY_REUSED"],
      "one sends, the other body is refused",
    );
    const jobs = await h.container.db.selectFrom("jobs").select("id")
      .where("kind", "=", "message.send").execute();
    assert.equal(jobs.length, 2, "one message per key");
    assert.ok(sharedCommit(h), "they shared a group (libSQL: a batch)");
  },
);

engineTest(
  "a single send queued behind campaign batches commits ahead of them, and each batch in a group of its own",
  async (h) => {
    await seedTemplate(h);
    const { open, blocker } = await holdWriter(h);
    const finished: string[] = [];
    const post = (name: string, path: string, body: unknown) =>
      h.request("POST", `/api/v2/messages${path}`, { body }).then((res) => {
        finished.push(name);
        return res;
      });
    const batch = (n: number) => ({
      defaultPhoneNumberId: h.tenant.channel.id,
      messages: Array.from(
        { length: 5 },
        (_, i) => templateTo(`+54911555504${n}${i}`),
      ),
    });
    const pending = [
      post("batch1", "/batch", batch(1)),
      post("batch2", "/batch", batch(2)),
      post("batch3", "/batch", batch(3)),
    ];
    for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 0));
    pending.push(post("live", "", templateSend(h, "+5491155550499")));
    for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 0));
    const before = h.container.commits.stats.groups;
    const batchesBefore = { ...h.container.commits.batchStats };
    open();
    await blocker;
    const res = await Promise.all(pending);
    assert.deepEqual(res.map((r) => r.status), [202, 202, 202, 201]);
    assert.deepEqual(
      res.slice(0, 3).map((r) => r.body.data.accepted),
      [5, 5, 5],
    );
    const batches = h.container.commits.batchStats;
    if (batches) {
      // libSQL: sends are atomic units in write batches (live ones first in
      // each), never in a group's interactive transaction.
      assert.equal(h.container.commits.stats.groups - before, 0);
      assert.equal(batches.units - batchesBefore.units!, 4);
      return;
    }
    assert.equal(finished[0], "live", `finished in order ${finished}`);
    assert.equal(
      h.container.commits.stats.groups - before,
      4,
      "the send alone, then one group per batch",
    );
  },
);
