import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { Container } from "../../container.ts";
import { listChannels } from "../../domain/channels/channel_service.ts";
import type { AppEnv } from "../env.ts";
import { COMMON_ERRORS, defineRoute, envelope, newRouter } from "../openapi.ts";
import { ok } from "../respond.ts";
import {
  ChannelSchema,
  toChannelResponse,
} from "../schemas/account_schemas.ts";

const listChannelsRoute = defineRoute("channels:read", {
  method: "get",
  path: "/channels",
  tags: ["Channels"],
  summary: "The account's connected phone numbers",
  responses: {
    200: envelope(z.array(ChannelSchema), "Channels"),
    ...COMMON_ERRORS,
  },
});

export function channelRoutes(container: Container): OpenAPIHono<AppEnv> {
  const app = newRouter();
  app.openapi(listChannelsRoute, async (c) => {
    const channels = await listChannels(
      container,
      c.get("principal").accountId,
    );
    return ok(c, channels.map(toChannelResponse));
  });
  return app;
}
