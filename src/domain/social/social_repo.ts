/** SQL of social accounts: rows, sealed tokens, the durable quota and the refresh's saved place. */
import type { RawBuilder } from "kysely";
import type { Executor, SocialAccountsTable } from "../../db/schema.ts";
import { sameCount } from "../../db/row_guard.ts";
import type { SocialAccount, SocialNetwork } from "./social.ts";

function toAccount(r: SocialAccountsTable): SocialAccount {
  return {
    id: r.id,
    accountId: r.account_id,
    network: r.network as SocialNetwork,
    upstreamId: r.upstream_id,
    username: r.username,
    name: r.name,
    lastRefreshedAt: r.last_refreshed_at,
    createdAt: r.created_at,
  };
}

export async function insertSocialAccount(
  db: Executor,
  row: SocialAccountsTable,
): Promise<SocialAccount> {
  await db.insertInto("social_accounts").values(row).execute();
  return toAccount(row);
}

/** A guard (PlannedWrites.expectRow): the upstream account is not connected to the account. */
export function notConnected(
  accountId: string,
  key: { network: SocialNetwork; upstreamId: string },
): RawBuilder<unknown> {
  return sameCount("social_accounts", {
    account_id: accountId,
    network: key.network,
    upstream_id: key.upstreamId,
  }, 0);
}

export async function findSocialAccountByUpstream(
  db: Executor,
  accountId: string,
  key: { network: SocialNetwork; upstreamId: string },
): Promise<SocialAccount | undefined> {
  const r = await db.selectFrom("social_accounts").selectAll()
    .where("account_id", "=", accountId)
    .where("network", "=", key.network)
    .where("upstream_id", "=", key.upstreamId)
    .executeTakeFirst();
  return r ? toAccount(r) : undefined;
}

export async function findSocialAccount(
  db: Executor,
  id: string,
): Promise<SocialAccount | undefined> {
  const r = await db.selectFrom("social_accounts").selectAll()
    .where("id", "=", id).executeTakeFirst();
  return r ? toAccount(r) : undefined;
}

export async function listSocialAccounts(
  db: Executor,
  filter: { accountId?: string; network?: SocialNetwork } = {},
): Promise<SocialAccount[]> {
  let q = db.selectFrom("social_accounts").selectAll();
  if (filter.accountId) q = q.where("account_id", "=", filter.accountId);
  if (filter.network) q = q.where("network", "=", filter.network);
  const rows = await q.orderBy("created_at").orderBy("id").execute();
  return rows.map(toAccount);
}

export async function readAccessTokenSealed(
  db: Executor,
  id: string,
): Promise<string | undefined> {
  const r = await db.selectFrom("social_accounts")
    .select("access_token_enc").where("id", "=", id).executeTakeFirst();
  return r?.access_token_enc;
}

/** The place an unfinished background refresh stopped at (JSON), or null. */
export async function readRefreshState(
  db: Executor,
  id: string,
): Promise<string | null> {
  const r = await db.selectFrom("social_accounts").select("refresh_state")
    .where("id", "=", id).executeTakeFirst();
  return r?.refresh_state ?? null;
}

export async function saveRefreshState(
  db: Executor,
  id: string,
  patch: { state: string | null; at: string; finished?: boolean },
): Promise<void> {
  await db.updateTable("social_accounts").set({
    refresh_state: patch.state,
    updated_at: patch.at,
    ...(patch.finished ? { last_refreshed_at: patch.at } : {}),
  }).where("id", "=", id).execute();
}
