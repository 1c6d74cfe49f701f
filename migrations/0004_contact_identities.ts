// deno-lint-ignore-file no-explicit-any
// Frozen once landed: never edit, add a new migration instead.
import { type Kysely, sql } from "kysely";

/**
 * A contact is a person on WhatsApp, known by a phone number, a
 * business-scoped user id (BSUID, reference §4.7) or both: the phone number
 * becomes optional, the BSUID (stored exactly as received, with its parent)
 * and the username join it. SQLite cannot drop a NOT NULL, so the table is
 * rebuilt with foreign keys off (else dropping it would cascade into every
 * conversation and message); existing rows keep every value and id.
 * Tested against a database seeded with the 0003 schema, on both engines.
 */
const REBUILD = [
  `create table contacts_new (
    id text primary key,
    account_id text not null references accounts(id) on delete cascade,
    phone_number text,
    user_id text,
    parent_user_id text,
    username text,
    name text,
    email text,
    tags text not null default '[]',
    custom_fields text not null default '{}',
    opted_in integer not null default 1,
    last_message_at text,
    created_at text not null,
    updated_at text not null,
    unique (account_id, phone_number),
    check (phone_number is not null or user_id is not null)
  ) strict`,
  `insert into contacts_new (id, account_id, phone_number, name, email, tags,
    custom_fields, opted_in, last_message_at, created_at, updated_at)
   select id, account_id, phone_number, name, email, tags, custom_fields,
    opted_in, last_message_at, created_at, updated_at from contacts`,
  `drop table contacts`,
  `alter table contacts_new rename to contacts`,
  `create index contacts_list_idx on contacts (account_id, created_at desc, id desc)`,
  `create unique index contacts_user_id_idx on contacts (account_id, user_id) where user_id is not null`,
];

/** Messages keep what the customer did to them: edits, deletion, flags, ad referral. */
const MESSAGE_COLUMNS = [
  `alter table messages add column details text`,
  `alter table conversations add column referral text`,
];

/** A libSQL client, when the database is one (its driver keeps it on the connection). */
interface ScriptClient {
  executeMultiple(script: string): Promise<void>;
}

async function libsqlClient(db: Kysely<any>): Promise<ScriptClient | null> {
  return await db.getExecutor().provideConnection((connection) => {
    const client = (connection as { client?: Partial<ScriptClient> }).client;
    return Promise.resolve(
      typeof client?.executeMultiple === "function"
        ? client as ScriptClient
        : null,
    );
  });
}

/**
 * Runs the statements in one transaction with foreign keys off. SQLite
 * ignores that pragma inside a transaction, and a libSQL server opens a new
 * stream per request, so on libSQL the whole sequence goes as one script.
 */
async function withoutForeignKeys(
  db: Kysely<any>,
  statements: string[],
): Promise<void> {
  const client = await libsqlClient(db);
  if (client) {
    await client.executeMultiple(
      ["pragma foreign_keys = off", "begin", ...statements, "commit"]
        .join(";\n") + ";\npragma foreign_keys = on;",
    );
    return;
  }
  const before = await sql<{ foreign_keys: number }>`pragma foreign_keys`
    .execute(db);
  const enforced = Number(before.rows[0]?.foreign_keys ?? 0) === 1;
  if (enforced) await sql`pragma foreign_keys = off`.execute(db);
  try {
    await db.transaction().execute(async (trx) => {
      for (const statement of statements) {
        await sql.raw(statement).execute(trx);
      }
    });
  } finally {
    if (enforced) await sql`pragma foreign_keys = on`.execute(db);
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  await withoutForeignKeys(db, [...REBUILD, ...MESSAGE_COLUMNS]);
  const broken = await sql`pragma foreign_key_check`.execute(db);
  if (broken.rows.length > 0) {
    throw new Error(
      `Rebuilding contacts left ${broken.rows.length} row(s) with a broken foreign key`,
    );
  }
}
