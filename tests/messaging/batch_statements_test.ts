// A batch costs a fixed number of statements, whatever its size: one lookup
// and one multi-row write per table, not a round of queries per recipient.
import assert from "node:assert/strict";
import { engineTest, type Harness } from "../_harness.ts";
import { acceptBatch } from "../../src/domain/messages/send_service.ts";
import { PlannedWrites } from "../../src/db/planned_writes.ts";
import { seedTemplate, templateTo } from "./_helpers.ts";
import { StatementCounter } from "../_support/statements.ts";

let numbers = 0;

/** `n` numbers no contact has. */
function freshNumbers(n: number): string[] {
  return Array.from(
    { length: n },
    () => `+54911${String(4_000_000 + numbers++).padStart(8, "0")}`,
  );
}

/** Accepts a batch of template sends to `to` in one transaction; returns its statement count. */
async function statementsOf(h: Harness, to: string[]): Promise<number> {
  const counter = new StatementCounter();
  const result = await h.container.db.withPlugin(counter).transaction()
    .execute((trx) =>
      acceptBatch(
        trx,
        new PlannedWrites(trx),
        {
          clock: h.clock,
          lookups: h.container.lookups,
          config: { sendRatePerSecond: 80 },
        },
        h.tenant.account.id,
        {
          defaultPhoneNumberId: h.tenant.channel.id,
          messages: to.map((phone) => templateTo(phone)),
        },
      )
    );
  assert.equal(result.accepted, to.length, JSON.stringify(result.items[0]));
  return counter.count;
}

engineTest(
  "a batch of fresh recipients costs the same statements for 1 or 100",
  async (h) => {
    await seedTemplate(h);
    // The template and the channel are cached by the first batch.
    await statementsOf(h, freshNumbers(1));
    const counts = new Map<number, number>();
    for (const n of [1, 10, 50, 100]) {
      counts.set(n, await statementsOf(h, freshNumbers(n)));
    }
    const one = counts.get(1)!;
    // Every row of a table goes in one statement up to SQLite's variable limit.
    for (const n of [10, 50, 100]) {
      assert.equal(counts.get(n), one, JSON.stringify([...counts]));
    }
    // Contacts looked up (no conversations: none is known), the channel's
    // backlog read, contacts, conversations, events, messages and jobs
    // written, subscriptions read, the backlog counted up (one statement per
    // channel since migration 0014, instead of a trigger run per message).
    assert.ok(one <= 9, `a batch of one took ${one} statements`);
    const created = await h.container.db.selectFrom("contacts")
      .select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirst();
    assert.equal(Number(created?.n), 1 + 1 + 10 + 50 + 100);
  },
  { allowTransactions: true },
);

engineTest(
  "a batch to known recipients costs the same statements for 10 or 100",
  async (h) => {
    await seedTemplate(h);
    const ten = freshNumbers(10);
    const hundred = freshNumbers(100);
    // First sends create their contacts and conversations.
    await statementsOf(h, ten);
    await statementsOf(h, hundred);
    const again10 = await statementsOf(h, ten);
    const again100 = await statementsOf(h, hundred);
    assert.equal(again100, again10);
    // Contacts and their conversations looked up, the backlog read,
    // messages, their message.created events (the panel's stream) and jobs
    // written, conversations and contacts updated, the backlog counted up
    // (migration 0014).
    assert.ok(again10 <= 9, `a batch of ten took ${again10} statements`);
  },
  { allowTransactions: true },
);

engineTest(
  "with subscriptions, a batch's webhook deliveries cost a few statements for 1 or 100",
  async (h) => {
    await seedTemplate(h);
    // Two subscriptions, one disabled: every event gets a pending delivery
    // and a skipped one; each conversation.created waits for its contact's
    // contact.created.
    for (const enabled of [true, false]) {
      const hook = await h.request("POST", "/api/v2/webhooks", {
        body: {
          url: "http://127.0.0.1:9/hook",
          events: ["contact.created", "conversation.created"],
          enabled,
        },
      });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
    }
    await statementsOf(h, freshNumbers(1));
    const one = await statementsOf(h, freshNumbers(1));
    const hundred = await statementsOf(h, freshNumbers(100));
    // The same statements but for the deliveries' chunks of 100 rows: 400
    // deliveries take four; their 200 jobs one (db/bulk.ts, up to SQLite's
    // variable limit; two, in chunks of 100, before). Before that: a round
    // of statements per event (subscriptions and chains read, deliveries
    // and jobs written), hundreds for a batch of 100 new recipients.
    assert.equal(
      hundred,
      one + (4 - 1),
      `1: ${one}, 100: ${hundred}`,
    );
    const rows = await h.container.db.selectFrom("webhook_deliveries")
      .select(["status", "event", "after_root_id"]).execute();
    assert.equal(rows.length, 2 * 2 * 102);
    const waiting = rows.filter((r) =>
      r.event === "conversation.created" && r.status === "pending"
    );
    assert.equal(waiting.length, 102);
    assert.ok(waiting.every((r) => r.after_root_id !== null));
    assert.ok(
      rows.filter((r) => r.status === "skipped").every((r) =>
        r.after_root_id === null
      ),
    );
  },
  { allowTransactions: true },
);
