// Guards of atomic units (src/db/planned_writes.ts) on conversations: each
// finds a row while what a unit read still holds.
import { CompiledQuery } from "kysely";

/**
 * A guard of an atomic unit (expectRow) that finds a row while the
 * conversation is still the contact's and, with `assignedTo`, assigned to
 * that agent: what a send read of it still holds.
 */
export function conversationStillOf(
  id: string,
  contactId: string,
  assignedTo?: string,
): CompiledQuery<unknown> {
  return assignedTo === undefined
    ? CompiledQuery.raw(
      "select 1 from conversations where id = ? and contact_id = ?",
      [id, contactId],
    )
    : CompiledQuery.raw(
      `select 1 from conversations where id = ? and contact_id = ?
        and assigned_to = ?`,
      [id, contactId, assignedTo],
    );
}

/**
 * A guard (expectRow) that finds a row while none of these contacts has a
 * conversation on the paired channel: a unit that read none creates them.
 */
export function noConversationsOn(
  pairs: readonly { contactId: string; channelId: string | null }[],
): CompiledQuery<unknown> {
  return CompiledQuery.raw(
    `select 1 where not exists (select 1 from conversations as c
      join json_each(?) as v on c.contact_id = v.value ->> 0
        and c.channel_id = v.value ->> 1)`,
    [JSON.stringify(pairs.map((p) => [p.contactId, p.channelId]))],
  );
}
