/** The Instagram and Facebook Page reads of the fake Graph API (reference §8). */
import type { Context, Next } from "hono";
import { requireBearer } from "./messages_route.ts";
import { graphErrorResponse } from "./sim_errors.ts";
import { commentJson, postJson } from "./social_shapes.ts";
import {
  ACCOUNT_METRICS,
  type SimSocialAccount,
  type SocialSimState,
  socialState,
  supportedMetrics,
} from "./social_state.ts";
import type { SimulatorState } from "./state.ts";

const HOUR_MS = 60 * 60 * 1_000;
const DAY_MS = 24 * HOUR_MS;

function ownerOf(social: SocialSimState, id: string): SimSocialAccount | null {
  return social.accounts.get(id) ??
    social.accounts.get(social.posts.get(id)?.accountId ?? "") ?? null;
}

/** Counts the call against the account's hourly budget; the rate-limit error once it is spent. */
function meter(
  social: SocialSimState,
  account: SimSocialAccount,
  now: number,
): { headers: Headers; refused: Response | null } {
  const window = Math.floor(now / HOUR_MS);
  const usage = social.usage.get(account.id);
  const count = usage?.window === window ? usage.count + 1 : 1;
  social.usage.set(account.id, { window, count });
  const percent = Math.min(100, Math.round(count / account.callsPerHour * 100));
  const over = count > account.callsPerHour;
  const regain = over ? Math.ceil(((window + 1) * HOUR_MS - now) / 60_000) : 0;
  const headers = new Headers({
    "x-business-use-case-usage": JSON.stringify({
      [account.id]: [{
        type: account.network === "instagram" ? "instagram" : "pages",
        call_count: percent,
        total_cputime: Math.round(percent / 4),
        total_time: Math.round(percent / 4),
        estimated_time_to_regain_access: regain,
      }],
    }),
  });
  if (!over) return { headers, refused: null };
  const code = account.network === "instagram" ? 80002 : 80001;
  const refused = graphErrorResponse(code, { subcode: 2446079 });
  for (const [k, v] of headers) refused.headers.set(k, v);
  return { headers, refused };
}

function page<T>(items: T[], url: URL, fallback = 25) {
  const limit = Math.min(
    100,
    Number(url.searchParams.get("limit")) || fallback,
  );
  const after = url.searchParams.get("after");
  const from = after ? Number(atob(after)) || 0 : 0;
  const slice = items.slice(from, from + limit);
  const end = from + slice.length;
  return {
    slice,
    paging: {
      cursors: { before: btoa(String(from)), after: btoa(String(end)) },
      ...(end < items.length
        ? { next: `${url.origin}${url.pathname}?after=${btoa(String(end))}` }
        : {}),
    },
  };
}

function insightsAnswer(
  a: SimSocialAccount,
  input: {
    objectId: string;
    metrics: string[];
    supported: string[];
    values: Record<string, number>;
  },
): Response {
  if (!a.insightsGranted) {
    return a.network === "instagram"
      ? graphErrorResponse(10, {
        details: "Application does not have permission for this action",
      })
      : graphErrorResponse(200, {
        details: "Requires read_insights permission",
      });
  }
  const bad = input.metrics.find((m) => !input.supported.includes(m));
  if (bad) {
    return graphErrorResponse(100, {
      details: a.network === "instagram"
        ? `The Media Insights API does not support the ${bad} metric for this media product type.`
        : "The value must be a valid insights metric",
    });
  }
  const data = input.metrics.filter((m) => input.values[m] !== undefined)
    .map((m) => ({
      name: m,
      period: "lifetime",
      values: [{ value: input.values[m] }],
      title: m,
      id: `${input.objectId}/insights/${m}/lifetime`,
    }));
  return Response.json({ data });
}

function edgeAnswer(
  state: SimulatorState,
  input: { a: SimSocialAccount; id: string; edge: string; url: URL },
): Response | null {
  const social = socialState(state);
  const { a, id, edge, url } = input;
  const post = social.posts.get(id);
  const now = Date.now();
  if (edge === "insights") {
    const metrics = (url.searchParams.get("metric") ?? "").split(",").filter(
      Boolean,
    );
    return post
      ? insightsAnswer(a, {
        objectId: id,
        metrics,
        supported: supportedMetrics(a.network, post.type),
        values: post.insights,
      })
      : insightsAnswer(a, {
        objectId: id,
        metrics,
        supported: ACCOUNT_METRICS[a.network],
        values: a.insights,
      });
  }
  if (edge === "comments" && post) {
    const { slice, paging } = page(post.comments, url);
    const data = slice.map((c) => ({
      ...commentJson(a, c),
      ...(c.replies.length
        ? {
          [a.network === "instagram" ? "replies" : "comments"]: {
            data: c.replies.map((r) => commentJson(a, r)),
          },
        }
        : {}),
    }));
    return Response.json({
      data,
      paging,
      ...(a.network === "facebook"
        ? { summary: { total_count: post.comments.length } }
        : {}),
    });
  }
  if (post || !["media", "stories", "posts"].includes(edge)) return null;
  const posts = [...social.posts.values()]
    .filter((p) => p.accountId === a.id)
    .filter((p) =>
      edge === "stories"
        ? p.type === "story" && now - p.publishedAt < DAY_MS
        : p.type !== "story"
    )
    .sort((x, y) => y.publishedAt - x.publishedAt);
  const { slice, paging } = page(posts, url);
  return Response.json({
    data: slice.map((p) => postJson(state, p, a)),
    paging,
  });
}

/**
 * GET /{id} and GET /{id}/{edge} for social objects; any other id passes to
 * the next handler (the WhatsApp media lookup shares the numeric path).
 */
export function socialGraphHandler(state: SimulatorState) {
  return async (c: Context, next: Next) => {
    const social = socialState(state);
    const id = c.req.param("id") ?? "";
    const a = ownerOf(social, id);
    if (!a) return await next();
    const unauthorized = requireBearer(c.req.raw);
    if (unauthorized) return unauthorized;
    const url = new URL(c.req.url);
    const edge = c.req.param("edge");
    social.calls.push({
      path: url.pathname + url.search,
      accountId: a.id,
      at: Date.now(),
    });
    const { headers, refused } = meter(social, a, Date.now());
    if (refused) return refused;
    let res: Response | null;
    if (edge) res = edgeAnswer(state, { a, id, edge, url });
    else if (social.posts.has(id)) {
      res = Response.json(postJson(state, social.posts.get(id)!, a));
    } else {
      res = Response.json(
        a.network === "instagram"
          ? {
            id: a.id,
            username: a.username,
            name: a.name,
            followers_count: a.followers,
            follows_count: a.follows,
            media_count: [...social.posts.values()].filter((p) =>
              p.accountId === a.id
            ).length,
          }
          : {
            id: a.id,
            name: a.name,
            followers_count: a.followers,
            fan_count: a.followers,
          },
      );
    }
    res ??= graphErrorResponse(100, {
      status: 400,
      details: `Tried accessing nonexisting field (${edge})`,
    });
    for (const [k, v] of headers) res.headers.set(k, v);
    return res;
  };
}
