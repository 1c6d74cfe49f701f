import assert from "node:assert/strict";
import { CompiledQuery } from "kysely";
import type { Executor } from "../../../src/db/schema.ts";
import {
  type ContactFilter,
  contactPageQuery,
  findContactByPhone,
  findContactOnChannel,
  setContactIdentity,
} from "../../../src/domain/contacts/contact_repo.ts";
import { createChannel } from "../../../src/domain/channels/channel_service.ts";
import { createMissingConversation } from "../../../src/domain/conversations/conversation_create_service.ts";
import {
  createContact,
  findOrCreateContact,
} from "../../../src/domain/contacts/contact_service.ts";
import { engineTest } from "../../_harness.ts";

async function planOf(
  db: Executor,
  query: { compile(): CompiledQuery },
): Promise<string[]> {
  const compiled = query.compile();
  const result = await db.executeQuery<{ detail: string }>(
    CompiledQuery.raw(`explain query plan ${compiled.sql}`, [
      ...compiled.parameters,
    ]),
  );
  return result.rows.map((r) => r.detail);
}

engineTest(
  "the contacts list query uses contacts_list_idx without a sort",
  async (h) => {
    const filters: ContactFilter[] = [
      { accountId: h.tenant.account.id },
      { accountId: h.tenant.account.id, search: "ana" },
      { accountId: h.tenant.account.id, search: "+54 11", tag: "vip" },
    ];
    for (const filter of filters) {
      const plan = await planOf(
        h.container.db,
        contactPageQuery(h.container.db, { ...filter, limit: 20, offset: 40 }),
      );
      const text = plan.join("\n");
      assert.match(text, /USING (COVERING )?INDEX contacts_list_idx/, text);
      assert.doesNotMatch(text, /TEMP B-TREE/, text);
    }
  },
);

engineTest(
  "findContactByPhone matches the Argentine variant, exact spelling first",
  async (h) => {
    const accountId = h.tenant.account.id;
    const withNine = await createContact(h.container, {
      accountId,
      phoneNumber: "+5491122334455",
    });
    const db = h.container.db;
    assert.equal(
      (await findContactByPhone(db, accountId, "+541122334455"))?.id,
      withNine.id,
    );
    assert.equal(
      (await findContactByPhone(db, accountId, "+5491122334455"))?.id,
      withNine.id,
    );
    assert.equal(
      await findContactByPhone(db, accountId, "+15550100000"),
      undefined,
    );
    const other = await h.makeTenant("phone-other");
    assert.equal(
      await findContactByPhone(db, other.account.id, "+5491122334455"),
      undefined,
    );
  },
);

engineTest(
  "findContactOnChannel finds what findContactByPhone finds, with its conversation on that channel only",
  async (h) => {
    const accountId = h.tenant.account.id;
    const db = h.container.db;
    const channelId = h.tenant.channel.id;
    const second = await createChannel(h.container, {
      accountId,
      phoneNumber: "+15550109999",
      displayName: "second line",
      upstreamPhoneNumberId: "106540352249999",
      wabaId: "102290129399999",
      accessToken: "token-second",
    });
    const ana = await createContact(h.container, {
      accountId,
      phoneNumber: "+5491122334455",
    });
    const find = (
      e164: string | null,
      userId: string | null = null,
      where = { accountId, channelId },
    ) => findContactOnChannel(db, { ...where, e164, userId });

    // No conversation yet, under either Argentine spelling.
    for (const e164 of ["+5491122334455", "+541122334455"]) {
      const found = await find(e164);
      assert.equal(found?.contact.id, ana.id);
      assert.deepEqual(
        found?.contact,
        await findContactByPhone(db, accountId, e164),
      );
      assert.equal(found?.conversation, undefined);
    }
    // A conversation on the second channel is not this channel's.
    const { conversation } = await createMissingConversation(db, {
      accountId,
      contactId: ana.id,
      channelId: second.id,
      now: h.clock.now(),
    });
    assert.equal((await find("+5491122334455"))?.conversation, undefined);
    assert.deepEqual(
      (await find("+5491122334455", null, { accountId, channelId: second.id }))
        ?.conversation,
      {
        id: conversation.id,
        serviceWindowExpiresAt: conversation.serviceWindowExpiresAt,
        assignedTo: null,
      },
    );
    // By BSUID, exactly; unknown numbers and other accounts find nothing.
    await setContactIdentity(db, ana.id, {
      userId: "AR.13491208655302741918",
      updatedAt: "2026-01-01T00:00:00.000Z",
    });
    assert.equal(
      (await find(null, "AR.13491208655302741918"))?.contact.id,
      ana.id,
    );
    assert.equal(await find(null, "AR.99999999999999999999"), undefined);
    assert.equal(await find("+15550100000"), undefined);
    const other = await h.makeTenant("on-channel-other");
    const elsewhere = {
      accountId: other.account.id,
      channelId: other.channel.id,
    };
    assert.equal(await find("+5491122334455", null, elsewhere), undefined);
  },
);

engineTest(
  "findOrCreateContact creates once, with its event, in the caller's transaction",
  async (h) => {
    const accountId = h.tenant.account.id;
    const db = h.container.db;
    const now = h.clock.now();
    const first = await db.transaction().execute((trx) =>
      findOrCreateContact(trx, {
        accountId,
        phoneNumber: "+5491122334455",
        name: "Ana",
        now,
      })
    );
    assert.equal(first.created, true);
    assert.equal(first.contact.name, "Ana");
    assert.equal(first.contact.createdAt, now.toISOString());
    const again = await db.transaction().execute((trx) =>
      findOrCreateContact(trx, { accountId, phoneNumber: "+541122334455", now })
    );
    assert.deepEqual(again, { contact: first.contact, created: false });
    const events = await db.selectFrom("events").selectAll().execute();
    assert.equal(events.length, 1);
    assert.equal(events[0]!.type, "contact.created");
    assert.deepEqual(JSON.parse(events[0]!.data), {
      id: first.contact.id,
      phoneNumber: "+5491122334455",
      userId: null,
      username: null,
      name: "Ana",
      email: null,
      tags: [],
      customFields: {},
      optedIn: true,
      lastMessageAt: null,
      createdAt: now.toISOString(),
    });
  },
  { allowTransactions: true },
);

engineTest(
  "findOrCreateContact leaves nothing behind when the caller rolls back",
  async (h) => {
    const db = h.container.db;
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        const r = await findOrCreateContact(trx, {
          accountId: h.tenant.account.id,
          phoneNumber: "+15550107777",
          now: h.clock.now(),
        });
        assert.equal(r.created, true);
        throw new Error("caller failed later");
      }),
      /caller failed later/,
    );
    assert.equal(
      (await db.selectFrom("contacts").select("id").execute()).length,
      0,
    );
    assert.equal(
      (await db.selectFrom("events").select("id").execute()).length,
      0,
    );
  },
  { allowTransactions: true },
);
