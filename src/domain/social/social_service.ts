/** Use cases of the /social endpoints and of `social connect`. */
import { fromJson, toJson } from "../../db/json.ts";
import { toDbTime } from "../../db/time.ts";
import { AppError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import type { SocialClient } from "../../upstream/social_client.ts";
import {
  fetchComments,
  fetchPost,
  type UpstreamComment,
} from "../../upstream/social_graph.ts";
import { type CursorPage, decodeCursor, toCursorPage } from "../pagination.ts";
import { isGoneUpstream, readInsights } from "./insights.ts";
import { isQuotaError, quotaGet, type SocialDeps } from "./quota_service.ts";
import { enqueueRefresh, queueRefresh, storePosts } from "./refresh_service.ts";
import {
  applyInsights,
  dayBound,
  deliveredSources,
  POST_INSIGHTS,
  type SocialAccount,
  type SocialNetwork,
  type SocialPost,
} from "./social.ts";
import * as repo from "./social_repo.ts";
import * as postRepo from "./social_post_repo.ts";

export type { SocialDeps };

export interface ConnectInput {
  accountId: string;
  network: SocialNetwork;
  upstreamId: string;
  username: string;
  name?: string;
  accessToken: string;
}

/** Connects an IG account or FB Page (CLI); the token is sealed at rest and a first refresh is queued. */
export async function connectSocialAccount(
  deps: SocialDeps,
  input: ConnectInput,
): Promise<SocialAccount> {
  if (!/^[0-9]{1,32}$/.test(input.upstreamId)) {
    throw new AppError(
      "VALIDATION_ERROR",
      `Cannot connect social account: upstream id "${input.upstreamId}" is not a numeric Graph id`,
    );
  }
  const now = deps.clock.now();
  const at = toDbTime(now);
  const sealed = await deps.secrets.seal(input.accessToken);
  // The account and its first refresh in one batch (on libSQL), guarded on
  // the upstream account still unconnected: a connect of it elsewhere
  // meanwhile plans this again, and then it is refused.
  return await deps.commits.runPlanned(async (db, writes) => {
    const existing = await repo.findSocialAccountByUpstream(
      db,
      input.accountId,
      input,
    );
    if (existing) {
      throw new AppError(
        "VALIDATION_ERROR",
        `Cannot connect social account: ${input.network} "${input.upstreamId}" is already connected as "${existing.id}"`,
      );
    }
    writes.expectRow(repo.notConnected(input.accountId, input));
    const account = await repo.insertSocialAccount(writes.db, {
      id: newId(),
      account_id: input.accountId,
      network: input.network,
      upstream_id: input.upstreamId,
      username: input.username,
      name: input.name ?? null,
      access_token_enc: sealed,
      quota_window_start: null,
      quota_used: 0,
      blocked_until: null,
      refresh_state: null,
      last_refreshed_at: null,
      created_at: at,
      updated_at: at,
    });
    await enqueueRefresh(writes.db, account.id, {
      key: `connect:${at}`,
      now,
    });
    return () => account;
  });
}

export interface PostView extends SocialPost {
  channelUsername: string;
}

async function withUsernames(
  deps: SocialDeps,
  accountId: string,
  posts: SocialPost[],
): Promise<PostView[]> {
  const accounts = await repo.listSocialAccounts(deps.db, { accountId });
  const names = new Map(accounts.map((a) => [a.id, a.username]));
  return posts.map((p) => ({
    ...p,
    channelUsername: names.get(p.socialAccountId) ?? "",
  }));
}

export interface ListPostsInput extends postRepo.PostFilter {
  limit: number;
  cursor?: string;
  /** Queue a background refresh of the account's social accounts (the answer stays cached data). */
  refresh?: boolean;
}

/** The account's stored posts, newest first; `refresh` queues one refresh per social account. */
export async function listSocialPosts(
  deps: SocialDeps,
  input: ListPostsInput,
): Promise<CursorPage<PostView>> {
  const after = input.cursor ? decodeCursor(input.cursor) : undefined;
  if (input.refresh) {
    const now = deps.clock.now();
    const accounts = await repo.listSocialAccounts(deps.db, {
      accountId: input.accountId,
      network: input.network,
    });
    for (const a of accounts) {
      await queueRefresh(deps.db, a.id, {
        key: `request:${toDbTime(now)}`,
        now,
      });
    }
  }
  const filter = {
    ...input,
    since: input.since ? dayBound(input.since, "start") : undefined,
    until: input.until ? dayBound(input.until, "end") : undefined,
  };
  const rows = await postRepo.listPosts(deps.db, filter, {
    limit: input.limit + 1,
    after,
  });
  const page = toCursorPage(rows, input.limit, (p) => ({
    at: p.publishedAt,
    id: p.id,
  }));
  return {
    ...page,
    items: await withUsernames(deps, input.accountId, page.items),
  };
}

/** A read of one post of the account by upstream id; `refresh` goes to the upstream. */
export interface PostRead {
  accountId: string;
  postId: string;
  refresh?: boolean;
  client?: SocialClient;
}

/** The post, or NOT_FOUND (also for another account's post). */
async function requirePost(
  deps: SocialDeps,
  input: PostRead,
): Promise<SocialPost> {
  const post = await postRepo.findPost(deps.db, input.accountId, input.postId);
  if (!post) {
    throw new AppError(
      "NOT_FOUND",
      `Cannot find social post "${input.postId}"`,
    );
  }
  return post;
}

/**
 * One post by upstream id; `refresh` reads it from the upstream at once
 * (the post, then its insights: 1 to 2 calls of the quota; 429 when none is
 * left for the first).
 */
export async function getSocialPost(
  deps: SocialDeps,
  input: PostRead,
): Promise<PostView> {
  const post = await requirePost(deps, input);
  if (input.refresh) await refreshPost(deps, post, input.client);
  const fresh = await postRepo.findPostRow(
    deps.db,
    post.socialAccountId,
    post.id,
  );
  return (await withUsernames(deps, input.accountId, [fresh!]))[0]!;
}

async function refreshPost(
  deps: SocialDeps,
  post: SocialPost,
  client: SocialClient | undefined,
): Promise<void> {
  const account =
    (await repo.findSocialAccount(deps.db, post.socialAccountId))!;
  const get = await quotaGet(deps, account.id, { mode: "live", client });
  const upstream = await fetchPost(get, account.network, post.id).catch(
    (err) => {
      // Deleted, or a story no longer served: the stored post stays as it is.
      if (isGoneUpstream(err)) return null;
      throw err;
    },
  );
  if (!upstream) return;
  const at = toDbTime(deps.clock.now());
  await storePosts(deps.db, account, { posts: [upstream], at });
  const sources = deliveredSources(
    POST_INSIGHTS[account.network][upstream.type] ?? [],
    post.metrics,
  );
  const expired = post.expiresAt !== null &&
    Date.parse(post.expiresAt) <= deps.clock.now().getTime();
  if (sources.length === 0 || expired) return;
  try {
    const read = await readInsights(get, post.id, {
      metrics: sources.map((s) => s.metric),
      perMetric: false,
    });
    const stored = await postRepo.findPostRow(deps.db, account.id, post.id);
    await postRepo.updatePostMetrics(deps.db, {
      socialAccountId: account.id,
      postId: post.id,
    }, { metrics: applyInsights(stored!.metrics, sources, read.values), at });
  } catch (err) {
    // No second call left, or a metric needs the one-by-one read of the
    // background refresh: the insight metrics keep their last values.
    if (
      isQuotaError(err) ||
      (err as { upstreamCode?: number }).upstreamCode === 100
    ) {
      return;
    }
    throw err;
  }
}

export const COMMENTS_CACHE_MS = 10 * 60 * 1_000;

export interface CommentsView {
  postId: string;
  network: SocialNetwork;
  total: number;
  comments: UpstreamComment[];
  cached: boolean;
}

/** First-level comments with replies: a live read cached 10 minutes; `refresh` bypasses the cache. */
export async function getSocialComments(
  deps: SocialDeps,
  input: PostRead & { limit: number },
): Promise<CommentsView> {
  const post = await requirePost(deps, input);
  const now = deps.clock.now();
  const cache = await postRepo.readCommentCache(
    deps.db,
    post.socialAccountId,
    post.id,
  );
  const fresh = cache &&
    now.getTime() - Date.parse(cache.fetchedAt) < COMMENTS_CACHE_MS;
  if (!input.refresh && fresh) {
    const body = fromJson<{ total: number; comments: UpstreamComment[] }>(
      cache.body,
      { total: 0, comments: [] },
    );
    // A cache read with a smaller limit serves only when it already holds every comment.
    if (
      cache.fetchedLimit >= input.limit ||
      body.comments.length < cache.fetchedLimit
    ) {
      return {
        postId: post.id,
        network: post.network,
        total: body.total,
        comments: body.comments.slice(0, input.limit),
        cached: true,
      };
    }
  }
  const get = await quotaGet(deps, post.socialAccountId, {
    mode: "live",
    client: input.client,
  });
  const read = await fetchComments(get, {
    network: post.network,
    postId: post.id,
    limit: input.limit,
  }).catch((err) => {
    if (!isGoneUpstream(err)) throw err;
    throw new AppError(
      "NOT_FOUND",
      `Cannot read the comments of social post "${post.id}": the upstream no longer serves it`,
    );
  });
  const total = read.total ?? post.metrics.comments ?? read.comments.length;
  await postRepo.writeCommentCache(deps.db, {
    socialAccountId: post.socialAccountId,
    postId: post.id,
  }, {
    fetchedLimit: input.limit,
    body: toJson({ total, comments: read.comments }),
    at: toDbTime(now),
  });
  return {
    postId: post.id,
    network: post.network,
    total,
    comments: read.comments,
    cached: false,
  };
}
