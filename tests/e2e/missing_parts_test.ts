// The bundle run as `deno task start` runs it reads a lazily imported chunk
// when it first needs it. Its files deleted under the running server (a
// rebuild in place): a route group not loaded yet answers 503, never a
// 500; /readyz says not ready; a job whose handler cannot be loaded
// goes back without spending an attempt. The real bundle, a real `dev`
// process, its real SQLite file.
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { buildBundle, startTaskArgs } from "../../scripts/_bundle.ts";
import { waitFor } from "../_support/wait.ts";
import { api, simPost, startServer } from "./_process.ts";
import { credentialsOf } from "./_dev.ts";

Deno.test({
  name:
    "parts of the bundle deleted under a running server: 503 and not ready, and a job keeps its attempts",
  // A compiled binary carries every module inside it.
  ignore: Deno.env.get("APP_BIN") !== undefined,
  async fn() {
    const bundle = await Deno.makeTempDir({ prefix: "bm-e2e-bundle-" });
    try {
      await buildBundle(bundle);
      // The start task's command line, `dev` for its `serve`.
      const start = await startTaskArgs(bundle);
      await using server = await startServer({
        command: "dev",
        runArgs: start.slice(0, -1),
        env: { LOG_LEVEL: "warn" },
      });
      const c = await credentialsOf(server);
      const call = (method: string, path: string, body?: unknown) =>
        api(server.baseUrl, c.apiKey, method, path, { body });

      // A customer writes (a reply is in its window) and the message routes
      // are loaded; then the build goes away.
      const customer = "+5491122334455";
      await simPost(c.simulatorUrl, "inbound", {
        to: c.phoneNumber,
        from: customer,
        name: "Ana",
        type: "text",
        text: { body: "Hola" },
      });
      await waitFor(async () =>
        (await call(
          "GET",
          `/conversations/by-phone/${encodeURIComponent(customer)}`,
        )).status === 200, {
        timeoutMs: 15_000,
        what: "the customer's conversation",
      });
      assert.equal(
        (await call("GET", `/messages/${crypto.randomUUID()}`)).status,
        404,
      );
      await Deno.remove(bundle, { recursive: true });

      const webhooks = await call("GET", "/webhooks");
      assert.equal(webhooks.status, 503, JSON.stringify(webhooks.body));
      // The spec's one 5xx body; the reason is in the server's log.
      assert.deepEqual(webhooks.body.error, {
        code: "INTERNAL_ERROR",
        message: "Internal server error",
      });
      for (const probe of ["/readyz", "/healthz"]) {
        const res = await fetch(`${server.baseUrl}${probe}`);
        assert.equal(res.status, 503, probe);
        await res.body?.cancel();
      }

      // Accepted: its job's handler is not loaded yet, and cannot be.
      const sent = await call("POST", "/messages", {
        phoneNumberId: c.channelId,
        to: customer,
        type: "text",
        text: { body: "¿En qué te ayudo?" },
      });
      assert.equal(sent.status, 201, JSON.stringify(sent.body));
      const db = new DatabaseSync(`${server.dataDir}/app.db`, {
        readOnly: true,
      });
      try {
        const job = () =>
          db.prepare(
            "select state, attempt, run_at, errors from jobs where unique_key = ?",
          ).get(`message.send:${sent.body.data.id}`) as {
            state: string;
            attempt: number;
            run_at: string;
            errors: string;
          };
        // Given back to run in a minute, not failed, no attempt spent.
        await waitFor(
          () => Date.parse(job().run_at) > Date.now() + 30_000,
          { timeoutMs: 15_000, what: "the send job to be put back" },
        );
        const row = job();
        assert.equal(row.state, "available", JSON.stringify(row));
        assert.equal(row.attempt, 0, JSON.stringify(row));
      } finally {
        db.close();
      }
      const message = await call("GET", `/messages/${sent.body.data.id}`);
      assert.equal(message.body.data.status, "queued");
      assert.match(
        server.output(),
        /A part of the program cannot be loaded.*routes \/api\/v2 \/webhooks/,
      );
      assert.match(server.output(), /job handler message\.send/);
    } finally {
      await Deno.remove(bundle, { recursive: true }).catch(() => {});
    }
  },
});
