// `dev` as a real process: the demo account, the in-process simulator and
// dev-credentials.json, across a restart on the same DATA_DIR.
import assert from "node:assert/strict";
import { verifySignature } from "../../src/domain/webhooks/envelope.ts";
import { waitFor } from "../_support/wait.ts";
import {
  api,
  type ServerProcess,
  simPost,
  startServer,
  within,
} from "./_process.ts";
import { type Credentials, credentialsOf } from "./_dev.ts";

/** A customer writes through the dev simulator; the reply must reach read. */
async function chatRoundTrip(
  server: ServerProcess,
  c: Credentials,
  from: string,
): Promise<void> {
  await simPost(c.simulatorUrl, "inbound", {
    to: c.phoneNumber,
    from,
    name: "Ana",
    type: "text",
    text: { body: "Hola" },
  });
  const call = (method: string, path: string, body?: unknown) =>
    api(server.baseUrl, c.apiKey, method, path, { body });
  await waitFor(async () => {
    const r = await call(
      "GET",
      `/conversations/by-phone/${encodeURIComponent(from)}`,
    );
    return r.status === 200;
  }, { timeoutMs: 15_000, what: `a conversation with ${from}` });
  const sent = await call("POST", "/messages", {
    phoneNumberId: c.channelId,
    to: from,
    type: "text",
    text: { body: "Hola, ¿en qué te ayudo?" },
  });
  assert.equal(sent.status, 201, JSON.stringify(sent.body));
  await waitFor(async () => {
    const r = await call("GET", `/messages/${sent.body.data.id}`);
    return r.body.data?.status === "read";
  }, { timeoutMs: 15_000, what: "the reply to reach read" });
}

Deno.test("dev seeds a working demo account and keeps it across a restart", async (t) => {
  const dataDir = await Deno.makeTempDir({ prefix: "bm-e2e-dev-" });
  try {
    let first: Credentials;
    let port: number;
    const appSecret = () => Deno.readTextFile(`${dataDir}/meta-app-secret`);
    let firstAppSecret: string;
    {
      await using server = await startServer({
        command: "dev",
        dataDir,
        env: { LOG_LEVEL: "warn" },
      });
      port = server.port;
      first = await credentialsOf(server);
      firstAppSecret = await appSecret();
      const call = (path: string) =>
        api(server.baseUrl, first.apiKey, "GET", path);

      await t.step(
        "dev-credentials.json describes the demo account",
        async () => {
          assert.deepEqual(Object.keys(first).sort(), [
            "accountId",
            "accountSlug",
            "apiKey",
            "baseUrl",
            "channelId",
            "panelLoginUrl",
            "phoneNumber",
            "simulatorUrl",
          ]);
          assert.equal(first.baseUrl, `http://localhost:${server.port}`);
          assert.match(first.apiKey, /^bmk_/);
          assert.match(first.phoneNumber, /^\+\d+$/);
          const mode =
            (await Deno.stat(`${dataDir}/dev-credentials.json`)).mode;
          assert.equal(mode! & 0o077, 0, "credentials readable by others");
        },
      );

      await t.step(
        "the key works on account, channels, templates and conversations",
        async () => {
          // The address scripts use, as written in the credentials file.
          const viaFile = await api(
            first.baseUrl,
            first.apiKey,
            "GET",
            "/account",
          );
          assert.equal(viaFile.status, 200, JSON.stringify(viaFile.body));
          const account = await call("/account");
          assert.equal(account.status, 200, JSON.stringify(account.body));
          assert.equal(account.body.data.id, first.accountId);
          assert.equal(account.body.data.slug, first.accountSlug);
          const channels = await call("/channels");
          assert.deepEqual(
            channels.body.data.map((c: Record<string, string>) => [
              c.id,
              c.phoneNumber,
              c.status,
            ]),
            [[first.channelId, first.phoneNumber, "connected"]],
          );
          // Synced from the simulator's WABA, as a real one is from Meta.
          const templates = await call("/templates?pageSize=100");
          assert.equal(templates.status, 200);
          assert.equal(templates.body.meta.total, 34);
          const byKey = new Map(
            templates.body.data.map((
              x: { name: string; language: string; status: string },
            ) => [`${x.name}/${x.language}`, x]),
          ) as Map<string, Record<string, unknown>>;
          assert.equal(byKey.get("order_update/es_AR")?.status, "approved");
          assert.equal(byKey.get("summer_sale/en_US")?.status, "paused");
          assert.equal(byKey.get("order_update/es_AR")?.source, "meta");
          const conversations = await call("/conversations");
          assert.equal(conversations.status, 200);
          assert.ok(Array.isArray(conversations.body.data));
        },
      );

      await t.step(
        "the printed panel link signs the demo agent in, to demo conversations",
        async () => {
          assert.ok(server.proc.stdout.includes(first.panelLoginUrl));
          const url = new URL(first.panelLoginUrl);
          assert.equal(url.origin, first.baseUrl);
          const page = await fetch(server.baseUrl + url.pathname + url.search);
          assert.match(await page.text(), />Sign in</);
          const signed = await fetch(`${server.baseUrl}/panel/login`, {
            method: "POST",
            redirect: "manual",
            headers: {
              "content-type": "application/x-www-form-urlencoded",
              "sec-fetch-site": "same-origin",
            },
            body: new URLSearchParams({
              token: url.searchParams.get("token")!,
            }),
          });
          await signed.body?.cancel();
          assert.equal(signed.status, 303);
          const cookie = signed.headers.get("set-cookie")!.split(";")[0]!;
          await waitFor(async () => {
            const res = await fetch(`${server.baseUrl}/api/v2/conversations`, {
              headers: { cookie },
            });
            const body = await res.json();
            return res.status === 200 && body.data.length >= 4;
          }, { timeoutMs: 15_000, what: "the four demo conversations" });
          // The token is in no log line.
          const token = url.searchParams.get("token")!;
          assert.ok(!server.proc.stderr.includes(token));
        },
      );

      await t.step(
        "a template paused in the simulator is refused at the next send, and goes again once approved",
        async () => {
          const send = () =>
            api(server.baseUrl, first.apiKey, "POST", "/messages", {
              body: {
                phoneNumberId: first.channelId,
                to: "+5491122334466",
                type: "template",
                template: {
                  name: "order_update",
                  language: { code: "es_AR" },
                  components: [{
                    type: "body",
                    parameters: [
                      { type: "text", text: "Ana" },
                      { type: "text", text: "A-1" },
                    ],
                  }],
                },
              },
            });
          assert.equal((await send()).status, 201);
          // docs/getting-started.md's curl.
          const status = (value: string) =>
            fetch(`${first.simulatorUrl}/_sim/templates/order_update/status`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ status: value }),
            }).then((r) => r.body?.cancel());
          await status("PAUSED");
          const refused = await waitFor(async () => {
            const r = await send();
            return r.status === 422 ? r : null;
          }, { timeoutMs: 10_000, what: "the paused template to be refused" });
          assert.equal(refused.body.error.code, "TEMPLATE_NOT_APPROVED");
          assert.match(refused.body.error.message, /paused/);
          await status("APPROVED");
          await waitFor(async () => (await send()).status === 201, {
            timeoutMs: 10_000,
            what: "the template approved again",
          });
        },
      );

      await t.step(
        "/social answers with the demo Instagram and Facebook posts",
        async () => {
          await waitFor(async () => {
            const r = await call("/social/posts?limit=100");
            return r.status === 200 && r.body.data.length === 54;
          }, { timeoutMs: 20_000, what: "the 54 demo social posts" });
          const posts = await call("/social/posts?limit=100");
          assert.deepEqual(
            [...new Set(posts.body.data.map((p: { type: string }) => p.type))]
              .sort(),
            ["carousel", "image", "link", "reel", "story", "text", "video"],
          );
          const summary = await call("/social/account/summary");
          assert.deepEqual(
            summary.body.data.accounts.map((a: { network: string }) =>
              a.network
            ).sort(),
            ["facebook", "instagram"],
          );
        },
      );

      await t.step(
        "an inbound message gets a reply that reaches read",
        async () => {
          await chatRoundTrip(server, first, "+5491122334455");
        },
      );

      await t.step(
        "dev allows loopback webhooks, says so, and delivers signed events",
        async () => {
          assert.match(
            server.proc.stdout,
            /WEBHOOK_ALLOW_PRIVATE_NETWORKS=true/,
          );
          const received: Array<{ raw: string; signature: string }> = [];
          const receiver = Deno.serve(
            { hostname: "127.0.0.1", port: 0, onListen: () => {} },
            async (req) => {
              received.push({
                raw: await req.text(),
                signature: req.headers.get("x-service-signature") ?? "",
              });
              return new Response("ok");
            },
          );
          try {
            const hook = await api(
              server.baseUrl,
              first.apiKey,
              "POST",
              "/webhooks",
              {
                body: {
                  url: `http://127.0.0.1:${receiver.addr.port}/hook`,
                  events: ["message.received"],
                },
              },
            );
            assert.equal(hook.status, 201, JSON.stringify(hook.body));
            await simPost(first.simulatorUrl, "inbound", {
              to: first.phoneNumber,
              from: "+5491155556666",
              name: "Leo",
              type: "text",
              text: { body: "¿Abren hoy?" },
            });
            await waitFor(() => received.length > 0, {
              timeoutMs: 15_000,
              what: "the message.received delivery",
            });
            const [got] = received;
            const body = JSON.parse(got!.raw);
            assert.equal(body.event, "message.received");
            assert.deepEqual(body.data.content, { body: "¿Abren hoy?" });
            assert.equal(body.data.contact.name, "Leo");
            assert.ok(
              verifySignature(hook.body.data.secret, got!.signature, got!.raw, {
                nowSeconds: Math.floor(Date.now() / 1_000),
              }),
              "signed with the subscription's secret",
            );
          } finally {
            await receiver.shutdown();
          }
        },
      );

      await t.step("SIGTERM stops dev with exit code 0", async () => {
        const status = await within(server.stop(), 15_000, "dev to exit");
        assert.equal(status.code, 0, server.output());
      });
    }

    await t.step(
      "a restart on the same DATA_DIR reuses the account and still works",
      async () => {
        await using again = await startServer({
          command: "dev",
          dataDir,
          port,
          env: { LOG_LEVEL: "warn" },
        });
        const second = await credentialsOf(again);
        assert.equal(second.accountId, first.accountId);
        assert.equal(second.channelId, first.channelId);
        assert.equal(second.apiKey, first.apiKey, "the saved key is reused");
        assert.notEqual(second.panelLoginUrl, first.panelLoginUrl);
        assert.equal(await appSecret(), firstAppSecret, "app secret replaced");
        const old = await api(
          again.baseUrl,
          first.apiKey,
          "GET",
          "/conversations/by-phone/%2B5491122334455",
        );
        assert.equal(old.status, 200, "the earlier conversation is kept");
        const templates = await api(
          again.baseUrl,
          second.apiKey,
          "GET",
          "/templates",
        );
        assert.equal(templates.body.meta.total, 34, "synced again, not twice");
        await chatRoundTrip(again, second, "+5491199887766");
      },
    );
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
