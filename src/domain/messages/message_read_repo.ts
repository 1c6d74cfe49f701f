// Read side of messages (SELECTs only); the messaging engine owns the writes.
import type { Executor } from "../../db/schema.ts";
import type { CursorPosition } from "../pagination.ts";
import type { Message } from "./message.ts";
import { toMessage } from "./message_repo.ts";

export interface ConversationMessagesInput {
  accountId: string;
  conversationId: string;
  after?: CursorPosition;
  limit: number;
}

/**
 * A conversation's messages oldest first (created_at asc, id asc), after the
 * keyset position when given. Uses messages_conversation_idx.
 */
export function conversationMessagesQuery(
  db: Executor,
  input: ConversationMessagesInput,
) {
  let query = db.selectFrom("messages").selectAll()
    .where("conversation_id", "=", input.conversationId)
    .where("account_id", "=", input.accountId);
  const after = input.after;
  if (after) {
    query = query.where((eb) =>
      eb(eb.refTuple("created_at", "id"), ">", eb.tuple(after.at, after.id))
    );
  }
  return query.orderBy("created_at", "asc").orderBy("id", "asc")
    .limit(input.limit);
}

/**
 * A conversation's newest messages (created_at desc, id desc), before the
 * keyset position when given: the panel opens a thread at its end and
 * pages back. Reads messages_conversation_idx backwards.
 */
export async function latestConversationMessages(
  db: Executor,
  input: {
    accountId: string;
    conversationId: string;
    before?: CursorPosition;
    limit: number;
  },
): Promise<Message[]> {
  let query = db.selectFrom("messages").selectAll()
    .where("conversation_id", "=", input.conversationId)
    .where("account_id", "=", input.accountId);
  const before = input.before;
  if (before) {
    query = query.where((eb) =>
      eb(eb.refTuple("created_at", "id"), "<", eb.tuple(before.at, before.id))
    );
  }
  const rows = await query.orderBy("created_at", "desc").orderBy("id", "desc")
    .limit(input.limit).execute();
  return rows.map(toMessage);
}

export async function listConversationMessages(
  db: Executor,
  input: ConversationMessagesInput,
): Promise<Message[]> {
  return (await conversationMessagesQuery(db, input).execute()).map(toMessage);
}

/** One message of an account; another account's id is not found. */
export async function findMessage(
  db: Executor,
  accountId: string,
  id: string,
): Promise<Message | undefined> {
  const row = await db.selectFrom("messages").selectAll()
    .where("id", "=", id).where("account_id", "=", accountId)
    .executeTakeFirst();
  return row && toMessage(row);
}
