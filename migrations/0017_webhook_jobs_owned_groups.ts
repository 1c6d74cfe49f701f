// deno-lint-ignore-file no-explicit-any
// Frozen once landed: never edit, add a new migration instead.
import { type Kysely, sql } from "kysely";

/**
 * A webhook attempt's job group names its account: `<accountId>/<webhookId>`
 * instead of `<webhookId>`, so the webhook pool caps attempts in flight per
 * account and deals free slots round-robin by account, then by subscription
 * (src/jobs/queue_ring.ts). The attempts queued or running when this runs
 * are moved to the new key; one left with the old key (a running attempt
 * put back later by an instance of the previous version) is served as an
 * account of its own. One pass over the jobs table, once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`update jobs set group_key = (
      select w.account_id || '/' || w.id from webhooks as w
      where w.id = jobs.group_key)
    where kind = 'webhook.deliver' and group_key is not null
      and instr(group_key, '/') = 0
      and state in ('available', 'retryable', 'running')
      and exists (select 1 from webhooks as w where w.id = jobs.group_key)`
    .execute(db);
}
