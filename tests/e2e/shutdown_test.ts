// Issue 30, item 5: on SIGTERM, /readyz answers 503 while requests are still
// served for SHUTDOWN_DELAY_MS, so a proxy that follows it stops sending here
// before the server stops taking requests; then the process exits cleanly.
import assert from "node:assert/strict";
import { startServer, TEST_SECRET_KEY, within } from "./_process.ts";

Deno.test({
  name:
    "serve on SIGTERM: /readyz answers 503 at once, other requests are still answered during SHUTDOWN_DELAY_MS, then it stops and exits 0",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using server = await startServer({
      env: {
        SECRET_KEY: TEST_SECRET_KEY,
        SHUTDOWN_DELAY_MS: "1500",
        LOG_LEVEL: "warn",
      },
    });
    const get = async (path: string) => {
      try {
        const res = await fetch(`${server.baseUrl}${path}`);
        await res.body?.cancel();
        return res.status;
      } catch {
        return "refused";
      }
    };
    assert.equal(await get("/readyz"), 200);
    server.proc.signal("SIGTERM");
    const deadline = Date.now() + 10_000;
    while (await get("/readyz") !== 503) {
      assert.ok(Date.now() < deadline, "/readyz never answered 503");
    }
    // Still serving: liveness and the API answer as usual.
    assert.equal(await get("/healthz"), 200);
    assert.equal(await get("/api/v2/account"), 401);
    const status = await within(server.proc.status, 15_000, "serve to exit");
    assert.equal(status.code, 0, server.output());
    assert.equal(await get("/healthz"), "refused");
  },
});
