import assert from "node:assert/strict";
import { engineTest } from "../../_harness.ts";
import { findOrCreateContact } from "../../../src/domain/contacts/contact_identity_service.ts";
import { insertConversation } from "../../../src/domain/conversations/conversation_write_repo.ts";
import { newId } from "../../../src/ids.ts";

engineTest(
  "insertConversation tells an insert from a (contact, channel) that already has one",
  async (h) => {
    const { contact } = await findOrCreateContact(h.container.db, {
      accountId: h.tenant.account.id,
      phoneNumber: "+5491155550300",
      now: new Date("2026-11-22T10:00:00.000Z"),
    });
    const row = (id: string) => ({
      id,
      account_id: h.tenant.account.id,
      contact_id: contact.id,
      channel_id: h.tenant.channel.id,
      status: "open",
      assigned_to: null,
      last_message_at: null,
      last_message_preview: null,
      last_message_direction: null,
      last_message_status: null,
      last_message_id: null,
      last_inbound_at: null,
      service_window_expires_at: null,
      unread_count: 0,
      referral: null,
      created_at: "2026-11-22T10:00:00.000Z",
      updated_at: "2026-11-22T10:00:00.000Z",
    });
    const first = newId();
    assert.equal(await insertConversation(h.container.db, row(first)), true);
    assert.equal(await insertConversation(h.container.db, row(newId())), false);
    const ids = await h.container.db.selectFrom("conversations").select("id")
      .where("contact_id", "=", contact.id).execute();
    assert.deepEqual(ids.map((r) => r.id), [first]);
  },
);
