import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { Container } from "../../container.ts";
import {
  getSocialComments,
  getSocialPost,
  listSocialPosts,
} from "../../domain/social/social_service.ts";
import { accountSummary } from "../../domain/social/summary_service.ts";
import type { AppEnv } from "../env.ts";
import {
  COMMON_ERRORS,
  cursorEnvelope,
  defineRoute,
  envelope,
  newRouter,
  NOT_FOUND_ERROR,
  RequestMeta,
} from "../openapi.ts";
import { ok } from "../respond.ts";
import {
  PostIdParam,
  SocialCommentsQuery,
  SocialCommentsSchema,
  SocialPostQuery,
  SocialPostSchema,
  SocialPostsQuery,
  SummaryQuery,
  SummarySchema,
  toCommentsResponse,
  toSocialPostResponse,
  toSummaryResponse,
} from "../schemas/social_schemas.ts";

const TAGS = ["Social"];

const listPostsRoute = defineRoute("social:read", {
  method: "get",
  path: "/social/posts",
  tags: TAGS,
  summary: "Instagram and Facebook posts with their metrics, newest first",
  description:
    "Cached data, refreshed in the background every 6 hours. Cursor pagination on publication time.",
  request: { query: SocialPostsQuery },
  responses: {
    200: cursorEnvelope(SocialPostSchema, "A page of posts"),
    ...COMMON_ERRORS,
  },
});

const getPostRoute = defineRoute("social:read", {
  method: "get",
  path: "/social/posts/{id}",
  tags: TAGS,
  summary: "One post by its upstream id",
  request: { params: PostIdParam, query: SocialPostQuery },
  responses: {
    200: envelope(SocialPostSchema, "The post"),
    ...COMMON_ERRORS,
    ...NOT_FOUND_ERROR,
  },
});

const commentsRoute = defineRoute("social:read", {
  method: "get",
  path: "/social/posts/{id}/comments",
  tags: TAGS,
  summary: "First-level comments of a post with their replies",
  description: "A live read of the upstream, cached 10 minutes.",
  request: { params: PostIdParam, query: SocialCommentsQuery },
  responses: {
    200: {
      content: {
        "application/json": {
          schema: z.object({
            data: SocialCommentsSchema,
            meta: RequestMeta.extend({ cached: z.boolean() }),
          }),
        },
      },
      description: "The comments",
    },
    ...COMMON_ERRORS,
    ...NOT_FOUND_ERROR,
  },
});

const summaryRoute = defineRoute("social:read", {
  method: "get",
  path: "/social/account/summary",
  tags: TAGS,
  summary: "Followers, the period's totals and insights per social account",
  request: { query: SummaryQuery },
  responses: {
    200: envelope(SummarySchema, "One entry per connected social account"),
    ...COMMON_ERRORS,
  },
});

export function socialRoutes(container: Container): OpenAPIHono<AppEnv> {
  const app = newRouter();
  app.openapi(listPostsRoute, async (c) => {
    const q = c.req.valid("query");
    const page = await listSocialPosts(container, {
      accountId: c.get("principal").accountId,
      ...q,
    });
    return ok(c, page.items.map(toSocialPostResponse), {
      meta: { cursor: page.cursor, hasMore: page.hasMore },
    });
  });
  app.openapi(getPostRoute, async (c) => {
    const post = await getSocialPost(container, {
      accountId: c.get("principal").accountId,
      postId: c.req.valid("param").id,
      refresh: c.req.valid("query").refresh,
    });
    return ok(c, toSocialPostResponse(post));
  });
  app.openapi(commentsRoute, async (c) => {
    const q = c.req.valid("query");
    const view = await getSocialComments(container, {
      accountId: c.get("principal").accountId,
      postId: c.req.valid("param").id,
      ...q,
    });
    return ok(c, toCommentsResponse(view), { meta: { cached: view.cached } });
  });
  app.openapi(summaryRoute, async (c) => {
    const accounts = await accountSummary(container, {
      accountId: c.get("principal").accountId,
      ...c.req.valid("query"),
    });
    return ok(c, toSummaryResponse(accounts));
  });
  return app;
}
