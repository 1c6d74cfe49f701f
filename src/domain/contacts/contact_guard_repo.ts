// The contact writes and guards of atomic units (src/db/planned_writes.ts):
// an insert correct on its own whatever another instance wrote since the
// unit read, and queries that find a row while what a unit read still holds.
import { CompiledQuery } from "kysely";
import type { Executor } from "../../db/schema.ts";
import { rowUnchanged } from "../../db/row_guard.ts";
import { samePhoneVariants } from "../phones/phone.ts";
import type { Contact } from "./contact.ts";
import { toContactsRow } from "./contact_repo.ts";

/** A person's identifiers as contacts are found by them. */
export interface IdentityKeys {
  accountId: string;
  phoneNumber?: string | null | undefined;
  userId?: string | null | undefined;
}

/**
 * The contacts of the account that findContactByPhone() (any spelling of
 * the number) or findContactByUserId() find for these identifiers, but
 * those of `except`: SQL text and parameters of `select 1 ...`.
 */
function holders(
  keys: IdentityKeys,
  except: readonly string[] = [],
): { text: string; parameters: unknown[] } {
  const parameters: unknown[] = [keys.accountId];
  const terms: string[] = [];
  if (keys.phoneNumber) {
    const spellings = samePhoneVariants(keys.phoneNumber);
    terms.push(`phone_number in (${spellings.map(() => "?").join(", ")})`);
    parameters.push(...spellings);
  }
  if (keys.userId) {
    terms.push("user_id = ?");
    parameters.push(keys.userId);
  }
  if (terms.length === 0) throw new Error("An identity needs an identifier");
  let text = `select 1 from contacts where account_id = ? and (${
    terms.join(" or ")
  })`;
  if (except.length) {
    text += " and id not in (select value from json_each(?))";
    parameters.push(JSON.stringify(except));
  }
  return { text, parameters };
}

/**
 * Inserts a contact unless the account has one with its phone number (any
 * spelling) or BSUID: correct on its own whatever another writer did since
 * the caller looked (an atomic unit checks it changed one row).
 */
export async function insertContactIfNone(
  db: Executor,
  contact: Contact,
): Promise<void> {
  const row = toContactsRow(contact);
  const columns = Object.keys(row);
  const taken = holders(contact);
  await db.executeQuery(CompiledQuery.raw(
    `insert into contacts (${columns.join(", ")}) select ${
      columns.map(() => "?").join(", ")
    } where not exists (${taken.text})`,
    [...Object.values(row), ...taken.parameters],
  ));
}

/**
 * A query that finds a row while no contact of the account but `ids`
 * holds these identifiers (a guard: the contacts a lookup found are still
 * all there are).
 */
export function onlyHolders(
  keys: IdentityKeys,
  ids: readonly string[],
): CompiledQuery<unknown> {
  const others = holders(keys, ids);
  return CompiledQuery.raw(
    `select 1 where not exists (${others.text})`,
    others.parameters,
  );
}

/** The columns a contact's identity is: what a lookup matches and a sender fills in. */
const IDENTITY_COLUMNS = [
  "phone_number",
  "user_id",
  "parent_user_id",
  "username",
  "name",
] as const;

/**
 * A query that finds a row while the contact's identity columns are as
 * `contact` shows them.
 */
export function identityUnchanged(contact: Contact): CompiledQuery<unknown> {
  return rowUnchanged("contacts", toContactsRow(contact), IDENTITY_COLUMNS);
}

/**
 * A query that finds a row while the contact is stored as `contact` shows
 * it (every column but updated_at).
 */
export function contactUnchanged(contact: Contact): CompiledQuery<unknown> {
  const { updated_at: _, ...row } = toContactsRow(contact);
  return rowUnchanged("contacts", row);
}

/**
 * A guard of an atomic unit (expectRow) that finds a row while the account
 * has no contact of any of these BSUIDs, nor of these numbers under any
 * spelling: what findContactOnChannel (BatchRecipients.load) looks up, so a
 * unit that read none may create them.
 */
export function noContactsOf(
  accountId: string,
  identities: readonly { phoneNumber: string | null; userId: string | null }[],
): CompiledQuery<unknown> {
  const phones = identities.flatMap((i) =>
    i.userId === null && i.phoneNumber !== null
      ? samePhoneVariants(i.phoneNumber)
      : []
  );
  const userIds = identities.flatMap((i) => i.userId ?? []);
  return CompiledQuery.raw(
    `select 1 where not exists (select 1 from contacts where account_id = ?
      and (phone_number in (select value from json_each(?))
        or user_id in (select value from json_each(?))))`,
    [accountId, JSON.stringify(phones), JSON.stringify(userIds)],
  );
}

/** A guard (expectRow) that finds a row while the contact exists (not joined into another, not deleted). */
export function contactStillExists(id: string): CompiledQuery<unknown> {
  return CompiledQuery.raw("select 1 from contacts where id = ?", [id]);
}

/** A guard (expectRow) that finds a row while none of these contacts has opted out. */
export function noneOptedOut(ids: readonly string[]): CompiledQuery<unknown> {
  return CompiledQuery.raw(
    `select 1 where not exists (select 1 from contacts
      where id in (select value from json_each(?)) and opted_in = 0)`,
    [JSON.stringify(ids)],
  );
}
