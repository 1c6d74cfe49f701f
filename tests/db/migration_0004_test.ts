// A database with today's data (schema up to 0003) migrates to contacts
// with optional phone numbers without changing anything the API shows.
import assert from "node:assert/strict";
import { type Kysely, type Migration, Migrator, sql } from "kysely";
import { migrations } from "../../migrations/mod.ts";
import { engineTest } from "../_harness.ts";
import type { Database } from "../../src/db/schema.ts";
import { SCOPES } from "../../src/domain/accounts/scopes.ts";

const AT = "2026-11-01T10:00:00.000Z";
const ACCOUNT = "0196f000-0000-7000-8000-000000000001";
const CHANNEL = "0196f000-0000-7000-8000-000000000002";
const CONTACT = "0196f000-0000-7000-8000-000000000003";
const CONVERSATION = "0196f000-0000-7000-8000-000000000004";
const MESSAGE = "0196f000-0000-7000-8000-000000000005";

async function migrateTo0003(db: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: {
      getMigrations: () =>
        Promise.resolve(migrations as Record<string, Migration>),
    },
  });
  const { error } = await migrator.migrateTo("0003_webhooks");
  if (error) throw error;
}

/** Rows as the code before 0004 wrote them (the columns of that schema only). */
async function seedLegacy(db: Kysely<Database>): Promise<void> {
  await migrateTo0003(db);
  const statements = [
    sql`insert into accounts (id, name, slug, plan, default_country, created_at, updated_at)
      values (${ACCOUNT}, 'Legacy', 'legacy', 'crece', 'AR', ${AT}, ${AT})`,
    sql`insert into channels (id, account_id, phone_number, display_name,
      upstream_phone_number_id, waba_id, access_token_enc, quality_rating, status,
      webhook_verified, send_rate, created_at, updated_at)
      values (${CHANNEL}, ${ACCOUNT}, '+15550109999', 'Legacy line', '1065400000099',
      '102290000099', 'sealed', 'GREEN', 'connected', 1, null, ${AT}, ${AT})`,
    sql`insert into contacts (id, account_id, phone_number, name, email, tags,
      custom_fields, opted_in, last_message_at, created_at, updated_at)
      values (${CONTACT}, ${ACCOUNT}, '+5491122334455', 'Ana', 'ana@example.com',
      '["vip"]', '{"plan":"gold"}', 1, ${AT}, ${AT}, ${AT})`,
    sql`insert into conversations (id, account_id, contact_id, channel_id, status,
      assigned_to, last_message_at, last_message_preview, last_message_direction,
      last_message_status, last_message_id, last_inbound_at,
      service_window_expires_at, unread_count, created_at, updated_at)
      values (${CONVERSATION}, ${ACCOUNT}, ${CONTACT}, ${CHANNEL}, 'open', null, ${AT},
      'Hola', 'inbound', 'received', ${MESSAGE}, ${AT}, '2026-11-02T10:00:00.000Z',
      1, ${AT}, ${AT})`,
    sql`insert into messages (id, account_id, conversation_id, contact_id, channel_id,
      direction, type, content, status, wa_message_id, error_code, error_message,
      origin, sent_by_ai, campaign_id, client_ref, media_id, media_key, lane,
      context_wa_message_id, upstream_timestamp, created_at, updated_at)
      values (${MESSAGE}, ${ACCOUNT}, ${CONVERSATION}, ${CONTACT}, ${CHANNEL},
      'inbound', 'text', '{"body":"Hola"}', 'received', 'wamid.legacy', null, null,
      'inbound', 0, null, null, null, null, 'live', null, ${AT}, ${AT}, ${AT})`,
  ];
  for (const statement of statements) await statement.execute(db);
}

engineTest(
  "migration 0004 keeps every existing contact, conversation and message as the API showed them",
  async (h) => {
    const key = await h.makeKey(ACCOUNT, [...SCOPES]);
    const get = async (path: string) => {
      const res = await h.request("GET", `/api/v2${path}`, { key });
      assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
      return res.body.data;
    };
    assert.deepEqual(await get(`/contacts/${CONTACT}`), {
      id: CONTACT,
      phoneNumber: "+5491122334455",
      userId: null,
      username: null,
      name: "Ana",
      email: "ana@example.com",
      tags: ["vip"],
      customFields: { plan: "gold" },
      optedIn: true,
      lastMessageAt: AT,
      createdAt: AT,
    });
    const conversation = await get(`/conversations/${CONVERSATION}`);
    assert.deepEqual(conversation.contact, {
      id: CONTACT,
      phoneNumber: "+5491122334455",
      userId: null,
      username: null,
      name: "Ana",
    });
    assert.equal(conversation.contactId, CONTACT);
    assert.equal(conversation.phoneNumberId, CHANNEL);
    assert.equal(conversation.unreadCount, 1);
    assert.equal(conversation.lastMessagePreview, "Hola");
    assert.equal(
      conversation.serviceWindowExpiresAt,
      "2026-11-02T10:00:00.000Z",
    );
    const message = await get(`/messages/${MESSAGE}`);
    assert.equal(message.contactId, CONTACT);
    assert.equal(message.conversationId, CONVERSATION);
    assert.deepEqual(message.content, { text: "Hola" });
    assert.equal(message.waMessageId, "wamid.legacy");
    assert.equal(message.status, "delivered");
    // The phone number is still unique in the account.
    const dup = await h.request("POST", "/api/v2/contacts", {
      key,
      body: { phoneNumber: "+5491122334455" },
    });
    assert.equal(dup.status, 409);
    if (h.engine === "sqlite") {
      const fk = await sql<{ foreign_keys: number }>`pragma foreign_keys`
        .execute(h.container.db);
      assert.equal(Number(fk.rows[0]!.foreign_keys), 1, "foreign keys back on");
    }
  },
  { beforeMigrate: seedLegacy },
);
