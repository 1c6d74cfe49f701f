/** SQL of what the refresh stores: posts with their metrics, daily snapshots, the comments cache. */
import type {
  Executor,
  SocialPostsTable,
  SocialSnapshotsTable,
} from "../../db/schema.ts";
import { fromJson, toJson } from "../../db/json.ts";
import { sameCount, sameRow } from "../../db/row_guard.ts";
import type { RawBuilder } from "kysely";
import type { CursorPosition } from "../pagination.ts";
import type {
  Metrics,
  SocialNetwork,
  SocialPost,
  SocialPostType,
} from "./social.ts";

function toPost(r: SocialPostsTable): SocialPost {
  return {
    id: r.id,
    socialAccountId: r.social_account_id,
    network: r.network as SocialNetwork,
    type: r.type as SocialPostType,
    permalink: r.permalink,
    caption: r.caption,
    mediaUrl: r.media_url,
    thumbnailUrl: r.thumbnail_url,
    publishedAt: r.published_at,
    expiresAt: r.expires_at,
    metrics: fromJson<Metrics>(r.metrics, {}),
    metricsUpdatedAt: r.metrics_updated_at,
  };
}

export async function findPostRow(
  db: Executor,
  socialAccountId: string,
  postId: string,
): Promise<SocialPost | undefined> {
  const r = await db.selectFrom("social_posts").selectAll()
    .where("social_account_id", "=", socialAccountId).where("id", "=", postId)
    .executeTakeFirst();
  return r ? toPost(r) : undefined;
}

/** A post of the account by upstream id; another account's post is not found. */
export async function findPost(
  db: Executor,
  accountId: string,
  postId: string,
): Promise<SocialPost | undefined> {
  const r = await db.selectFrom("social_posts").selectAll()
    .where("account_id", "=", accountId).where("id", "=", postId)
    .executeTakeFirst();
  return r ? toPost(r) : undefined;
}

/**
 * A guard (PlannedWrites.expectRow): the post is as read (its metrics
 * written at the same time), or still absent when it was.
 */
export function samePost(
  key: { socialAccountId: string; postId: string },
  previous: SocialPost | undefined,
): RawBuilder<unknown> {
  const where = { social_account_id: key.socialAccountId, id: key.postId };
  return previous
    ? sameRow("social_posts", {
      ...where,
      metrics_updated_at: previous.metricsUpdatedAt,
    })
    : sameCount("social_posts", where, 0);
}

export async function upsertPost(
  db: Executor,
  row: SocialPostsTable,
): Promise<void> {
  const { social_account_id: _a, id: _i, created_at: _c, ...changes } = row;
  await db.insertInto("social_posts").values(row)
    .onConflict((oc) =>
      oc.columns(["social_account_id", "id"]).doUpdateSet(changes)
    )
    .execute();
}

export async function updatePostMetrics(
  db: Executor,
  key: { socialAccountId: string; postId: string },
  input: { metrics: Metrics; at: string },
): Promise<void> {
  await db.updateTable("social_posts").set({
    metrics: toJson(input.metrics),
    metrics_updated_at: input.at,
    updated_at: input.at,
  }).where("social_account_id", "=", key.socialAccountId)
    .where("id", "=", key.postId).execute();
}

export interface PostFilter {
  accountId: string;
  network?: SocialNetwork;
  type?: SocialPostType;
  /** Inclusive bounds on publication time. */
  since?: string;
  until?: string;
}

/** Newest first by (published_at, id), after the cursor position. */
export async function listPosts(
  db: Executor,
  filter: PostFilter,
  page: { limit: number; after?: CursorPosition },
): Promise<SocialPost[]> {
  let q = db.selectFrom("social_posts").selectAll()
    .where("account_id", "=", filter.accountId);
  if (filter.network) q = q.where("network", "=", filter.network);
  if (filter.type) q = q.where("type", "=", filter.type);
  if (filter.since) q = q.where("published_at", ">=", filter.since);
  if (filter.until) q = q.where("published_at", "<=", filter.until);
  const after = page.after;
  if (after) {
    q = q.where((eb) =>
      eb.or([
        eb("published_at", "<", after.at),
        eb.and([eb("published_at", "=", after.at), eb("id", "<", after.id)]),
      ])
    );
  }
  const rows = await q.orderBy("published_at", "desc").orderBy("id", "desc")
    .limit(page.limit).execute();
  return rows.map(toPost);
}

/** Posts published in [since, until] of one social account, with their metrics. */
export async function postsOfPeriod(
  db: Executor,
  socialAccountId: string,
  period: { since: string; until: string },
): Promise<SocialPost[]> {
  const rows = await db.selectFrom("social_posts").selectAll()
    .where("social_account_id", "=", socialAccountId)
    .where("published_at", ">=", period.since)
    .where("published_at", "<=", period.until).execute();
  return rows.map(toPost);
}

/** One snapshot per account and day: a later one the same day replaces it. */
export async function upsertSnapshot(
  db: Executor,
  row: SocialSnapshotsTable,
): Promise<void> {
  const { social_account_id: _a, date: _d, ...changes } = row;
  await db.insertInto("social_snapshots").values(row)
    .onConflict((oc) =>
      oc.columns(["social_account_id", "date"]).doUpdateSet(changes)
    )
    .execute();
}

/** Snapshots with dates in [since, until] (YYYY-MM-DD), oldest first. */
export async function listSnapshots(
  db: Executor,
  socialAccountId: string,
  dates: { since: string; until: string },
): Promise<SocialSnapshotsTable[]> {
  return await db.selectFrom("social_snapshots").selectAll()
    .where("social_account_id", "=", socialAccountId)
    .where("date", ">=", dates.since).where("date", "<=", dates.until)
    .orderBy("date").execute();
}

export async function latestSnapshot(
  db: Executor,
  socialAccountId: string,
): Promise<SocialSnapshotsTable | undefined> {
  return await db.selectFrom("social_snapshots").selectAll()
    .where("social_account_id", "=", socialAccountId)
    .orderBy("date", "desc").limit(1).executeTakeFirst();
}

export async function readCommentCache(
  db: Executor,
  socialAccountId: string,
  postId: string,
): Promise<
  { fetchedLimit: number; body: string; fetchedAt: string } | undefined
> {
  const r = await db.selectFrom("social_comment_cache").selectAll()
    .where("social_account_id", "=", socialAccountId)
    .where("post_id", "=", postId).executeTakeFirst();
  return r
    ? { fetchedLimit: r.fetched_limit, body: r.body, fetchedAt: r.fetched_at }
    : undefined;
}

export async function writeCommentCache(
  db: Executor,
  key: { socialAccountId: string; postId: string },
  input: { fetchedLimit: number; body: string; at: string },
): Promise<void> {
  const changes = {
    fetched_limit: input.fetchedLimit,
    body: input.body,
    fetched_at: input.at,
  };
  await db.insertInto("social_comment_cache").values({
    social_account_id: key.socialAccountId,
    post_id: key.postId,
    ...changes,
  }).onConflict((oc) =>
    oc.columns(["social_account_id", "post_id"]).doUpdateSet(changes)
  ).execute();
}
