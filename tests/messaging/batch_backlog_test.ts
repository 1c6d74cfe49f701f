// The batch pacer reads a channel's backlog from channel_batch_backlog, a
// counter insertMessages() (for new rows, migration 0014) and the triggers of
// migration 0010 (for changed and deleted rows) keep; it must always equal
// the count it replaced, whatever writes the messages.
import assert from "node:assert/strict";
import { sql } from "kysely";
import { engineTest, type Harness } from "../_harness.ts";
import { createChannel } from "../../src/domain/channels/channel_service.ts";
import {
  acceptItems,
  acceptTemplates,
  seedTemplate,
  templateTo,
} from "./_helpers.ts";
import type { Executor } from "../../src/db/schema.ts";

let numbers = 0;

/** `n` numbers no contact has. */
function fresh(n: number): string[] {
  return Array.from(
    { length: n },
    () => `+54911${String(5_000_000 + numbers++).padStart(8, "0")}`,
  );
}

async function accept(h: Harness, trx: Executor, n: number, channelId: string) {
  const result = await acceptTemplates(h, trx, fresh(n), channelId);
  assert.equal(result.accepted, n, JSON.stringify(result.items[0]));
}

/** The counter and the count it stands for, per channel, read in one statement. */
async function backlog(h: Harness, channelId: string) {
  const { rows } = await sql<{ counter: number | null; actual: number }>`
    select
      (select queued from channel_batch_backlog where channel_id = ${channelId})
        as counter,
      (select count(*) from messages where channel_id = ${channelId}
        and lane = 'batch' and status = 'queued') as actual`
    .execute(h.container.db);
  return {
    counter: Number(rows[0]!.counter ?? 0),
    actual: Number(rows[0]!.actual),
  };
}

/** A second channel of the tenant; `n`: three digits its numbers and ids carry. */
async function otherChannel(h: Harness, n: string): Promise<string> {
  return (await createChannel(h.container, {
    accountId: h.tenant.account.id,
    phoneNumber: `+1555020${n}8`,
    displayName: `channel ${n}`,
    upstreamPhoneNumberId: `${n}000111`,
    wabaId: `${n}000222`,
    accessToken: "t",
  })).id;
}

async function assertMatches(h: Harness, channelId: string, expected: number) {
  assert.deepEqual(await backlog(h, channelId), {
    counter: expected,
    actual: expected,
  });
}

engineTest(
  "the backlog counter equals the queued batch count through inserts, status, lane and channel changes and deletes",
  async (h) => {
    await seedTemplate(h, { channelId: null });
    const a = h.tenant.channel.id;
    const b = await otherChannel(h, "888");
    const db = h.container.db;
    await assertMatches(h, a, 0);
    await db.transaction().execute((trx) => accept(h, trx, 30, a));
    await assertMatches(h, a, 30);
    await db.transaction().execute((trx) => accept(h, trx, 5, b));
    await assertMatches(h, b, 5);

    const ids = (await db.selectFrom("messages").select("id")
      .where("channel_id", "=", a).orderBy("id").execute()).map((r) => r.id);
    const update = (from: number, to: number) =>
      db.updateTable("messages").where("id", "in", ids.slice(from, to));
    // Sent, then one of them failed: neither counts; back to queued counts again.
    await update(0, 5).set({ status: "sent" }).execute();
    await assertMatches(h, a, 25);
    await update(0, 1).set({ status: "failed" }).execute();
    await update(1, 2).set({ status: "queued" }).execute();
    await assertMatches(h, a, 26);
    // Another lane does not count.
    await update(5, 8).set({ lane: "live" }).execute();
    await assertMatches(h, a, 23);
    // A channel that goes (on delete set null) or a move to another channel.
    await update(8, 10).set({ channel_id: null }).execute();
    await assertMatches(h, a, 21);
    await update(10, 12).set({ channel_id: b }).execute();
    await assertMatches(h, a, 19);
    await assertMatches(h, b, 7);
    // An update that changes nothing the counter depends on.
    await update(12, 14).set({ status: "queued", channel_id: a }).execute();
    await assertMatches(h, a, 19);
    await db.deleteFrom("messages").where("id", "in", ids.slice(14, 18))
      .execute();
    await assertMatches(h, a, 15);
  },
  { allowTransactions: true },
);

engineTest(
  "a batch that rolls back leaves the backlog counter as it was",
  async (h) => {
    await seedTemplate(h);
    const a = h.tenant.channel.id;
    await h.container.db.transaction().execute((trx) => accept(h, trx, 10, a));
    await assert.rejects(
      h.container.db.transaction().execute(async (trx) => {
        await accept(h, trx, 20, a);
        throw new Error("rolled back");
      }),
      /rolled back/,
    );
    await assertMatches(h, a, 10);
  },
  { allowTransactions: true },
);

engineTest(
  "one batch to two channels adds each channel's queued sends to its counter, and a live send adds none",
  async (h) => {
    await seedTemplate(h, { channelId: null });
    const a = h.tenant.channel.id;
    const b = await otherChannel(h, "777");
    // Items 0, 2, 4 and 6 name channel b; the others take the default.
    const items = fresh(7).map((phone, i) => ({
      ...templateTo(phone),
      ...(i % 2 === 0 ? { phoneNumberId: b } : {}),
    }));
    const result = await h.container.db.transaction().execute((trx) =>
      acceptItems(h, trx, items, { defaultPhoneNumberId: a })
    );
    assert.equal(result.accepted, 7, JSON.stringify(result.items[0]));
    await assertMatches(h, a, 3);
    await assertMatches(h, b, 4);
    const res = await h.request("POST", "/api/v2/messages", {
      body: { phoneNumberId: a, ...templateTo(fresh(1)[0]!) },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    await assertMatches(h, a, 3);
  },
  { allowTransactions: true },
);
