/**
 * The background refresh of one social account: profile and account
 * insights (one snapshot per day), IG stories, the media or posts pages, then
 * the insights of every post seen. It saves its place after every step, so a
 * spent quota or a restart resumes where it stopped instead of starting over.
 */
import { fromJson, toJson } from "../../db/json.ts";
import { toDbTime } from "../../db/time.ts";
import { RetryLater } from "../../errors.ts";
import { enqueue, hasOpenJob } from "../../jobs/queue.ts";
import type { Executor } from "../../db/schema.ts";
import type { PlannedWrites } from "../../db/planned_writes.ts";
import type { SocialClient } from "../../upstream/social_client.ts";
import {
  fetchPostsPage,
  fetchProfile,
  type SocialGet,
  type UpstreamPost,
  type UpstreamProfile,
} from "../../upstream/social_graph.ts";
import { readInsights } from "./insights.ts";
import { isQuotaError, quotaGet, type SocialDeps } from "./quota_service.ts";
import {
  ACCOUNT_INSIGHTS,
  applyFields,
  applyInsights,
  expiresAtOf,
  POST_INSIGHTS,
  type SocialAccount,
  type SocialPostType,
} from "./social.ts";
import * as repo from "./social_repo.ts";
import * as postRepo from "./social_post_repo.ts";

export const REFRESH_JOB = "social.refresh";
export const REFRESH_ALL_JOB = "social.refresh_all";
/** Pages of the media or posts edge read per refresh (25 posts each). */
export const MAX_PAGES = 8;

type Phase = "profile" | "account" | "stories" | "posts" | "insights";

export interface RefreshState {
  phase: Phase;
  profile: UpstreamProfile | null;
  /** Cursor of the next page of the current edge. */
  after: string | null;
  pages: number;
  /** Posts seen by this refresh whose insights are still to read. */
  pending: string[];
  /** The insights permission is missing: the remaining posts get null insights without a call. */
  denied: boolean;
  /** Metrics found unsupported for a post type: the next posts of that type do not ask for them. */
  unsupported?: Partial<Record<SocialPostType, string[]>>;
}

function initialState(): RefreshState {
  return {
    phase: "profile",
    profile: null,
    after: null,
    pages: 0,
    pending: [],
    denied: false,
  };
}

/** Queues a refresh unless one is already queued or running; `key` makes one job per tick or request. */
export async function queueRefresh(
  db: Executor,
  socialAccountId: string,
  input: { key: string; now: Date },
): Promise<boolean> {
  const open = await hasOpenJob(db, {
    kind: REFRESH_JOB,
    keyPrefix: `${REFRESH_JOB}:${socialAccountId}:`,
  });
  if (open) return false;
  return await enqueueRefresh(db, socialAccountId, input);
}

/** Queues a refresh without looking for an open one (a new account has none). */
export async function enqueueRefresh(
  db: Executor,
  socialAccountId: string,
  input: { key: string; now: Date },
): Promise<boolean> {
  const id = await enqueue(db, {
    kind: REFRESH_JOB,
    payload: { socialAccountId },
    uniqueKey: `${REFRESH_JOB}:${socialAccountId}:${input.key}`,
  }, input.now);
  return id !== null;
}

/** The cron tick's job: one refresh per social account per tick. */
export async function queueAllRefreshes(
  deps: Pick<SocialDeps, "db" | "clock">,
  tickKey: string,
): Promise<number> {
  let queued = 0;
  for (const account of await repo.listSocialAccounts(deps.db)) {
    const now = deps.clock.now();
    if (await queueRefresh(deps.db, account.id, { key: tickKey, now })) {
      queued++;
    }
  }
  return queued;
}

function postRow(account: SocialAccount, post: UpstreamPost, input: {
  previous: Awaited<ReturnType<typeof postRepo.findPostRow>>;
  at: string;
}) {
  return {
    social_account_id: account.id,
    id: post.id,
    account_id: account.accountId,
    network: account.network,
    type: post.type,
    permalink: post.permalink,
    caption: post.caption,
    media_url: post.mediaUrl,
    thumbnail_url: post.thumbnailUrl,
    published_at: post.publishedAt,
    expires_at: expiresAtOf(post),
    metrics: toJson(applyFields(input.previous?.metrics, post)),
    metrics_updated_at: input.at,
    created_at: input.at,
    updated_at: input.at,
  };
}

/**
 * Stores posts read from the upstream, keeping the insight metrics they
 * already had. With `writes` (a plan's), the writes are recorded there,
 * guarded on each post being as read on `db`.
 */
export async function storePosts(
  db: Executor,
  account: SocialAccount,
  input: { posts: UpstreamPost[]; at: string },
  writes?: PlannedWrites,
): Promise<void> {
  for (const post of input.posts) {
    const previous = await postRepo.findPostRow(db, account.id, post.id);
    writes?.expectRow(
      postRepo.samePost(
        { socialAccountId: account.id, postId: post.id },
        previous,
      ),
    );
    await postRepo.upsertPost(
      writes?.db ?? db,
      postRow(account, post, { previous, at: input.at }),
    );
  }
}

/** What a refresh step writes with its saved place: reads on `db`, writes on `writes`. */
type StepWork = (db: Executor, writes: PlannedWrites) => Promise<void>;

async function step(
  deps: SocialDeps,
  account: SocialAccount,
  get: SocialGet,
  state: RefreshState,
): Promise<RefreshState> {
  const at = toDbTime(deps.clock.now());
  // The step's writes and its place commit together (one batch on libSQL).
  const save = (next: RefreshState, work?: StepWork) =>
    deps.commits.runPlanned(async (db, writes) => {
      await work?.(db, writes);
      await repo.saveRefreshState(writes.db, account.id, {
        state: toJson(next),
        at,
      });
      return () => next;
    });
  switch (state.phase) {
    case "profile": {
      const profile = await fetchProfile(
        get,
        account.network,
        account.upstreamId,
      );
      return await save({ ...state, phase: "account", profile });
    }
    case "account": {
      const sources = ACCOUNT_INSIGHTS[account.network];
      const read = await readInsights(get, account.upstreamId, {
        metrics: sources.map((s) => s.metric),
        query: { period: "day" },
      });
      const insights: Record<string, number | null> = {};
      for (const s of sources) insights[s.key] = read.values[s.metric] ?? null;
      const phase = account.network === "instagram" ? "stories" : "posts";
      return await save(
        { ...state, phase },
        (_db, writes) =>
          postRepo.upsertSnapshot(writes.db, {
            social_account_id: account.id,
            date: at.slice(0, 10),
            followers_count: state.profile?.followersCount ?? null,
            follows_count: state.profile?.followsCount ?? null,
            media_count: state.profile?.mediaCount ?? null,
            insights: toJson(insights),
            captured_at: at,
          }),
      );
    }
    case "stories":
    case "posts": {
      const page = await fetchPostsPage(get, {
        network: account.network,
        objectId: account.upstreamId,
        edge: state.phase,
        after: state.after,
      });
      const pending = [...state.pending, ...page.posts.map((p) => p.id)];
      const pages = state.pages + 1;
      const more = page.after !== null && pages < MAX_PAGES;
      const next: RefreshState = more
        ? { ...state, after: page.after, pages, pending }
        : state.phase === "stories"
        ? { ...state, phase: "posts", after: null, pages: 0, pending }
        : { ...state, phase: "insights", after: null, pages, pending };
      return await save(
        next,
        (db, writes) =>
          storePosts(db, account, { posts: page.posts, at }, writes),
      );
    }
    case "insights":
      return await insightsStep(deps, { account, get, state, save });
  }
}

async function insightsStep(
  deps: SocialDeps,
  input: {
    account: SocialAccount;
    get: SocialGet;
    state: RefreshState;
    save: (next: RefreshState, work?: StepWork) => Promise<RefreshState>;
  },
): Promise<RefreshState> {
  const { account, state } = input;
  const [postId, ...rest] = state.pending;
  const post = postId
    ? await postRepo.findPostRow(deps.db, account.id, postId)
    : undefined;
  const next = { ...state, pending: rest };
  if (!post) return await input.save(next);
  const sources = POST_INSIGHTS[account.network][post.type] ?? [];
  const now = deps.clock.now();
  // Stories stop having insights after 24 h: they keep the last ones read.
  const expired = post.expiresAt !== null &&
    Date.parse(post.expiresAt) <= now.getTime();
  if (expired || sources.length === 0) return await input.save(next);
  const skip = state.unsupported?.[post.type] ?? [];
  const read = state.denied
    ? { values: {}, denied: true, unsupported: [] }
    : await readInsights(input.get, post.id, {
      metrics: sources.map((s) => s.metric).filter((m) => !skip.includes(m)),
    });
  // A story's (#10) means too few viewers, not a missing permission.
  if (read.denied && post.type !== "story") next.denied = true;
  if (read.unsupported.length > 0) {
    next.unsupported = {
      ...state.unsupported,
      [post.type]: [...skip, ...read.unsupported],
    };
  }
  const metrics = applyInsights(post.metrics, sources, read.values);
  const at = toDbTime(now);
  return await input.save(
    next,
    (_db, writes) =>
      postRepo.updatePostMetrics(writes.db, {
        socialAccountId: account.id,
        postId: post.id,
      }, { metrics, at }),
  );
}

/**
 * Runs (or resumes) the refresh of one social account to its end. When the
 * quota is spent it throws RetryLater for the end of the window, its place
 * saved; a deleted account is nothing to do.
 */
export async function refreshSocialAccount(
  deps: SocialDeps,
  socialAccountId: string,
  options: { client?: SocialClient; signal?: AbortSignal } = {},
): Promise<void> {
  const account = await repo.findSocialAccount(deps.db, socialAccountId);
  if (!account) return;
  let state = fromJson<RefreshState | null>(
    await repo.readRefreshState(deps.db, account.id),
    null,
  ) ?? initialState();
  const get = await quotaGet(deps, account.id, {
    mode: "background",
    ...options,
  });
  try {
    while (state.phase !== "insights" || state.pending.length > 0) {
      options.signal?.throwIfAborted();
      state = await step(deps, account, get, state);
    }
  } catch (err) {
    if (isQuotaError(err)) {
      throw new RetryLater(err.retryAfterMs ?? 60_000, err.message);
    }
    throw err;
  }
  await repo.saveRefreshState(deps.db, account.id, {
    state: null,
    at: toDbTime(deps.clock.now()),
    finished: true,
  });
}
