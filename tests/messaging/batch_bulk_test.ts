// The batch path writes per table for the whole batch; these tests hold it
// to what the same items sent one by one through POST /messages produce:
// the same outcomes, rows and events (in order), on both engines.
import assert from "node:assert/strict";
import { ENGINES } from "../_harness.ts";
import { createMessagingHarness } from "../_support/messaging.ts";
import { ManualClock } from "../../src/clock.ts";
import {
  customerWrites,
  type Json,
  type Mh,
  seedTemplate,
  templateTo,
  textTo,
} from "./_helpers.ts";

const OPEN = "+5491155550001"; // wrote to the channel: window open
const KNOWN = "+5491155550002"; // a contact without a conversation
const FRESH = "+5491155550003";
const FRESH_OTHER_SPELLING = "+541155550003"; // the same person without the mobile 9
const FRESH_2 = "+5491155550004";
const BSUID = "US.13491208655302741918";
const NO_SUCH_CHANNEL = "0195f3b2-0000-7000-8000-000000000000";

/** Fresh and existing recipients, repeats within the batch, and items that fail. */
function items(channelId: string): Record<string, unknown>[] {
  const list: Record<string, unknown>[] = [
    templateTo(FRESH),
    templateTo(FRESH),
    textTo(FRESH_2, "no window"),
    textTo(OPEN, "hola"),
    templateTo(KNOWN),
    textTo("12", "bad phone"),
    { to: FRESH_2, text: { body: "no type" } },
    templateTo(FRESH_OTHER_SPELLING),
    { ...templateTo(FRESH_2), phoneNumberId: NO_SUCH_CHANNEL },
    templateTo(FRESH_2, "greeting", ["one", "two"]),
    templateTo(FRESH_2, "no_such_template"),
    templateTo(BSUID),
    textTo(FRESH, "window still closed"),
    textTo(OPEN, "again"),
  ];
  return list.map((item, i) => ({
    phoneNumberId: channelId,
    ...item,
    clientRef: `ref-${String(i).padStart(2, "0")}`,
  }));
}

async function setUp(h: Mh): Promise<void> {
  await seedTemplate(h);
  await customerWrites(h, OPEN);
  const res = await h.request("POST", "/api/v2/contacts", {
    body: { phoneNumber: KNOWN, name: "Known" },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  // Deliveries are created, never attempted: the test runs no job.
  const hook = await h.request("POST", "/api/v2/webhooks", {
    body: {
      url: "http://127.0.0.1:9/hook",
      events: ["contact.created", "conversation.created"],
    },
  });
  assert.equal(hook.status, 201, JSON.stringify(hook.body));
}

/** Every row and event a send writes, ordered by stable keys, without the engine's own columns. */
async function snapshot(h: Mh): Promise<Json> {
  const db = h.container.db;
  const events = await db.selectFrom("events").select(["type", "data"])
    .orderBy("seq").execute();
  const contacts = await db.selectFrom("contacts").selectAll()
    .orderBy("phone_number").orderBy("user_id").execute();
  const conversations = await db.selectFrom("conversations as cv")
    .innerJoin("contacts as ct", "ct.id", "cv.contact_id")
    .selectAll("cv").orderBy("ct.phone_number").orderBy("ct.user_id")
    .execute();
  const messages = await db.selectFrom("messages").selectAll()
    .orderBy("client_ref").orderBy("direction").execute();
  const jobs = await db.selectFrom("jobs")
    .innerJoin(
      "messages",
      (j) =>
        j.onRef(
          "messages.id",
          "=",
          (eb) =>
            eb.fn("json_extract", ["jobs.payload", eb.val("$.messageId")]),
        ),
    )
    .select([
      "messages.client_ref",
      "jobs.kind",
      "jobs.payload",
      "jobs.state",
      "jobs.max_attempts",
      "jobs.unique_key",
    ])
    .where("jobs.kind", "=", "message.send")
    .orderBy("messages.client_ref").execute();
  const deliveries = await db.selectFrom("webhook_deliveries as d")
    .innerJoin("events as e", "e.id", "d.event_id")
    .innerJoin(
      "jobs as j",
      (j) =>
        j.onRef(
          "d.id",
          "=",
          (eb) => eb.fn("json_extract", ["j.payload", eb.val("$.deliveryId")]),
        ),
    )
    .select([
      "d.id",
      "d.event_id",
      "d.event",
      "d.subject_id",
      "d.root_id",
      "d.after_root_id",
      "d.status",
      "d.attempt",
      "j.kind",
      "j.run_at",
      "j.state",
    ])
    .orderBy("e.seq").execute();
  return labelled({
    deliveries,
    events: events.map((e) => ({ type: e.type, data: JSON.parse(e.data) })),
    contacts,
    conversations,
    // The lane is the one intended difference (with the job's priority and pacing).
    messages: messages.map(({ lane: _lane, ...m }) => m),
    jobs,
  });
}

/**
 * Ids and times replaced by labels in order of first appearance: two
 * databases that differ only in the ids and clock they drew compare equal.
 */
function labelled(value: Json): Json {
  const labels = new Map<string, string>();
  const label = (text: string, kind: string) => {
    if (!labels.has(text)) labels.set(text, `${kind}#${labels.size}`);
    return labels.get(text)!;
  };
  const walk = (v: Json): Json => {
    if (typeof v === "string") {
      if (/^[0-9a-f]{8}-[0-9a-f]{4}-/.test(v)) return label(v, "id");
      if (/^\d{4}-\d\d-\d\dT/.test(v)) return label(v, "time");
      if (v.startsWith("wamid.")) return label(v, "wamid");
      if (v.includes("message.send:")) {
        return v.replace(/[0-9a-f-]{36}/, (id) => label(id, "id"));
      }
      if (v.startsWith("{")) return walk(JSON.parse(v));
      return v;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") {
      return Object.fromEntries(
        Object.entries(v).map(([k, x]) => [k, walk(x)]),
      );
    }
    return v;
  };
  return walk(value);
}

/** What each item became: queued, or the code it failed with. */
function outcome(item: Json): string {
  return item.result === "queued" ? "queued" : item.error?.code ?? item.result;
}

for (const engine of ENGINES) {
  Deno.test({
    name:
      `[${engine}] a batch writes the rows, events and errors of the same sends one by one`,
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async () => {
      // One start for both clocks, behind the simulator's: the customer's
      // message is stamped with the simulator's (system) time, which the
      // server caps at its own clock, so both databases get the same times.
      const start = Date.now() - 3_600_000;
      await using batched = await createMessagingHarness({
        engine,
        clock: new ManualClock(new Date(start)),
      });
      await using single = await createMessagingHarness({
        engine,
        clock: new ManualClock(new Date(start)),
      });
      await setUp(batched);
      await setUp(single);

      const post = () =>
        batched.request("POST", "/api/v2/messages/batch", {
          body: { messages: items(batched.tenant.channel.id) },
          headers: { "Idempotency-Key": "bulk-1" },
        });
      const res = await post();
      assert.equal(res.status, 202, JSON.stringify(res.body));
      const oneByOne: string[] = [];
      for (const body of items(single.tenant.channel.id)) {
        const sent = await single.request("POST", "/api/v2/messages", {
          body,
        });
        oneByOne.push(
          sent.status === 201 ? "queued" : sent.body.error.code,
        );
      }
      assert.deepEqual(res.body.data.items.map(outcome), oneByOne);
      // The set covers every path: created, found, repeated, and each rule.
      assert.deepEqual(oneByOne, [
        "queued",
        "queued",
        "SERVICE_WINDOW_EXPIRED",
        "queued",
        "queued",
        "INVALID_PHONE",
        "MISSING_REQUIRED_FIELD",
        "queued",
        "INVALID_CHANNEL",
        "VALIDATION_ERROR",
        "TEMPLATE_NOT_FOUND",
        "queued",
        "SERVICE_WINDOW_EXPIRED",
        "queued",
      ]);

      const got = await snapshot(batched);
      const want = await snapshot(single);
      assert.deepEqual(got, want);
      // The same key again replays the answer and writes nothing.
      const replay = await post();
      assert.equal(replay.status, 202);
      assert.deepEqual(replay.body.data, res.body.data);
      assert.deepEqual(await snapshot(batched), got);
      // And it is the state described above, not two equally wrong ones.
      // (message.created: each queued message, for the panel's stream only.)
      assert.deepEqual(got.events.map((e: Json) => e.type), [
        "contact.created",
        "conversation.created",
        "message.received",
        "contact.created",
        "contact.created",
        "conversation.created",
        "message.created",
        "message.created",
        "message.created",
        "conversation.created",
        "message.created",
        "message.created",
        "contact.created",
        "conversation.created",
        "message.created",
        "message.created",
      ]);
      assert.equal(got.contacts.length, 4);
      assert.equal(got.conversations.length, 4);
      assert.equal(got.jobs.length, 7);
      // One delivery per event after the subscription; each conversation.created
      // of a new contact waits for that contact's contact.created.
      assert.deepEqual(got.deliveries.map((d: Json) => d.event), [
        "contact.created",
        "conversation.created",
        "conversation.created",
        "contact.created",
        "conversation.created",
      ]);
      assert.equal(got.deliveries[1].after_root_id, got.deliveries[0].root_id);
      assert.equal(got.deliveries[2].after_root_id, null);
      assert.equal(got.deliveries[4].after_root_id, got.deliveries[3].root_id);
      const fresh = got.conversations.find((c: Json) =>
        c.last_message_preview !== null && c.contact_id ===
          got.contacts.find((ct: Json) => ct.phone_number === FRESH).id
      );
      const lastItem = got.messages.find((m: Json) =>
        m.client_ref === "ref-07"
      );
      assert.equal(fresh.last_message_id, lastItem.id);
    },
  });
}
