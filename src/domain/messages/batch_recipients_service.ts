// Who the messages of a batch go to. The per-message path looks each
// recipient's contact and conversation up and creates the missing ones one
// by one; a batch reads every known one in two statements up front, plans
// the missing ones in item order (a later item sees what an earlier one
// created, as it would have) and writes them, with their events in the same
// order, in one statement per table.
import type { Executor } from "../../db/schema.ts";
import { toDbTime } from "../../db/time.ts";
import { newId } from "../../ids.ts";
import { samePhoneVariants } from "../phones/phone.ts";
import { type Contact, contactView, newContact } from "../contacts/contact.ts";
import { findContactsBy, insertContacts } from "../contacts/contact_repo.ts";
import { noContactsOf } from "../contacts/contact_guard_repo.ts";
import {
  type Conversation,
  truncatePreview,
} from "../conversations/conversation.ts";
import { findConversationsOfContacts } from "../conversations/conversation_repo.ts";
import { noConversationsOn } from "../conversations/conversation_guard_repo.ts";
import {
  insertConversations,
  openConversation,
  openConversationRow,
} from "../conversations/conversation_write_repo.ts";
import { type NewEvent, recordEvents } from "../events/event_service.ts";
import type { SendMessageInput } from "./outbound_schema.ts";
import {
  type Admitted,
  channelFor,
  checkRules,
  recipientOf,
  type SendContext,
  type SendWrites,
} from "./send_admission_service.ts";

type Recipient = ReturnType<typeof recipientOf>;

/** What a new message changes on its conversation and contact. */
export interface LastMessage {
  conversationId: string;
  contactId: string;
  messageId: string;
  preview: string | null;
}

const pairKey = (contactId: string, channelId: string) =>
  `${contactId} ${channelId}`;

/** The contacts and conversations of one batch: those found and those to create. */
export class BatchRecipients {
  #byPhone = new Map<string, Contact>();
  #byUser = new Map<string, Contact>();
  #conversations = new Map<string, Conversation>();
  #newContacts: Contact[] = [];
  #newConversations: Conversation[] = [];
  #events: Omit<NewEvent, "accountId">[] = [];

  private constructor(readonly accountId: string, readonly now: Date) {}

  /**
   * Reads the contacts of every recipient (under every spelling of its
   * number) and their conversations: at most three statements.
   */
  static async load(
    trx: Executor,
    ctx: SendContext,
    recipients: readonly Recipient[],
  ): Promise<BatchRecipients> {
    const batch = new BatchRecipients(ctx.accountId, ctx.now);
    const phones = new Set<string>();
    const userIds = new Set<string>();
    for (const r of recipients) {
      if (r.userId) userIds.add(r.userId);
      else for (const v of samePhoneVariants(r.phone!)) phones.add(v);
    }
    const found = [
      ...await findContactsBy(trx, ctx.accountId, "phone_number", [...phones]),
      ...await findContactsBy(trx, ctx.accountId, "user_id", [...userIds]),
    ];
    for (const contact of found) batch.#know(contact);
    const conversations = await findConversationsOfContacts(
      trx,
      ctx.accountId,
      found,
    );
    for (const c of conversations) {
      // (contact, channel) is unique for a channel.
      if (c.phoneNumberId !== null) {
        batch.#conversations.set(pairKey(c.contactId, c.phoneNumberId), c);
      }
    }
    return batch;
  }

  #know(contact: Contact): void {
    if (contact.phoneNumber) this.#byPhone.set(contact.phoneNumber, contact);
    if (contact.userId) this.#byUser.set(contact.userId, contact);
  }

  /** As findContactByPhone/findContactByUserId: the exact spelling wins. */
  contactOf(r: Recipient): Contact | undefined {
    if (r.userId) return this.#byUser.get(r.userId);
    for (const v of samePhoneVariants(r.phone!)) {
      const hit = this.#byPhone.get(v);
      if (hit) return hit;
    }
    return undefined;
  }

  conversationOf(contactId: string, channelId: string) {
    return this.#conversations.get(pairKey(contactId, channelId));
  }

  /** A new contact as findOrCreateContact makes it (its contact.created queued). */
  createContact(r: Recipient): Contact {
    const at = toDbTime(this.now);
    const contact = newContact({
      id: newId(),
      accountId: this.accountId,
      phoneNumber: r.phone,
      userId: r.userId,
      createdAt: at,
    });
    this.#know(contact);
    this.#newContacts.push(contact);
    this.#events.push({
      type: "contact.created",
      data: contactView(contact),
      createdAt: at,
      lane: "batch",
    });
    return contact;
  }

  /** A new open conversation as findOrCreateConversation makes it (its event queued). */
  createConversation(contact: Contact, channelId: string): Conversation {
    const at = toDbTime(this.now);
    const conversation = openConversation({
      id: newId(),
      accountId: this.accountId,
      contact,
      channelId,
      at,
    });
    this.#conversations.set(pairKey(contact.id, channelId), conversation);
    this.#newConversations.push(conversation);
    this.#events.push({
      type: "conversation.created",
      data: conversation,
      createdAt: at,
      lane: "batch",
    });
    return conversation;
  }

  /**
   * Writes the new contacts and conversations already carrying their last
   * message (`last`, one per conversation), then their events in creation
   * order. Returns the last messages of the conversations that existed
   * before, which the caller records on them.
   */
  /**
   * Adds an item's own event (its message.created) after the contact and
   * conversation events it caused, so the batch's events are in the order
   * the same sends one by one would write them.
   */
  addEvent(event: Omit<NewEvent, "accountId">): void {
    this.#events.push(event);
  }

  /**
   * The writes go on `out` (see SendWrites), guarded (libSQL) on what load()
   * read: no contact of a new one's identity, no conversation of a new
   * one's pair came meanwhile (another send made it: the unit is planned
   * again and finds it).
   */
  async write(out: SendWrites, last: readonly LastMessage[]): Promise<{
    existing: LastMessage[];
    existingContactIds: string[];
  }> {
    const at = toDbTime(this.now);
    const lastOf = new Map(last.map((l) => [l.conversationId, l]));
    if (this.#newContacts.length > 0) {
      out.writes.expectRow(noContactsOf(this.accountId, this.#newContacts));
    }
    await insertContacts(
      out.db,
      this.#newContacts.map((c) => ({ ...c, lastMessageAt: at })),
    );
    if (this.#newConversations.length > 0) {
      out.writes.expectRow(noConversationsOn(
        this.#newConversations.map((c) => ({
          contactId: c.contactId,
          channelId: c.phoneNumberId,
        })),
      ));
    }
    await insertConversations(
      out.db,
      this.#newConversations.map((c) => {
        const l = lastOf.get(c.id)!;
        return {
          ...openConversationRow({
            id: c.id,
            accountId: this.accountId,
            contactId: c.contactId,
            channelId: c.phoneNumberId,
            at: c.createdAt,
          }),
          last_message_at: at,
          last_message_preview: truncatePreview(l.preview),
          last_message_direction: "outbound",
          last_message_status: "queued",
          last_message_id: l.messageId,
          updated_at: at,
        };
      }),
    );
    if (out.events) {
      for (const e of this.#events) {
        out.events.add({ ...e, accountId: this.accountId });
      }
    } else await recordEvents(out.db, this.accountId, this.#events);
    const created = new Set(this.#newConversations.map((c) => c.id));
    const newContacts = new Set(this.#newContacts.map((c) => c.id));
    return {
      existing: last.filter((l) => !created.has(l.conversationId)),
      existingContactIds: [
        ...new Set(
          last.map((l) => l.contactId).filter((id) => !newContacts.has(id)),
        ),
      ],
    };
  }
}

/**
 * admit() against the batch's recipients: the same rules in the same order,
 * the contact and conversation found in `recipients` or planned there.
 */
export async function admitInBatch(
  trx: Executor,
  ctx: SendContext,
  input: SendMessageInput,
  options: { respectOptOut: boolean; recipients: BatchRecipients },
): Promise<Admitted | "opted_out"> {
  const { recipients } = options;
  const channel = await channelFor(trx, ctx, input.phoneNumberId);
  const r = recipientOf(input);
  const existing = recipients.contactOf(r);
  if (options.respectOptOut && existing && !existing.optedIn) {
    return "opted_out";
  }
  const conversation = existing &&
    recipients.conversationOf(existing.id, channel.id);
  await checkRules(trx, ctx, input, { channel, to: r.to, conversation });
  const contact = existing ?? recipients.createContact(r);
  return {
    channel,
    contact,
    conversation: conversation ??
      recipients.createConversation(contact, channel.id),
  };
}
