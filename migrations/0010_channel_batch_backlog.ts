// deno-lint-ignore-file no-explicit-any
// Frozen once landed: never edit, add a new migration instead.
import { type Kysely, sql } from "kysely";

/**
 * The batch pacer's backlog figure without a count over the backlog: each
 * batch counted its channel's queued batch sends through
 * messages_channel_backlog_idx, a cost that grew with the backlog (at
 * 50,000 queued, about a tenth of the server's CPU per accepted message).
 *
 * channel_batch_backlog keeps that count per channel; triggers maintain it
 * in the same statement as the message write, so it is right whatever code
 * path inserts, updates or deletes a message, and it commits or rolls back
 * with it (a savepoint of a group commit included). A message counts while
 * lane = 'batch', status = 'queued' and it has a channel.
 *
 * With the count gone, messages_channel_backlog_idx has no reader (no other
 * query filters messages by channel_id) and goes: one index write fewer per
 * message insert and per status change.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table channel_batch_backlog (
    channel_id text primary key,
    queued integer not null
  ) strict`.execute(db);
  await sql`insert into channel_batch_backlog (channel_id, queued)
    select channel_id, count(*) from messages
    where lane = 'batch' and status = 'queued' and channel_id is not null
    group by channel_id`.execute(db);
  const counted = (row: "new" | "old") =>
    sql.raw(
      `${row}.lane = 'batch' and ${row}.status = 'queued' and ${row}.channel_id is not null`,
    );
  const add = (row: "new" | "old", delta: 1 | -1) =>
    sql.raw(`insert into channel_batch_backlog (channel_id, queued)
      values (${row}.channel_id, ${delta})
      on conflict (channel_id) do update set queued = queued + ${delta};`);
  await sql`create trigger messages_backlog_insert after insert on messages
    when ${counted("new")}
    begin ${add("new", 1)} end`.execute(db);
  await sql`create trigger messages_backlog_delete after delete on messages
    when ${counted("old")}
    begin ${add("old", -1)} end`.execute(db);
  await sql`create trigger messages_backlog_leave
    after update of lane, status, channel_id on messages
    when ${counted("old")}
      and not (${counted("new")} and new.channel_id = old.channel_id)
    begin ${add("old", -1)} end`.execute(db);
  await sql`create trigger messages_backlog_enter
    after update of lane, status, channel_id on messages
    when ${counted("new")}
      and not (${counted("old")} and new.channel_id = old.channel_id)
    begin ${add("new", 1)} end`.execute(db);
  await sql`drop index messages_channel_backlog_idx`.execute(db);
}
