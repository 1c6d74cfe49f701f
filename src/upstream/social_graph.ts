/**
 * The Instagram and Facebook Page reads of reference §8: which fields to ask
 * for, and how the answers map to posts, profiles, insights and comments.
 * Every read goes through a `SocialGet`, so the caller decides about quota.
 */
import { UpstreamError } from "./graph_api.ts";

export type SocialNetwork = "instagram" | "facebook";
export type SocialPostType =
  | "image"
  | "carousel"
  | "reel"
  | "video"
  | "story"
  | "text"
  | "link";

/** One quota-gated GET: path without version, query without token. */
export type SocialGet = (
  path: string,
  query: Record<string, string>,
) => Promise<Record<string, unknown>>;

/** A post as the upstream describes it; `fields` holds the metrics read as fields (likes, comments, FB shares). */
export interface UpstreamPost {
  id: string;
  type: SocialPostType;
  permalink: string | null;
  caption: string | null;
  mediaUrl: string | null;
  thumbnailUrl: string | null;
  publishedAt: string;
  fields: Record<string, number | null>;
}

export interface UpstreamProfile {
  followersCount: number | null;
  followsCount: number | null;
  mediaCount: number | null;
}

export interface UpstreamComment {
  id: string;
  text: string;
  username: string;
  createdAt: string;
  likeCount: number;
  replies: Omit<UpstreamComment, "replies">[];
}

const IG_MEDIA_FIELDS =
  "id,caption,media_type,media_product_type,permalink,media_url,thumbnail_url,timestamp,like_count,comments_count";
const FB_POST_FIELDS =
  "id,message,created_time,permalink_url,status_type,full_picture,shares,reactions.summary(total_count).limit(0),comments.summary(total_count).limit(0)";
const PAGE_SIZE = "25";

/** Graph times (`2024-04-05T07:56:32+0000`) as ISO 8601 UTC with milliseconds. */
export function graphTime(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const ms = Date.parse(value.replace(/([+-]\d\d)(\d\d)$/, "$1:$2"));
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

function str(v: unknown): string | null {
  return typeof v === "string" && v !== "" ? v : null;
}

function num(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

function obj(v: unknown): Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v)
    ? v as Record<string, unknown>
    : {};
}

function list(v: unknown): Record<string, unknown>[] {
  return Array.isArray(v) ? v.map(obj) : [];
}

function igType(m: Record<string, unknown>): SocialPostType {
  if (m.media_product_type === "STORY") return "story";
  if (m.media_product_type === "REELS") return "reel";
  if (m.media_type === "CAROUSEL_ALBUM") return "carousel";
  return m.media_type === "VIDEO" ? "video" : "image";
}

function fbType(p: Record<string, unknown>): SocialPostType {
  switch (p.status_type) {
    case "added_photos":
      return "image";
    case "added_video":
      return "video";
    case "shared_story":
      return "link";
    default:
      return "text";
  }
}

function invalid(what: string): UpstreamError {
  return new UpstreamError(`Graph API returned ${what}`, {
    category: "invalid_response",
    retryable: false,
  });
}

/** Maps one IG media or FB post object; throws on one without id or time. */
export function toUpstreamPost(
  network: SocialNetwork,
  raw: Record<string, unknown>,
): UpstreamPost {
  const id = str(raw.id);
  const publishedAt = graphTime(
    network === "instagram" ? raw.timestamp : raw.created_time,
  );
  if (!id || !publishedAt) invalid("a post without id or time");
  if (network === "instagram") {
    return {
      id: id!,
      type: igType(raw),
      permalink: str(raw.permalink),
      caption: str(raw.caption),
      mediaUrl: str(raw.media_url),
      thumbnailUrl: str(raw.thumbnail_url),
      publishedAt: publishedAt!,
      // like_count is left out when the owner hides likes: unknown, not 0.
      fields: { likes: num(raw.like_count), comments: num(raw.comments_count) },
    };
  }
  const type = fbType(raw);
  return {
    id: id!,
    type,
    permalink: str(raw.permalink_url),
    caption: str(raw.message),
    mediaUrl: str(raw.full_picture),
    thumbnailUrl: type === "video" ? str(raw.full_picture) : null,
    publishedAt: publishedAt!,
    fields: {
      likes: num(obj(obj(raw.reactions).summary).total_count),
      comments: num(obj(obj(raw.comments).summary).total_count),
      // The upstream leaves `shares` out when it is 0 (reference §8.4).
      shares: raw.shares === undefined ? 0 : num(obj(raw.shares).count),
    },
  };
}

/** Followers, follows and media counts of the IG user or FB Page. */
export async function fetchProfile(
  get: SocialGet,
  network: SocialNetwork,
  objectId: string,
): Promise<UpstreamProfile> {
  const fields = network === "instagram"
    ? "id,username,name,followers_count,follows_count,media_count"
    : "id,name,followers_count,fan_count";
  const body = await get(objectId, { fields });
  return {
    followersCount: num(body.followers_count),
    followsCount: num(body.follows_count),
    mediaCount: num(body.media_count),
  };
}

/** One page of the media (IG) or posts (FB) edge, or of the IG stories edge; `after` is the next page's cursor. */
export async function fetchPostsPage(
  get: SocialGet,
  input: {
    network: SocialNetwork;
    objectId: string;
    edge: "posts" | "stories";
    after: string | null;
  },
): Promise<{ posts: UpstreamPost[]; after: string | null }> {
  const path = input.network === "facebook"
    ? `${input.objectId}/posts`
    : `${input.objectId}/${input.edge === "stories" ? "stories" : "media"}`;
  const query: Record<string, string> = {
    fields: input.network === "instagram" ? IG_MEDIA_FIELDS : FB_POST_FIELDS,
    limit: PAGE_SIZE,
  };
  if (input.after) query.after = input.after;
  const body = await get(path, query);
  const paging = obj(body.paging);
  const next = str(obj(paging.cursors).after);
  return {
    posts: list(body.data).map((raw) => toUpstreamPost(input.network, raw)),
    after: str(paging.next) && next ? next : null,
  };
}

/** One post by its upstream id. */
export async function fetchPost(
  get: SocialGet,
  network: SocialNetwork,
  postId: string,
): Promise<UpstreamPost> {
  const fields = network === "instagram" ? IG_MEDIA_FIELDS : FB_POST_FIELDS;
  return toUpstreamPost(network, await get(postId, { fields }));
}

/**
 * GET /{id}/insights?metric=a,b: the values by metric name. A metric the
 * answer leaves out is absent from the result (never 0).
 */
export async function fetchInsights(
  get: SocialGet,
  objectId: string,
  input: { metrics: string[]; query?: Record<string, string> },
): Promise<Record<string, number>> {
  const body = await get(`${objectId}/insights`, {
    metric: input.metrics.join(","),
    ...input.query,
  });
  const out: Record<string, number> = {};
  for (const entry of list(body.data)) {
    const name = str(entry.name);
    const value = num(obj(list(entry.values).at(-1)).value) ??
      num(obj(entry.total_value).value);
    if (name && value !== null) out[name] = value;
  }
  return out;
}

function toComment(
  network: SocialNetwork,
  raw: Record<string, unknown>,
): Omit<UpstreamComment, "replies"> {
  return {
    id: str(raw.id) ?? "",
    text: str(network === "instagram" ? raw.text : raw.message) ?? "",
    username:
      str(network === "instagram" ? raw.username : obj(raw.from).name) ??
        "",
    createdAt: graphTime(
      network === "instagram" ? raw.timestamp : raw.created_time,
    ) ?? "",
    likeCount: num(raw.like_count) ?? 0,
  };
}

/** First-level comments with their replies, page by page until `limit`; `total` is the upstream's count when it gives one. */
export async function fetchComments(
  get: SocialGet,
  input: { network: SocialNetwork; postId: string; limit: number },
): Promise<{ comments: UpstreamComment[]; total: number | null }> {
  const ig = input.network === "instagram";
  const fields = ig
    ? "id,text,username,timestamp,like_count,replies{id,text,username,timestamp,like_count}"
    : "id,message,from,created_time,like_count,comments{id,message,from,created_time,like_count}";
  const comments: UpstreamComment[] = [];
  let total: number | null = null;
  let after: string | null = null;
  do {
    const query: Record<string, string> = {
      fields,
      limit: String(Math.min(100, input.limit - comments.length)),
      ...(ig ? {} : { summary: "total_count", filter: "toplevel" }),
    };
    if (after) query.after = after;
    const body = await get(`${input.postId}/comments`, query);
    total ??= num(obj(body.summary).total_count);
    for (const raw of list(body.data)) {
      if (comments.length >= input.limit) break;
      const replies = list(obj(ig ? raw.replies : raw.comments).data);
      comments.push({
        ...toComment(input.network, raw),
        replies: replies.map((r) => toComment(input.network, r)),
      });
    }
    const paging = obj(body.paging);
    after = str(paging.next) ? str(obj(paging.cursors).after) : null;
  } while (after && comments.length < input.limit);
  return { comments, total };
}
