// Panel sign-in without passwords: a one-time link (CLI `agents login-link`)
// starts a session whose opaque id lives only in an HttpOnly cookie.
import type { Db } from "../../db/schema.ts";
import type { GroupCommit } from "../../db/group_commit.ts";
import type { Clock } from "../../clock.ts";
import { AppError } from "../../errors.ts";
import { randomBase62, sha256HexSync } from "../../crypto.ts";
import { addMs, toDbTime } from "../../db/time.ts";
import type { Agent, Principal } from "./account.ts";
import { findActiveAgent } from "./account_repo.ts";
import * as repo from "./agent_session_repo.ts";

export interface SessionDeps {
  db: Db;
  clock: Clock;
  /** Sign-in uses the link up and starts the session atomically (runPlanned). */
  commits: Pick<GroupCommit, "runPlanned">;
}

/** A login link is good for this long, once. */
export const LOGIN_LINK_TTL_MS = 10 * 60 * 1000;
/** A session ends after this long without a request... */
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
/** ...and this long after sign-in, whatever its use. */
export const SESSION_MAX_MS = 30 * 24 * 60 * 60 * 1000;
/** last_seen_at is written at most this often (the idle timeout is counted from it). */
const SEEN_RESOLUTION_MS = 60_000;

/** Login-link tokens and session ids: 43 base62 characters (256 bits). */
const SECRET_LENGTH = 43;
const SECRET_REGEXP = /^[0-9A-Za-z]{43}$/;

function hashOf(secret: string): string {
  return sha256HexSync(secret);
}

/** Creates a one-time sign-in token for an active agent of the account; only its hash is stored. */
export async function createLoginLink(
  deps: SessionDeps,
  agent: Pick<Agent, "id" | "accountId">,
): Promise<{ token: string; expiresAt: string }> {
  if (!await findActiveAgent(deps.db, agent.accountId, agent.id)) {
    throw new AppError(
      "NOT_FOUND",
      `Cannot create a login link: agent "${agent.id}" is revoked or unknown`,
    );
  }
  const token = randomBase62(SECRET_LENGTH);
  const now = deps.clock.now();
  const expiresAt = toDbTime(addMs(now, LOGIN_LINK_TTL_MS));
  await repo.insertLoginLink(deps.db, {
    token_hash: hashOf(token),
    agent_id: agent.id,
    created_at: toDbTime(now),
    expires_at: expiresAt,
    used_at: null,
  });
  return { token, expiresAt };
}

/** The agent a link would sign in (without using it up), or undefined when it cannot. */
export async function peekLoginLink(
  deps: SessionDeps,
  token: string,
): Promise<{ agentId: string; name: string } | undefined> {
  if (!SECRET_REGEXP.test(token)) return undefined;
  return await repo.findUsableLink(
    deps.db,
    hashOf(token),
    toDbTime(deps.clock.now()),
  );
}

/**
 * Uses a login link up and starts a session for its agent; returns the
 * session id (for the cookie; only its hash is stored), or undefined when
 * the link is unknown, used, expired or its agent revoked. On libSQL the
 * link's use and the session go in one batch after the read, guarded: a
 * sign-in that used the link up meanwhile (or a revocation of its agent)
 * plans it again, and then it finds the link unusable.
 */
export async function signIn(
  deps: SessionDeps,
  token: string,
): Promise<{ sessionId: string; agentId: string } | undefined> {
  if (!SECRET_REGEXP.test(token)) return undefined;
  const now = deps.clock.now();
  const at = toDbTime(now);
  const hash = hashOf(token);
  return await deps.commits.runPlanned(async (db, writes) => {
    const usable = await repo.findUsableLink(db, hash, at);
    if (!usable) return () => undefined;
    await repo.consumeLink(writes.db, hash, at);
    writes.expectChanges(1);
    writes.expectRow(repo.activeAgent(usable.agentId));
    const sessionId = randomBase62(SECRET_LENGTH);
    await repo.insertSession(writes.db, {
      id_hash: hashOf(sessionId),
      agent_id: usable.agentId,
      created_at: at,
      last_seen_at: at,
      expires_at: toDbTime(addMs(now, SESSION_MAX_MS)),
    });
    const started = { sessionId, agentId: usable.agentId };
    return () => started;
  });
}

/** An agent principal signed in through a panel session. */
export type SessionPrincipal = Extract<Principal, { kind: "agent" }> & {
  sessionHash: string;
  name: string;
};

/**
 * The principal of a session id, or null when it is malformed, unknown,
 * signed out, idle for 12 h, older than 30 days, or its agent revoked.
 * Records the use at most once a minute.
 */
export async function authenticateSession(
  deps: SessionDeps,
  sessionId: string,
): Promise<SessionPrincipal | null> {
  if (!SECRET_REGEXP.test(sessionId)) return null;
  const hash = hashOf(sessionId);
  const session = await repo.findSession(deps.db, hash);
  if (!session) return null;
  const now = deps.clock.now();
  const at = toDbTime(now);
  const idleSince = toDbTime(addMs(now, -SESSION_IDLE_MS));
  if (session.expiresAt <= at || session.lastSeenAt <= idleSince) return null;
  const stale = toDbTime(addMs(now, -SEEN_RESOLUTION_MS));
  if (session.lastSeenAt <= stale) {
    await repo.touchSession(deps.db, hash, at, stale);
  }
  return {
    kind: "agent",
    accountId: session.accountId,
    agentId: session.agentId,
    visibility: session.visibility,
    sessionHash: hash,
    name: session.name,
  };
}

/** Ends a session (logout); unknown ids are ignored. */
export async function signOut(
  deps: SessionDeps,
  sessionHash: string,
): Promise<void> {
  await repo.deleteSession(deps.db, sessionHash);
}
