import type { Db } from "../../db/schema.ts";
import { AppError } from "../../errors.ts";
import { findAccountMessage } from "./message_repo.ts";
import { type MessageView, toMessageView } from "./message.ts";
import type { Viewer } from "../conversations/conversation.ts";
import { seesConversation } from "../conversations/conversation_service.ts";

/** One message the viewer may see (its conversation's visibility), as GET /messages/:id shows it. */
export async function getMessage(
  deps: { db: Db },
  viewer: Viewer,
  id: string,
): Promise<MessageView> {
  const row = await findAccountMessage(deps.db, viewer.accountId, id);
  if (!row || !await seesConversation(deps, viewer, row.conversationId)) {
    throw new AppError("MESSAGE_NOT_FOUND", `Cannot find message "${id}"`);
  }
  return toMessageView(row);
}
