import assert from "node:assert/strict";
import { engineTest } from "../../_harness.ts";
import { findOrCreateContact } from "../../../src/domain/contacts/contact_identity_service.ts";
import { insertConversation } from "../../../src/domain/conversations/conversation_write_repo.ts";
import { findOrCreateConversation } from "../../../src/domain/conversations/conversation_create_service.ts";
import { newId } from "../../../src/ids.ts";

engineTest(
  "insertConversation tells an insert from a (contact, channel) that already has one",
  async (h) => {
    const { contact } = await findOrCreateContact(h.container.db, {
      accountId: h.tenant.account.id,
      phoneNumber: "+5491155550300",
      now: new Date("2026-11-22T10:00:00.000Z"),
    });
    const { conversation, created } = await findOrCreateConversation(
      h.container.db,
      {
        accountId: h.tenant.account.id,
        contactId: contact.id,
        channelId: h.tenant.channel.id,
        now: new Date("2026-11-22T10:00:00.000Z"),
      },
    );
    assert.equal(created, true, "the first insert reports it inserted");
    const row = await h.container.db.selectFrom("conversations").selectAll()
      .where("id", "=", conversation.id).executeTakeFirstOrThrow();
    assert.equal(
      await insertConversation(h.container.db, { ...row, id: newId() }),
      false,
    );
    const ids = await h.container.db.selectFrom("conversations").select("id")
      .where("contact_id", "=", contact.id).execute();
    assert.deepEqual(ids.map((r) => r.id), [conversation.id]);
  },
);
