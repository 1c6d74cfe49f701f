// deno-lint-ignore-file no-explicit-any
// Frozen once landed: never edit, add a new migration instead.
import { type Kysely, sql } from "kysely";

/**
 * Social (Instagram and Facebook) accounts with their durable upstream quota
 * and the place a background refresh stopped at; the posts and metrics that
 * refresh stores; one follower snapshot per account and day; and the
 * 10-minute cache of live comment reads.
 */
const STATEMENTS = [
  `create table social_accounts (
    id text primary key,
    account_id text not null references accounts(id) on delete cascade,
    network text not null check (network in ('instagram','facebook')),
    upstream_id text not null,
    username text not null,
    name text,
    access_token_enc text not null,
    quota_window_start text,
    quota_used integer not null default 0,
    blocked_until text,
    refresh_state text,
    last_refreshed_at text,
    created_at text not null,
    updated_at text not null
  ) strict`,
  `create unique index social_accounts_upstream_idx
    on social_accounts (account_id, network, upstream_id)`,
  `create table social_posts (
    social_account_id text not null references social_accounts(id) on delete cascade,
    id text not null,
    account_id text not null,
    network text not null,
    type text not null,
    permalink text,
    caption text,
    media_url text,
    thumbnail_url text,
    published_at text not null,
    expires_at text,
    metrics text not null,
    metrics_updated_at text not null,
    created_at text not null,
    updated_at text not null,
    primary key (social_account_id, id)
  ) strict`,
  `create index social_posts_list_idx
    on social_posts (account_id, published_at desc, id desc)`,
  `create index social_posts_id_idx on social_posts (account_id, id)`,
  `create table social_snapshots (
    social_account_id text not null references social_accounts(id) on delete cascade,
    date text not null,
    followers_count integer,
    follows_count integer,
    media_count integer,
    insights text not null,
    captured_at text not null,
    primary key (social_account_id, date)
  ) strict`,
  `create table social_comment_cache (
    social_account_id text not null references social_accounts(id) on delete cascade,
    post_id text not null,
    fetched_limit integer not null,
    body text not null,
    fetched_at text not null,
    primary key (social_account_id, post_id)
  ) strict`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of STATEMENTS) {
    await sql.raw(statement).execute(db);
  }
}
