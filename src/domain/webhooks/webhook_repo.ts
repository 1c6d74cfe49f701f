import type { Executor, WebhooksTable } from "../../db/schema.ts";
import { fromJson } from "../../db/json.ts";
import { runPrecompiled } from "./delivery_repo.ts";
import {
  AUTO_DISABLE_AFTER,
  type Webhook,
  type WebhookEvent,
} from "./webhook.ts";

export function toWebhook(r: WebhooksTable): Webhook {
  return {
    id: r.id,
    accountId: r.account_id,
    url: r.url,
    events: fromJson<WebhookEvent[]>(r.events, []),
    description: r.description,
    enabled: r.enabled === 1,
    headerNames: fromJson<string[]>(r.header_names, []),
    consecutiveFailures: r.consecutive_failures,
    lastDeliveryAt: r.last_delivery_at,
    lastDeliveryStatus: r.last_delivery_status as Webhook["lastDeliveryStatus"],
    disabledAt: r.disabled_at,
    disabledReason: r.disabled_reason === "auto" ? "auto" : null,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/**
 * Inserts the subscription unless its account already has `limit`: the
 * count and the insert are one statement, so two creates at once cannot
 * both pass the count. False when the account was at its limit.
 */
export async function insertWebhookWithin(
  db: Executor,
  row: WebhooksTable,
  limit: number,
): Promise<boolean> {
  const columns = Object.keys(row) as (keyof WebhooksTable)[];
  const count = db.selectFrom("webhooks")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("account_id", "=", row.account_id);
  const r = await db.insertInto("webhooks").columns(columns)
    .expression(
      db.selectNoFrom((eb) => columns.map((c) => eb.val(row[c]).as(c)))
        .where(count, "<", limit),
    ).executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) === 1;
}

/** The account's subscription, or undefined (also for another account's id). */
export async function findWebhookRow(
  db: Executor,
  accountId: string,
  id: string,
): Promise<WebhooksTable | undefined> {
  return await db.selectFrom("webhooks").selectAll()
    .where("id", "=", id).where("account_id", "=", accountId)
    .executeTakeFirst();
}

/** Every subscription of the account, oldest first. */
export async function listWebhookRows(
  db: Executor,
  accountId: string,
): Promise<WebhooksTable[]> {
  return await db.selectFrom("webhooks").selectAll()
    .where("account_id", "=", accountId)
    .orderBy("created_at").orderBy("id").execute();
}

/** Writes the given columns; false when no such subscription exists in the account. */
export async function updateWebhookRow(
  db: Executor,
  ref: { accountId: string; id: string },
  changes: Partial<Omit<WebhooksTable, "id" | "account_id">>,
): Promise<boolean> {
  const r = await db.updateTable("webhooks").set(changes)
    .where("id", "=", ref.id).where("account_id", "=", ref.accountId)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Deletes a subscription with its delivery log; false when absent. */
export async function deleteWebhookRow(
  db: Executor,
  ref: { accountId: string; id: string },
): Promise<boolean> {
  const r = await db.deleteFrom("webhooks")
    .where("id", "=", ref.id).where("account_id", "=", ref.accountId)
    .executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}

/** What the fan-out needs of each subscription of an account. */
export async function subscribersOf(
  db: Executor,
  accountId: string,
): Promise<Array<{ id: string; events: string; enabled: number }>> {
  const { rows } = await runPrecompiled<
    { id: string; events: string; enabled: number }
  >(db, "select id, events, enabled from webhooks where account_id = ?", [
    accountId,
  ]);
  return rows;
}

const successTexts: string[] = [];
const pendingSuccessTexts: string[] = [];

/**
 * The counters of subscriptions whose attempts all succeeded (each with its
 * last attempt's time), in one statement: the failure count reset and the
 * last delivery noted. With `pending` (delivery row ids), only subscriptions
 * with one of those rows still pending are counted: in a write batch, where
 * the rows' results are written after it, an attempt another run already
 * recorded is not counted twice.
 */
export async function recordSuccesses(
  db: Executor,
  list: ReadonlyArray<{ id: string; at: string }>,
  pending?: readonly string[],
): Promise<void> {
  if (list.length === 0) return;
  const texts = pending ? pendingSuccessTexts : successTexts;
  const text = texts[list.length] ??= `with s(id, at) as (values ${
    Array(list.length).fill("(?, ?)").join(", ")
  })
    update webhooks set consecutive_failures = 0, last_delivery_at = s.at,
      last_delivery_status = 'success'
    from s where webhooks.id = s.id${
    pending
      ? ` and exists (select 1 from webhook_deliveries as d
        where d.id in (select value from json_each(?)) and d.webhook_id = s.id
          and d.status = 'pending')`
      : ""
  }`;
  await runPrecompiled(db, text, [
    ...list.flatMap((x) => [x.id, x.at]),
    ...(pending ? [JSON.stringify(pending)] : []),
  ]);
}

/**
 * recordDeliveryOutcome() of a failed attempt as two statements that read
 * no answer of each other (a write batch: src/db/planned_writes.ts), both
 * only while the attempt's row `deliveryId` is still pending (its result is
 * written after them): the failure counted, then the subscription disabled
 * when that count reached AUTO_DISABLE_AFTER. The second (the statement
 * recorded last) answers a row when it disabled the subscription.
 */
export async function countFailure(
  db: Executor,
  input: { webhookId: string; deliveryId: string; at: string },
): Promise<void> {
  const pending = `exists (select 1 from webhook_deliveries
    where id = ? and status = 'pending')`;
  await runPrecompiled(
    db,
    `update webhooks set consecutive_failures = consecutive_failures + 1,
      last_delivery_at = ?, last_delivery_status = 'failed'
    where id = ? and ${pending}`,
    [input.at, input.webhookId, input.deliveryId],
  );
  await runPrecompiled(
    db,
    `update webhooks set enabled = 0, disabled_at = ?, disabled_reason = 'auto',
      updated_at = ?
    where id = ? and enabled = 1 and consecutive_failures >= ? and ${pending}
    returning id`,
    [
      input.at,
      input.at,
      input.webhookId,
      AUTO_DISABLE_AFTER,
      input.deliveryId,
    ],
  );
}

/**
 * Records one attempt's result on the subscription's counters: a success
 * resets the failure count, a failure adds one and, at AUTO_DISABLE_AFTER,
 * disables an enabled subscription. True when this write disabled it.
 */
export async function recordDeliveryOutcome(
  db: Executor,
  id: string,
  outcome: { success: boolean; at: string },
): Promise<boolean> {
  if (outcome.success) {
    await recordSuccesses(db, [{ id, at: outcome.at }]);
    return false;
  }
  const counted = await db.updateTable("webhooks").set((eb) => ({
    consecutive_failures: eb("consecutive_failures", "+", 1),
    last_delivery_at: outcome.at,
    last_delivery_status: "failed",
  })).where("id", "=", id)
    .returning(["consecutive_failures", "enabled"]).executeTakeFirst();
  if (
    !counted || counted.enabled !== 1 ||
    counted.consecutive_failures < AUTO_DISABLE_AFTER
  ) {
    return false;
  }
  const r = await db.updateTable("webhooks").set({
    enabled: 0,
    disabled_at: outcome.at,
    disabled_reason: "auto",
    updated_at: outcome.at,
  }).where("id", "=", id).where("enabled", "=", 1).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Disabled subscriptions by reason ("auto" or "manual"), over every account. */
export async function countDisabled(
  db: Executor,
): Promise<{ auto: number; manual: number }> {
  const rows = await db.selectFrom("webhooks")
    .select([
      "disabled_reason",
      (eb) => eb.fn.countAll<number>().as("n"),
    ])
    .where("enabled", "=", 0).groupBy("disabled_reason").execute();
  let auto = 0;
  let manual = 0;
  for (const r of rows) {
    if (r.disabled_reason === "auto") auto += Number(r.n);
    else manual += Number(r.n);
  }
  return { auto, manual };
}
