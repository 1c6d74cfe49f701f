import type { Db } from "../../db/schema.ts";
import type { GroupCommit } from "../../db/group_commit.ts";
import type { Clock } from "../../clock.ts";
import type { SecretBox } from "../../crypto.ts";
import { AppError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import { toDbTime } from "../../db/time.ts";
import { EgressError } from "../../egress/http_client.ts";
import type { Resolver } from "../../egress/resolver.ts";
import { checkUrl } from "../../egress/target.ts";
import {
  headerProblems,
  MAX_URL_LENGTH,
  uniqueEvents,
  type Webhook,
  type WebhookEvent,
} from "./webhook.ts";
import { newWebhookSecret } from "./envelope.ts";
import { skipQueue } from "./delivery_repo.ts";
import * as repo from "./webhook_repo.ts";

export interface WebhookDeps {
  db: Db;
  clock: Clock;
  secrets: SecretBox;
  config: {
    webhookAllowHttp: boolean;
    webhookAllowPrivateNetworks: boolean;
    webhookMaxSubscriptionsPerAccount: number;
  };
  resolver?: Resolver | undefined;
}

export interface WebhookInput {
  url: string;
  events: WebhookEvent[];
  description?: string | null | undefined;
  enabled?: boolean | undefined;
  headers?: Record<string, string> | null | undefined;
}

/** PATCH: undefined keeps a field; `headers` null or `{}` deletes them. */
export type WebhookChanges = Partial<WebhookInput>;

function invalid(path: string, message: string): AppError {
  return new AppError(
    "VALIDATION_ERROR",
    `Invalid request body "${path}": ${message}`,
    { details: [{ path, message }] },
  );
}

/** Throws VALIDATION_ERROR naming the field unless `url` is a target we may deliver to. */
async function checkTargetUrl(deps: WebhookDeps, url: string): Promise<void> {
  if (url.length > MAX_URL_LENGTH) {
    throw invalid("url", `must be at most ${MAX_URL_LENGTH} characters`);
  }
  try {
    await checkUrl(url, {
      allowHttp: deps.config.webhookAllowHttp,
      allowPrivate: deps.config.webhookAllowPrivateNetworks,
      ...(deps.resolver ? { resolver: deps.resolver } : {}),
    });
  } catch (err) {
    if (err instanceof EgressError) throw invalid("url", err.message);
    throw err;
  }
}

/** The sealed header set and its names; null and `{}` mean none. */
async function sealHeaders(
  deps: WebhookDeps,
  headers: Record<string, string> | null,
): Promise<{ header_names: string; headers_enc: string | null }> {
  const problems = headerProblems(headers ?? {});
  if (problems.length > 0) {
    throw invalid(problems[0]!.path, problems[0]!.message);
  }
  const names = Object.keys(headers ?? {});
  return {
    header_names: JSON.stringify(names),
    headers_enc: names.length
      ? await deps.secrets.seal(JSON.stringify(headers))
      : null,
  };
}

function notFound(id: string): AppError {
  return new AppError("WEBHOOK_NOT_FOUND", `Cannot find webhook "${id}"`);
}

/** The subscription, or WEBHOOK_NOT_FOUND (also for another account's id). */
export async function getWebhook(
  deps: { db: Db },
  ref: { accountId: string; id: string },
): Promise<Webhook> {
  const row = await repo.findWebhookRow(deps.db, ref.accountId, ref.id);
  if (!row) throw notFound(ref.id);
  return repo.toWebhook(row);
}

/** Every subscription of the account, oldest first. */
export async function listWebhooks(
  deps: { db: Db },
  accountId: string,
): Promise<Webhook[]> {
  return (await repo.listWebhookRows(deps.db, accountId)).map(repo.toWebhook);
}

/**
 * Creates a subscription; the secret is returned here and at rotation only.
 * WEBHOOK_LIMIT_REACHED when the account already has
 * `webhookMaxSubscriptionsPerAccount` (each one fans every event out once
 * more, and slow receivers share their account's webhook slots).
 */
export async function createWebhook(
  deps: WebhookDeps,
  accountId: string,
  input: WebhookInput,
): Promise<{ webhook: Webhook; secret: string }> {
  await checkTargetUrl(deps, input.url);
  const secret = newWebhookSecret();
  const now = toDbTime(deps.clock.now());
  const enabled = input.enabled ?? true;
  const id = newId();
  const limit = deps.config.webhookMaxSubscriptionsPerAccount;
  const inserted = await repo.insertWebhookWithin(deps.db, {
    id,
    account_id: accountId,
    url: input.url,
    events: JSON.stringify(uniqueEvents(input.events)),
    description: input.description ?? null,
    enabled: enabled ? 1 : 0,
    ...await sealHeaders(deps, input.headers ?? null),
    secret_enc: await deps.secrets.seal(secret),
    consecutive_failures: 0,
    last_delivery_at: null,
    last_delivery_status: null,
    disabled_at: enabled ? null : now,
    disabled_reason: null,
    created_at: now,
    updated_at: now,
  }, limit);
  if (!inserted) {
    throw new AppError(
      "WEBHOOK_LIMIT_REACHED",
      `Cannot create webhook: the account already has ${limit} subscriptions, the most allowed (WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT)`,
      { details: { limit } },
    );
  }
  return { webhook: await getWebhook(deps, { accountId, id }), secret };
}

/**
 * Changes only the given fields. `enabled: true` clears an auto-disable and
 * resets the failure counter; `enabled: false` disables by hand.
 */
export async function updateWebhook(
  deps: WebhookDeps & {
    /** A disabled subscription's queue is skipped in atomic units (skipQueue). */
    commits: Pick<GroupCommit, "runPlanned">;
  },
  ref: { accountId: string; id: string },
  changes: WebhookChanges,
): Promise<Webhook> {
  const current = await getWebhook(deps, ref);
  const now = toDbTime(deps.clock.now());
  const set: Parameters<typeof repo.updateWebhookRow>[2] = { updated_at: now };
  if (changes.url !== undefined) {
    await checkTargetUrl(deps, changes.url);
    set.url = changes.url;
  }
  if (changes.events !== undefined) {
    set.events = JSON.stringify(uniqueEvents(changes.events));
  }
  if (changes.description !== undefined) set.description = changes.description;
  if (changes.headers !== undefined) {
    Object.assign(set, await sealHeaders(deps, changes.headers));
  }
  if (changes.enabled === true) {
    Object.assign(set, {
      enabled: 1,
      consecutive_failures: 0,
      disabled_at: null,
      disabled_reason: null,
    });
  } else if (changes.enabled === false && current.enabled) {
    Object.assign(set, { enabled: 0, disabled_at: now, disabled_reason: null });
  }
  if (!await repo.updateWebhookRow(deps.db, ref, set)) throw notFound(ref.id);
  if (set.enabled === 0) await skipQueue(deps, ref.id, now);
  return await getWebhook(deps, ref);
}

/** Deletes a subscription and its delivery log; queued attempts are dropped. */
export async function deleteWebhook(
  deps: { db: Db },
  ref: { accountId: string; id: string },
): Promise<{ id: string; deleted: true }> {
  if (!await repo.deleteWebhookRow(deps.db, ref)) throw notFound(ref.id);
  return { id: ref.id, deleted: true };
}

/**
 * A new secret, returned once; the old one is dead at once: every attempt
 * from now on, queued retries included, is signed with the new one.
 */
export async function rotateWebhookSecret(
  deps: WebhookDeps,
  ref: { accountId: string; id: string },
): Promise<{ webhook: Webhook; secret: string }> {
  await getWebhook(deps, ref);
  const secret = newWebhookSecret();
  const updated = await repo.updateWebhookRow(deps.db, ref, {
    secret_enc: await deps.secrets.seal(secret),
    updated_at: toDbTime(deps.clock.now()),
  });
  if (!updated) throw notFound(ref.id);
  return { webhook: await getWebhook(deps, ref), secret };
}
