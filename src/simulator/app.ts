import { Hono } from "hono";
import { controlRoutes } from "./control.ts";
import { managementControlRoutes } from "./management_control.ts";
import { managementAccountControlRoutes } from "./management_account_control.ts";
import {
  handleMediaDownload,
  handleMediaInfo,
  handleMediaUpload,
} from "./media.ts";
import { handleMessages } from "./messages_route.ts";
import {
  managementGraphHandler,
  managementPostHandler,
} from "./management_routes.ts";
import { handleDebugToken } from "./app_routes.ts";
import { graphErrorResponse } from "./sim_errors.ts";
import { socialControlRoutes } from "./social_control.ts";
import { socialGraphHandler } from "./social_routes.ts";
import type { SimulatorState } from "./state.ts";

/** The Graph-shaped endpoints, mounted with and without a /vNN.N prefix. */
function graphRoutes(state: SimulatorState): Hono {
  const app = new Hono();
  // Instagram and Facebook objects first; other ids fall through.
  app.get("/:id{[0-9_]+}/:edge?", socialGraphHandler(state));
  app.get("/:id{[0-9]+}/:edge?", managementGraphHandler(state));
  app.get("/debug_token", (c) => handleDebugToken(state, c.req.raw));
  app.post(
    "/:id{[0-9]+}/:edge{subscribed_apps|register|subscriptions}",
    managementPostHandler(state),
  );
  app.post("/:phoneNumberId/media", (c) => handleMediaUpload(state, c.req.raw));
  app.post(
    "/:phoneNumberId/messages",
    (c) => handleMessages(state, c.req.raw, c.req.param("phoneNumberId")),
  );
  app.get(
    "/:mediaId{[0-9]+}",
    (c) => handleMediaInfo(state, c.req.raw, c.req.param("mediaId")),
  );
  return app;
}

/** The fake Graph API as a Hono app; tests can call it in-process with app.request(). */
export function createSimulatorApp(state: SimulatorState): Hono {
  const app = new Hono();
  app.route("/_sim/social", socialControlRoutes(state));
  app.route("/_sim", managementControlRoutes(state));
  app.route("/_sim", managementAccountControlRoutes(state));
  app.route("/_sim", controlRoutes(state));
  app.get(
    "/_media/:id",
    (c) => handleMediaDownload(state, c.req.raw, c.req.param("id")),
  );
  const graph = graphRoutes(state);
  app.route("/:version{v[0-9]+\\.[0-9]+}", graph);
  app.route("/", graph);
  app.notFound(() =>
    graphErrorResponse(100, {
      details: "Unknown path components",
      status: 404,
    })
  );
  app.onError((err) => {
    state.log.error("Simulator request failed", { err });
    return graphErrorResponse(131000);
  });
  return app;
}
