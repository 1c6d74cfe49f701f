// deno-lint-ignore-file no-explicit-any
// Frozen once landed: never edit, add a new migration instead.
import { type Kysely, sql } from "kysely";

/**
 * Outbound webhooks: subscriptions, and one delivery row per attempt (a
 * pending row is the next attempt, a skipped row an event that arrived while
 * the subscription was disabled). Jobs gain a group key so that one slow
 * subscription can be held to its share of the webhook workers.
 */
const STATEMENTS = [
  `create table webhooks (
    id text primary key,
    account_id text not null references accounts(id) on delete cascade,
    url text not null,
    events text not null,
    description text,
    enabled integer not null default 1,
    header_names text not null default '[]',
    headers_enc text,
    secret_enc text not null,
    consecutive_failures integer not null default 0,
    last_delivery_at text,
    last_delivery_status text,
    disabled_at text,
    disabled_reason text,
    created_at text not null,
    updated_at text not null
  ) strict`,
  `create index webhooks_account_idx on webhooks (account_id, created_at, id)`,
  `create table webhook_deliveries (
    id text primary key,
    account_id text not null references accounts(id) on delete cascade,
    webhook_id text not null references webhooks(id) on delete cascade,
    root_id text not null,
    event_id text not null,
    event text not null,
    subject_id text,
    after_root_id text,
    kind text not null check (kind in ('event','test','replay')),
    attempt integer not null,
    status text not null check (status in ('pending','success','failed','skipped')),
    payload_hash text not null,
    status_code integer,
    outcome text,
    error_message text,
    duration_ms integer,
    response_excerpt text,
    redirect_location text,
    redirect_status_code integer,
    first_attempt_at text,
    attempted_at text,
    next_attempt_at text,
    created_at text not null
  ) strict`,
  `create index webhook_deliveries_list_idx
    on webhook_deliveries (webhook_id, created_at desc, id desc)`,
  `create index webhook_deliveries_status_idx
    on webhook_deliveries (webhook_id, status, created_at desc, id desc)`,
  `create index webhook_deliveries_chain_idx
    on webhook_deliveries (root_id) where status = 'pending'`,
  `create index webhook_deliveries_subject_idx
    on webhook_deliveries (webhook_id, subject_id)
    where status = 'pending' and event = 'contact.created'`,
  `create index webhook_deliveries_after_idx
    on webhook_deliveries (after_root_id)
    where status = 'pending' and after_root_id is not null`,
  `create index webhook_deliveries_event_idx
    on webhook_deliveries (event_id) where status = 'pending'`,
  `create index webhook_deliveries_created_idx on webhook_deliveries (created_at)`,
  `alter table jobs add column group_key text`,
  `create index jobs_group_idx on jobs (group_key, priority, run_at)
    where state in ('available','retryable') and group_key is not null`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of STATEMENTS) {
    await sql.raw(statement).execute(db);
  }
}
