// Rows for conversation tests, inserted straight into the database.
import type { Harness } from "../_harness.ts";
import type { ManualClock } from "../../src/clock.ts";
import { newId } from "../../src/ids.ts";
import { toDbTime } from "../../src/db/time.ts";
import type { ConversationsTable, MessagesTable } from "../../src/db/schema.ts";

/** The harness clock moves one millisecond per fixture row, so creation times differ. */
export function tick(h: Harness, ms = 1): string {
  (h.clock as ManualClock).advance(ms);
  return toDbTime(h.clock.now());
}

export interface ContactFixture {
  accountId?: string;
  phoneNumber: string;
  name?: string | null;
  email?: string | null;
  customFields?: Record<string, unknown>;
}

export async function insertContact(
  h: Harness,
  input: ContactFixture,
): Promise<string> {
  const id = newId();
  const at = tick(h);
  await h.container.db.insertInto("contacts").values({
    id,
    account_id: input.accountId ?? h.tenant.account.id,
    phone_number: input.phoneNumber,
    name: input.name ?? null,
    email: input.email ?? null,
    tags: "[]",
    custom_fields: JSON.stringify(input.customFields ?? {}),
    opted_in: 1,
    last_message_at: null,
    created_at: at,
    updated_at: at,
  }).execute();
  return id;
}

export type ConversationFixture =
  & { contactId: string; accountId?: string; channelId?: string | null }
  & Partial<Omit<ConversationsTable, "id" | "account_id" | "contact_id">>;

export async function insertConversation(
  h: Harness,
  input: ConversationFixture,
): Promise<string> {
  const id = newId();
  const at = input.created_at ?? tick(h);
  const { contactId, accountId, channelId, ...rest } = input;
  await h.container.db.insertInto("conversations").values({
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
    updated_at: at,
    ...rest,
    id,
    account_id: accountId ?? h.tenant.account.id,
    contact_id: contactId,
    channel_id: channelId === undefined ? h.tenant.channel.id : channelId,
    created_at: at,
  }).execute();
  return id;
}

/** A contact plus one conversation on the tenant's channel. */
export async function insertThread(
  h: Harness,
  input: ContactFixture & Omit<Partial<ConversationFixture>, "contactId">,
): Promise<{ contactId: string; conversationId: string }> {
  const { phoneNumber, name, email, customFields, accountId, ...rest } = input;
  const contactId = await insertContact(h, {
    phoneNumber,
    name: name ?? null,
    email: email ?? null,
    customFields: customFields ?? {},
    ...(accountId && { accountId }),
  });
  const conversationId = await insertConversation(h, {
    contactId,
    ...(accountId && { accountId }),
    ...rest,
  });
  return { contactId, conversationId };
}

export type MessageFixture =
  & { conversationId: string; contactId: string; accountId?: string }
  & Partial<
    Omit<MessagesTable, "id" | "conversation_id" | "contact_id" | "content">
  >
  & { content?: unknown };

export async function insertMessage(
  h: Harness,
  input: MessageFixture,
): Promise<string> {
  const id = newId();
  const at = input.created_at ?? tick(h);
  const { conversationId, contactId, accountId, content, ...rest } = input;
  await h.container.db.insertInto("messages").values({
    channel_id: h.tenant.channel.id,
    direction: "inbound",
    type: "text",
    status: "received",
    wa_message_id: null,
    error_code: null,
    error_message: null,
    origin: "inbound",
    sent_by_ai: 0,
    campaign_id: null,
    client_ref: null,
    media_id: null,
    media_key: null,
    lane: "live",
    context_wa_message_id: null,
    upstream_timestamp: null,
    updated_at: at,
    ...rest,
    id,
    account_id: accountId ?? h.tenant.account.id,
    conversation_id: conversationId,
    contact_id: contactId,
    content: JSON.stringify(content ?? { body: "hello" }),
    created_at: at,
  }).execute();
  return id;
}

// deno-lint-ignore no-explicit-any
export const ids = (rows: any[]): string[] => rows.map((r) => r.id);
