// deno-lint-ignore-file no-explicit-any
// Frozen once landed: never edit, add a new migration instead.
import { type Kysely, sql } from "kysely";

/**
 * The inbox panel (issue 29): agents act, not only read.
 *
 * - `messages.agent_id`: the agent that sent a message (through its user
 *   token or a panel session); null for API keys and everything upstream.
 * - `agent_login_links`: one-time sign-in links (`agents login-link`), only
 *   a SHA-256 of the token kept; used once, within 10 minutes.
 * - `agent_sessions`: panel sessions, only a SHA-256 of the cookie's opaque
 *   id kept; they end on logout, after 12 h idle or 30 days, and with the
 *   agent (revoke). No cache-epoch trigger: a session is read from the
 *   database on each request (one point read), so a logout counts at once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table messages add column agent_id text`.execute(db);
  await sql`create table agent_login_links (
    token_hash text primary key,
    agent_id text not null references agents(id) on delete cascade,
    created_at text not null,
    expires_at text not null,
    used_at text
  ) strict`.execute(db);
  await sql`create index agent_login_links_expiry_idx
    on agent_login_links (expires_at)`.execute(db);
  await sql`create table agent_sessions (
    id_hash text primary key,
    agent_id text not null references agents(id) on delete cascade,
    created_at text not null,
    last_seen_at text not null,
    expires_at text not null
  ) strict`.execute(db);
  await sql`create index agent_sessions_agent_idx on agent_sessions (agent_id)`
    .execute(db);
  await sql`create index agent_sessions_expiry_idx on agent_sessions (expires_at)`
    .execute(db);
}
