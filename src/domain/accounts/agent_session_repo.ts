// Panel sign-in: one-time login links and sessions, by the SHA-256 of their
// secret (the secret itself is never stored).
import type {
  AgentLoginLinksTable,
  AgentSessionsTable,
  Executor,
} from "../../db/schema.ts";
import type { RawBuilder } from "kysely";
import { sameRow } from "../../db/row_guard.ts";
import type { AgentVisibility } from "./account.ts";

export async function insertLoginLink(
  db: Executor,
  row: AgentLoginLinksTable,
): Promise<void> {
  await db.insertInto("agent_login_links").values(row).execute();
}

/** The agent of an unused, unexpired link whose agent is active; undefined otherwise. */
export async function findUsableLink(
  db: Executor,
  tokenHash: string,
  now: string,
): Promise<{ agentId: string; accountId: string; name: string } | undefined> {
  const row = await db.selectFrom("agent_login_links as l")
    .innerJoin("agents as a", "a.id", "l.agent_id")
    .select(["a.id as agentId", "a.account_id as accountId", "a.name"])
    .where("l.token_hash", "=", tokenHash)
    .where("l.used_at", "is", null)
    .where("l.expires_at", ">", now)
    .where("a.revoked_at", "is", null)
    .executeTakeFirst();
  return row;
}

/**
 * Marks an unused, unexpired link used and returns its agent id; undefined
 * when it was used, expired or unknown. One statement, so two sign-ins with
 * the same link cannot both succeed.
 */
export async function consumeLink(
  db: Executor,
  tokenHash: string,
  now: string,
): Promise<string | undefined> {
  const row = await db.updateTable("agent_login_links")
    .set({ used_at: now })
    .where("token_hash", "=", tokenHash)
    .where("used_at", "is", null)
    .where("expires_at", ">", now)
    .returning("agent_id")
    .executeTakeFirst();
  return row?.agent_id;
}

/** A guard (PlannedWrites.expectRow): the agent is not revoked. */
export function activeAgent(agentId: string): RawBuilder<unknown> {
  return sameRow("agents", { id: agentId, revoked_at: null });
}

export async function insertSession(
  db: Executor,
  row: AgentSessionsTable,
): Promise<void> {
  await db.insertInto("agent_sessions").values(row).execute();
}

export interface SessionRow {
  idHash: string;
  agentId: string;
  accountId: string;
  name: string;
  visibility: AgentVisibility;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
}

/** A session with its agent, when the agent is active (a revoked agent's sessions are gone). */
export async function findSession(
  db: Executor,
  idHash: string,
): Promise<SessionRow | undefined> {
  const row = await db.selectFrom("agent_sessions as s")
    .innerJoin("agents as a", "a.id", "s.agent_id")
    .select([
      "s.id_hash as idHash",
      "s.agent_id as agentId",
      "a.account_id as accountId",
      "a.name",
      "a.visibility",
      "s.created_at as createdAt",
      "s.last_seen_at as lastSeenAt",
      "s.expires_at as expiresAt",
    ])
    .where("s.id_hash", "=", idHash)
    .where("a.revoked_at", "is", null)
    .executeTakeFirst();
  return row && { ...row, visibility: row.visibility as AgentVisibility };
}

/** Moves last_seen_at to `at` unless it is newer than `staleBefore` (a write a minute at most). */
export async function touchSession(
  db: Executor,
  idHash: string,
  at: string,
  staleBefore: string,
): Promise<void> {
  await db.updateTable("agent_sessions").set({ last_seen_at: at })
    .where("id_hash", "=", idHash)
    .where("last_seen_at", "<=", staleBefore)
    .execute();
}

export async function deleteSession(
  db: Executor,
  idHash: string,
): Promise<void> {
  await db.deleteFrom("agent_sessions").where("id_hash", "=", idHash)
    .execute();
}

/** Ends every session and unused link of an agent (revoke). */
export async function deleteAgentSessions(
  db: Executor,
  agentId: string,
): Promise<void> {
  await db.deleteFrom("agent_sessions").where("agent_id", "=", agentId)
    .execute();
  await db.deleteFrom("agent_login_links").where("agent_id", "=", agentId)
    .execute();
}

/** Deletes sessions and links past their end; returns how many rows went. */
export async function pruneSessions(
  db: Executor,
  input: { now: string; idleBefore: string },
): Promise<number> {
  const sessions = await db.deleteFrom("agent_sessions")
    .where((eb) =>
      eb.or([
        eb("expires_at", "<=", input.now),
        eb("last_seen_at", "<=", input.idleBefore),
      ])
    ).executeTakeFirst();
  const links = await db.deleteFrom("agent_login_links")
    .where("expires_at", "<=", input.now).executeTakeFirst();
  return Number(sessions.numDeletedRows) + Number(links.numDeletedRows);
}
