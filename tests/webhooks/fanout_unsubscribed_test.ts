// An account without a subscription fans out nothing, and its events are
// not looked at for it: recordEvents() and recordEvent() read an event's
// data to serialise it and nothing more (a batch of 100 new recipients
// records 200 events, and most accounts have no webhook).
import assert from "node:assert/strict";
import { sql } from "kysely";
import {
  type EventType,
  recordEvent,
  recordEvents,
} from "../../src/domain/events/event_service.ts";
import { toDbTime } from "../../src/db/time.ts";
import type { Harness } from "../_harness.ts";
import { webhookTest } from "../_support/webhooks.ts";

/** An event whose data counts the reads of its contact's id. */
function counted(type: EventType, contactId: string, reads: { n: number }) {
  const key = type === "contact.created" ? "id" : "contactId";
  return {
    type,
    data: Object.defineProperty({}, key, {
      enumerable: true,
      get() {
        reads.n++;
        return contactId;
      },
    }),
  };
}

async function countOf(h: Harness, table: "events" | "webhook_deliveries") {
  const { rows } = await sql<{ n: number }>`select count(*) as n from ${
    sql.table(table)
  }`.execute(h.container.db);
  return Number(rows[0]!.n);
}

webhookTest(
  "events of an account without a subscription are read once each, to serialise them",
  async (h, receiver) => {
    const accountId = h.tenant.account.id;
    const at = toDbTime(h.clock.now());
    const reads = { n: 0 };
    const events = ["c-1", "c-2"].flatMap((id) => [
      { ...counted("contact.created", id, reads), createdAt: at },
      { ...counted("conversation.created", id, reads), createdAt: at },
    ]);
    const before = await countOf(h, "events");
    await h.container.commits.run((trx) =>
      recordEvents(trx, accountId, events)
    );
    await h.container.commits.run((trx) =>
      recordEvent(trx, {
        accountId,
        ...counted("contact.created", "c-3", reads),
        createdAt: at,
      })
    );
    assert.equal(await countOf(h, "events"), before + 5);
    assert.equal(reads.n, 5, "once each, by JSON.stringify");
    assert.equal(await countOf(h, "webhook_deliveries"), 0);

    // With a subscription, the same events fan out (their contact read too).
    await h.subscribe({
      url: receiver.url,
      events: ["contact.created", "conversation.created"],
    });
    reads.n = 0;
    await h.container.commits.run((trx) =>
      recordEvents(trx, accountId, events)
    );
    assert.equal(await countOf(h, "webhook_deliveries"), 4);
    assert.equal(reads.n, 8);
  },
);
