import type { Db } from "../../db/schema.ts";
import type { Clock } from "../../clock.ts";
import type { Logger } from "../../log.ts";
import { AppError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import { randomBase62, sha256Hex, sha256HexSync } from "../../crypto.ts";
import type { LookupCache } from "../../db/lookup_cache.ts";
import { toDbTime } from "../../db/time.ts";
import {
  type Account,
  type Agent,
  type AgentVisibility,
  API_KEY_PREFIX,
  type ApiKey,
  DEFAULT_RATE_LIMIT,
  LAST_USED_RESOLUTION_MS,
  type Plan,
  type Principal,
  SLUG_REGEXP,
  TOKEN_REGEXP,
  USER_TOKEN_PREFIX,
} from "./account.ts";
import * as repo from "./account_repo.ts";
import { deleteAgentSessions } from "./agent_session_repo.ts";
import type { Scope } from "./scopes.ts";

export interface Deps {
  db: Db;
  clock: Clock;
  log?: Logger;
}

/** Creates an account (admin CLI). */
export async function createAccount(
  deps: Deps,
  input: { name: string; slug: string; plan?: Plan; country?: string },
): Promise<Account> {
  if (!SLUG_REGEXP.test(input.slug)) {
    throw new AppError(
      "VALIDATION_ERROR",
      `Cannot create account: slug "${input.slug}" must be lowercase letters, digits and dashes`,
    );
  }
  if (await repo.findAccountBySlug(deps.db, input.slug)) {
    throw new AppError(
      "VALIDATION_ERROR",
      `Cannot create account: slug "${input.slug}" is taken`,
    );
  }
  const country = (input.country ?? "AR").toUpperCase();
  if (!/^[A-Z]{2}$/.test(country)) {
    throw new AppError(
      "VALIDATION_ERROR",
      `Cannot create account: country "${input.country}" is not an ISO 3166 alpha-2 code`,
    );
  }
  const now = toDbTime(deps.clock.now());
  return await repo.insertAccount(deps.db, {
    id: newId(),
    name: input.name,
    slug: input.slug,
    plan: input.plan ?? "crece",
    default_country: country,
    created_at: now,
    updated_at: now,
  });
}

/** Finds an account by slug or id, or throws NOT_FOUND. */
export async function requireAccount(
  deps: Deps,
  slugOrId: string,
): Promise<Account> {
  const found = await repo.findAccountBySlug(deps.db, slugOrId) ??
    await repo.findAccountById(deps.db, slugOrId);
  if (!found) {
    throw new AppError("NOT_FOUND", `Cannot find account "${slugOrId}"`);
  }
  return found;
}

export async function getAccount(deps: Deps, id: string): Promise<Account> {
  const found = await repo.findAccountById(deps.db, id);
  if (!found) throw new AppError("NOT_FOUND", `Cannot find account "${id}"`);
  return found;
}

/** Creates an API key; the plain key is returned once and only its hash is stored. */
export async function createApiKey(
  deps: Deps,
  input: {
    accountId: string;
    scopes: Scope[];
    rateLimit?: number;
    name?: string;
  },
): Promise<{ key: string; apiKey: ApiKey }> {
  const key = API_KEY_PREFIX + randomBase62(40);
  const apiKey = await repo.insertApiKey(deps.db, {
    id: newId(),
    account_id: input.accountId,
    name: input.name ?? null,
    key_hash: await sha256Hex(key),
    key_prefix: key.slice(0, 8),
    scopes: input.scopes,
    rate_limit: input.rateLimit ?? DEFAULT_RATE_LIMIT,
    created_at: toDbTime(deps.clock.now()),
    last_used_at: null,
    revoked_at: null,
  });
  return { key, apiKey };
}

export async function listApiKeys(
  deps: Deps,
  accountId: string,
): Promise<ApiKey[]> {
  return await repo.listApiKeys(deps.db, accountId);
}

export async function revokeApiKey(deps: Deps, id: string): Promise<void> {
  await revoke(deps, "api_keys", id, `key "${id}": no such active key`);
}

/** Creates an agent; its user token is returned once. */
export async function createAgent(
  deps: Deps,
  input: { accountId: string; name: string; visibility: AgentVisibility },
): Promise<{ token: string; agent: Agent }> {
  const token = USER_TOKEN_PREFIX + randomBase62(40);
  const agent = await repo.insertAgent(deps.db, {
    id: newId(),
    account_id: input.accountId,
    name: input.name,
    visibility: input.visibility,
    token_hash: await sha256Hex(token),
    created_at: toDbTime(deps.clock.now()),
    last_used_at: null,
    revoked_at: null,
  });
  return { token, agent };
}

/** Lists an account's agents (revoked ones included), oldest first. */
export async function listAgents(
  deps: Deps,
  accountId: string,
): Promise<Agent[]> {
  return await repo.listAgents(deps.db, accountId);
}

/** The account's active agents (who a conversation can be assigned to), oldest first. */
export async function listActiveAgents(
  deps: Deps,
  accountId: string,
): Promise<Pick<Agent, "id" | "name" | "visibility">[]> {
  return (await repo.listAgents(deps.db, accountId))
    .filter((a) => !a.revokedAt)
    .map(({ id, name, visibility }) => ({ id, name, visibility }));
}

/**
 * Revokes an agent: its user token's next request gets 401 (the cache epoch
 * moves), its panel sessions and unused login links end (its open event
 * streams close on their next check).
 */
export async function revokeAgent(deps: Deps, id: string): Promise<void> {
  await revoke(
    deps,
    "agents",
    id,
    `agent "${id}": no such agent with an active token`,
  );
  await deleteAgentSessions(deps.db, id);
}

async function revoke(
  deps: Deps,
  table: "api_keys" | "agents",
  id: string,
  notFound: string,
): Promise<void> {
  const at = toDbTime(deps.clock.now());
  if (!await repo.revokeCredential(deps.db, table, id, at)) {
    throw new AppError("NOT_FOUND", `Cannot revoke ${notFound}`);
  }
}

/** A resolved credential as the lookup cache keeps it. */
interface Credential {
  table: "api_keys" | "agents";
  id: string;
  principal: Principal;
  /** As last written by this process or read from the row. */
  lastUsedAt: string | null;
}

/**
 * Resolves a bearer token to its principal, or null when malformed, unknown
 * or revoked. With `lookups`, the credential comes from memory while the
 * cache epoch stands still (a revoke or any key change moves it: see
 * src/db/lookup_cache.ts); the token is hashed synchronously.
 */
export async function authenticate(
  deps: Deps & { lookups?: LookupCache },
  token: string,
): Promise<Principal | null> {
  if (!TOKEN_REGEXP.test(token)) return null;
  const hash = sha256HexSync(token);
  const load = () => findCredential(deps, token, hash);
  let credential: Credential | undefined;
  if (deps.lookups) {
    const refreshing = deps.lookups.refresh();
    if (refreshing) await refreshing;
    credential = await deps.lookups.get(`auth:${hash}`, load);
  } else credential = await load();
  if (!credential) return null;
  await noteUse(deps, credential);
  return credential.principal;
}

async function findCredential(
  deps: Deps,
  token: string,
  hash: string,
): Promise<Credential | undefined> {
  if (token.startsWith(API_KEY_PREFIX)) {
    const key = await repo.findApiKeyByHash(deps.db, hash);
    if (!key || key.revokedAt) return undefined;
    return {
      table: "api_keys",
      id: key.id,
      lastUsedAt: key.lastUsedAt,
      principal: {
        kind: "key",
        accountId: key.accountId,
        keyId: key.id,
        scopes: new Set(key.scopes),
        rateLimit: key.rateLimit,
      },
    };
  }
  const agent = await repo.findAgentByTokenHash(deps.db, hash);
  if (!agent) return undefined;
  return {
    table: "agents",
    id: agent.id,
    lastUsedAt: agent.lastUsedAt,
    principal: {
      kind: "agent",
      accountId: agent.accountId,
      agentId: agent.id,
      visibility: agent.visibility,
    },
  };
}

/**
 * Records a credential's use coarsely: a write only when the stored
 * lastUsedAt is older than LAST_USED_RESOLUTION_MS, never one per request.
 * A failed write is logged and does not fail the request it counts.
 */
async function noteUse(deps: Deps, credential: Credential): Promise<void> {
  const now = deps.clock.now();
  const staleBefore = toDbTime(
    new Date(now.getTime() - LAST_USED_RESOLUTION_MS),
  );
  const lastUsedAt = credential.lastUsedAt;
  if (lastUsedAt !== null && lastUsedAt > staleBefore) return;
  // Noted before the write: concurrent requests of a cached credential write once.
  credential.lastUsedAt = toDbTime(now);
  try {
    await repo.touchLastUsed(
      deps.db,
      credential.table,
      credential.id,
      toDbTime(now),
      staleBefore,
    );
  } catch (err) {
    deps.log?.warn("Cannot record credential use", {
      err,
      table: credential.table,
      id: credential.id,
    });
  }
}
