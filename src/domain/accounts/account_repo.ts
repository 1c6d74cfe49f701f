import type { Executor } from "../../db/schema.ts";
import { fromJson, toJson } from "../../db/json.ts";
import type {
  Account,
  Agent,
  AgentVisibility,
  ApiKey,
  Plan,
} from "./account.ts";
import type { Scope } from "./scopes.ts";
import type {
  AccountsTable,
  AgentsTable,
  ApiKeysTable,
} from "../../db/schema.ts";

function toAccount(r: AccountsTable): Account {
  return {
    id: r.id,
    name: r.name,
    slug: r.slug,
    plan: r.plan as Plan,
    defaultCountry: r.default_country,
    createdAt: r.created_at,
  };
}

function toApiKey(r: ApiKeysTable): ApiKey {
  return {
    id: r.id,
    accountId: r.account_id,
    name: r.name,
    keyPrefix: r.key_prefix,
    scopes: fromJson<Scope[]>(r.scopes, []),
    rateLimit: r.rate_limit,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    revokedAt: r.revoked_at,
  };
}

function toAgent(r: AgentsTable): Agent {
  return {
    id: r.id,
    accountId: r.account_id,
    name: r.name,
    visibility: r.visibility as AgentVisibility,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    revokedAt: r.revoked_at,
  };
}

export async function insertAccount(
  db: Executor,
  row: AccountsTable,
): Promise<Account> {
  await db.insertInto("accounts").values(row).execute();
  return toAccount(row);
}

export async function findAccountById(
  db: Executor,
  id: string,
): Promise<Account | undefined> {
  const r = await db.selectFrom("accounts").selectAll().where("id", "=", id)
    .executeTakeFirst();
  return r ? toAccount(r) : undefined;
}

export async function findAccountBySlug(
  db: Executor,
  slug: string,
): Promise<Account | undefined> {
  const r = await db.selectFrom("accounts").selectAll().where("slug", "=", slug)
    .executeTakeFirst();
  return r ? toAccount(r) : undefined;
}

export async function listAccounts(db: Executor): Promise<Account[]> {
  const rows = await db.selectFrom("accounts").selectAll().orderBy("created_at")
    .execute();
  return rows.map(toAccount);
}

export async function insertApiKey(
  db: Executor,
  row: Omit<ApiKeysTable, "scopes"> & { scopes: Scope[] },
): Promise<ApiKey> {
  const values = { ...row, scopes: toJson(row.scopes) };
  await db.insertInto("api_keys").values(values).execute();
  return toApiKey(values);
}

export async function findApiKeyByHash(
  db: Executor,
  hash: string,
): Promise<ApiKey | undefined> {
  const r = await db.selectFrom("api_keys").selectAll().where(
    "key_hash",
    "=",
    hash,
  ).executeTakeFirst();
  return r ? toApiKey(r) : undefined;
}

export async function listApiKeys(
  db: Executor,
  accountId: string,
): Promise<ApiKey[]> {
  const rows = await db.selectFrom("api_keys").selectAll().where(
    "account_id",
    "=",
    accountId,
  ).orderBy("created_at").execute();
  return rows.map(toApiKey);
}

/** Revokes an API key or an agent's user token; false when none is active under that id. */
export async function revokeCredential(
  db: Executor,
  table: "api_keys" | "agents",
  id: string,
  at: string,
): Promise<boolean> {
  const r = await db.updateTable(table).set({ revoked_at: at }).where(
    "id",
    "=",
    id,
  ).where("revoked_at", "is", null).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export async function insertAgent(
  db: Executor,
  row: AgentsTable,
): Promise<Agent> {
  await db.insertInto("agents").values(row).execute();
  return toAgent(row);
}

export async function findAgentByTokenHash(
  db: Executor,
  hash: string,
): Promise<Agent | undefined> {
  const r = await db.selectFrom("agents").selectAll().where(
    "token_hash",
    "=",
    hash,
  ).where("revoked_at", "is", null).executeTakeFirst();
  return r ? toAgent(r) : undefined;
}

export async function listAgents(
  db: Executor,
  accountId: string,
): Promise<Agent[]> {
  const rows = await db.selectFrom("agents").selectAll().where(
    "account_id",
    "=",
    accountId,
  ).orderBy("created_at").execute();
  return rows.map(toAgent);
}

/**
 * Sets last_used_at to `at` unless it is already newer than `staleBefore`,
 * so concurrent requests of one credential write it once.
 */
export async function touchLastUsed(
  db: Executor,
  table: "api_keys" | "agents",
  id: string,
  at: string,
  staleBefore: string,
): Promise<void> {
  await db.updateTable(table).set({ last_used_at: at }).where("id", "=", id)
    .where((eb) =>
      eb.or([
        eb("last_used_at", "is", null),
        eb("last_used_at", "<=", staleBefore),
      ])
    ).execute();
}

/** An agent of the account whose token is not revoked; another account's agent is not found. */
export async function findActiveAgent(
  db: Executor,
  accountId: string,
  id: string,
): Promise<Agent | undefined> {
  const r = await db.selectFrom("agents").selectAll()
    .where("id", "=", id).where("account_id", "=", accountId)
    .where("revoked_at", "is", null).executeTakeFirst();
  return r ? toAgent(r) : undefined;
}

/** An agent by id, whatever its account or state. */
export async function findAgent(
  db: Executor,
  id: string,
): Promise<Agent | undefined> {
  const r = await db.selectFrom("agents").selectAll().where("id", "=", id)
    .executeTakeFirst();
  return r ? toAgent(r) : undefined;
}
