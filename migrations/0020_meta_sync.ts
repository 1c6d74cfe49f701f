// deno-lint-ignore-file no-explicit-any
// Frozen once landed: never edit, add a new migration instead.
import { type Kysely, sql } from "kysely";

/**
 * Meta as the source of truth for what it owns (issue 28,
 * reference/meta-management.md):
 *
 * - `wabas`: one row per WhatsApp Business Account a channel belongs to,
 *   with the token `channels connect` was given, when its templates were
 *   last synced (and why the last sync failed), its Graph call budget
 *   (quota_* and blocked_until, the columns social_accounts keeps), and the
 *   state Meta's account_update webhooks set (ban, restrictions).
 * - `templates` become a cache of the WABA's templates, keyed by (waba_id,
 *   name, language): Meta's own status, parameter format, quality, rejected
 *   reason and categories beside the spec's fields; `source` tells a synced
 *   template from a hand-made one; *_event_at keep the time (Meta's
 *   entry[].time, unix seconds) of the last webhook applied to each aspect,
 *   so an older one changes nothing; refresh_requested_at bounds the
 *   refreshes a failing campaign can set off.
 * - `channels` gain what GET /{phone-number-id} says (throughput level,
 *   messaging limit, Meta's status and name status, whether the number is
 *   shared with the WhatsApp Business app) and when it was last asked, why
 *   a channel is disconnected and by whom (an operator's disconnect is never
 *   undone by Meta's news), and the WABA's restrictions copied onto each of
 *   its channels (the send path reads the channel, cached, and nothing else).
 * - `meta_events`: every management webhook change, stored with its value as
 *   received (ids read from the raw text), once per (WABA, field, value).
 *
 * Columns are added, not rebuilt: existing rows keep every value (templates
 * become `local`); each WABA existing channels name gets its row.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table wabas (
    id text primary key,
    account_id text not null references accounts(id) on delete cascade,
    name text,
    access_token_enc text,
    subscribed_at text,
    templates_synced_at text,
    templates_sync_attempted_at text,
    templates_sync_error text,
    quota_window_start text,
    quota_used integer not null default 0,
    blocked_until text,
    ban_state text,
    restrictions text not null default '[]',
    account_event_at integer,
    created_at text not null,
    updated_at text not null
  ) strict`.execute(db);
  await sql`create index wabas_account_idx on wabas (account_id)`.execute(db);
  // Every WABA a channel names, for the account of its first channel.
  await sql`insert or ignore into wabas (id, account_id, created_at, updated_at)
    select waba_id, account_id, created_at, created_at from channels
    order by created_at, id`.execute(db);
  for (
    const column of [
      "waba_id text",
      "source text not null default 'local'",
      "meta_status text",
      "parameter_format text",
      "quality_score text",
      "rejected_reason text",
      "previous_category text",
      "correct_category text",
      "flagged_at text",
      "synced_at text",
      "status_event_at integer",
      "quality_event_at integer",
      "category_event_at integer",
      "refresh_requested_at text",
    ]
  ) {
    await sql.raw(`alter table templates add column ${column}`).execute(db);
  }
  await sql`create unique index templates_waba_key_idx
    on templates (waba_id, name, language) where waba_id is not null`
    .execute(db);
  for (
    const column of [
      "throughput_level text",
      "messaging_limit text",
      "health_checked_at text",
      "on_biz_app integer not null default 0",
      "meta_status text",
      "name_status text",
      "status_reason text",
      "disconnected_by text",
      "restrictions text not null default '[]'",
      "name_event_at integer",
      "limit_event_at integer",
    ]
  ) {
    await sql.raw(`alter table channels add column ${column}`).execute(db);
  }
  await sql`create index channels_waba_idx on channels (waba_id)`.execute(db);
  await sql`create table meta_events (
    id text primary key,
    payload_id text,
    waba_id text not null,
    account_id text,
    field text not null,
    event text,
    subject text,
    entry_time integer,
    dedupe_key text not null unique,
    value text not null,
    outcome text not null,
    note text,
    received_at text not null
  ) strict`.execute(db);
  await sql`create index meta_events_waba_idx on meta_events (waba_id, received_at)`
    .execute(db);
}
