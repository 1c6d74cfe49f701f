import type { Db } from "../../db/schema.ts";
import { AppError } from "../../errors.ts";
import { findAccountMessage } from "./message_repo.ts";
import { type MessageView, toMessageView } from "./message.ts";

/** One message of the account, as GET /messages/:id shows it. */
export async function getMessage(
  deps: { db: Db },
  accountId: string,
  id: string,
): Promise<MessageView> {
  const row = await findAccountMessage(deps.db, accountId, id);
  if (!row) {
    throw new AppError("MESSAGE_NOT_FOUND", `Cannot find message "${id}"`);
  }
  return toMessageView(row);
}
