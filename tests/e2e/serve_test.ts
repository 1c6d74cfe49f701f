// Production `serve` as a real process, talking to the simulator (its own
// process) as its Graph API; accounts, keys and channels come from the CLI.
import assert from "node:assert/strict";
import { freePort, waitFor } from "../_support/wait.ts";
import {
  api,
  cliJson,
  Proc,
  simPost,
  startEngineSetup,
  startServer,
  within,
} from "./_process.ts";

const APP_SECRET = "e2e-app-secret";
const CHANNEL_PHONE = "+15550100077";
const UPSTREAM_ID = "106540352249977";
/** A 1x1 PNG. */
const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

function decodeBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

Deno.test("serve runs the messaging engine end to end and stops on SIGTERM", async (t) => {
  const setup = await startEngineSetup({
    appSecret: APP_SECRET,
    dataDirPrefix: "bm-e2e-serve-",
  });
  await using sim = setup.sim;
  const { port, dataDir, env } = setup;
  try {
    await cliJson(
      ["accounts", "create", "--name", "Acme", "--slug", "acme"],
      env,
    );
    const { key } = await cliJson(
      ["keys", "create", "--account", "acme", "--scopes", "all"],
      env,
    );
    const channel = await cliJson([
      "channels",
      "create",
      "--account",
      "acme",
      "--phone",
      CHANNEL_PHONE,
      "--display-name",
      "Acme",
      "--upstream-phone-number-id",
      UPSTREAM_ID,
      "--waba-id",
      "102290129349977",
      "--access-token",
      "EAAG-e2e",
    ], env);
    await simPost(sim.url, "numbers", {
      phoneNumberId: UPSTREAM_ID,
      displayPhoneNumber: CHANNEL_PHONE,
    });
    const server = await startServer({ env, port, dataDir });
    const call = (method: string, path: string, body?: unknown) =>
      api(server.baseUrl, key, method, path, { body });
    const inbound = (body: Record<string, unknown>) =>
      simPost(sim.url, "inbound", { to: CHANNEL_PHONE, ...body });
    const conversationOf = (phone: string) =>
      waitFor(async () => {
        const r = await call(
          "GET",
          `/conversations/by-phone/${encodeURIComponent(phone)}`,
        );
        return r.status === 200 ? r.body.data : null;
      }, { timeoutMs: 15_000, what: `a conversation with ${phone}` });

    try {
      await t.step("an inbound text creates the conversation", async () => {
        await inbound({
          from: "+5491122334455",
          name: "Ana",
          type: "text",
          text: { body: "Hola" },
        });
        const conversation = await conversationOf("+5491122334455");
        assert.equal(conversation.phoneNumberId, channel.id);
        assert.equal(conversation.contact.name, "Ana");
        const messages = await call(
          "GET",
          `/conversations/${conversation.id}/messages`,
        );
        assert.deepEqual(
          messages.body.data.map((m: Record<string, unknown>) => [
            m.direction,
            m.type,
            m.content,
          ]),
          [["inbound", "text", { text: "Hola" }]],
        );
      });

      await t.step("a reply is sent upstream and reaches read", async () => {
        const sent = await call("POST", "/messages", {
          phoneNumberId: channel.id,
          to: "+5491122334455",
          type: "text",
          text: { body: "¡Hola Ana!" },
        });
        assert.equal(sent.status, 201, JSON.stringify(sent.body));
        const id = sent.body.data.id;
        const read = await waitFor(async () => {
          const r = await call("GET", `/messages/${id}`);
          return r.body.data?.status === "read" ? r.body.data : null;
        }, { timeoutMs: 15_000, what: `message ${id} to reach read` });
        assert.match(read.waMessageId, /^wamid\./);
      });

      await t.step(
        "inbound media is downloaded and served by a signed URL",
        async () => {
          await inbound({
            from: "+5491122334455",
            type: "image",
            image: {
              mimeType: "image/png",
              dataBase64: PNG_BASE64,
              caption: "pic",
            },
          });
          const conversation = await conversationOf("+5491122334455");
          const image = await waitFor(async () => {
            const r = await call(
              "GET",
              `/conversations/${conversation.id}/messages`,
            );
            return r.body.data.find((m: Record<string, unknown>) =>
              m.type === "image" && m.mediaId
            );
          }, { timeoutMs: 15_000, what: "the image to be downloaded" });
          const media = await call("GET", `/media/${image.mediaId}`);
          assert.equal(media.status, 200, JSON.stringify(media.body));
          assert.equal(media.body.data.mimeType, "image/png");
          const file = await fetch(media.body.data.url);
          assert.equal(file.status, 200);
          assert.equal(file.headers.get("content-type"), "image/png");
          assert.deepEqual(
            new Uint8Array(await file.arrayBuffer()),
            decodeBase64(PNG_BASE64),
          );
          const tampered = await fetch(
            media.body.data.url.replace(/signature=[^&]+/, "signature=00"),
          );
          await tampered.body?.cancel();
          assert.notEqual(tampered.status, 200);
        },
      );

      await t.step(
        "free text after the window closed is 422 SERVICE_WINDOW_EXPIRED",
        async () => {
          const dayAgo = Math.floor(Date.now() / 1000) - 25 * 3600;
          await inbound({
            from: "+5491155556666",
            type: "text",
            text: { body: "old" },
            timestamp: dayAgo,
          });
          const conversation = await conversationOf("+5491155556666");
          assert.ok(
            conversation.serviceWindowExpiresAt < new Date().toISOString(),
            `window still open: ${conversation.serviceWindowExpiresAt}`,
          );
          const r = await call("POST", "/messages", {
            phoneNumberId: channel.id,
            to: "+5491155556666",
            type: "text",
            text: { body: "late" },
          });
          assert.equal(r.status, 422, JSON.stringify(r.body));
          assert.equal(r.body.error.code, "SERVICE_WINDOW_EXPIRED");
        },
      );

      await t.step(
        "a template that is not approved is 422 TEMPLATE_NOT_APPROVED",
        async () => {
          await cliJson([
            "templates",
            "create",
            "--account",
            "acme",
            "--name",
            "promo",
            "--language",
            "es_AR",
            "--category",
            "MARKETING",
            "--status",
            "pending",
            "--components",
            '[{"type":"BODY","text":"Promo"}]',
          ], env);
          const r = await call("POST", "/messages", {
            phoneNumberId: channel.id,
            to: "+5491177778888",
            type: "template",
            template: { name: "promo", language: { code: "es_AR" } },
          });
          assert.equal(r.status, 422, JSON.stringify(r.body));
          assert.equal(r.body.error.code, "TEMPLATE_NOT_APPROVED");
        },
      );

      await t.step(
        "SIGTERM shuts the server down with exit code 0",
        async () => {
          const status = await within(server.stop(), 15_000, "serve to exit");
          assert.equal(status.code, 0, server.output());
          assert.equal(status.signal, null);
          const gone = await fetch(`${server.baseUrl}/healthz`).then(
            async (r) => {
              await r.body?.cancel();
              return false;
            },
            () => true,
          );
          assert.ok(gone, "still answering after exit");
        },
      );
    } finally {
      await server[Symbol.asyncDispose]();
    }
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("serve without SECRET_KEY exits non-zero with a clear message", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "bm-e2e-serve-" });
  try {
    const proc = new Proc(["serve"], {
      PORT: String(freePort()),
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
    });
    const status = await within(proc.status, 30_000, "serve to exit");
    assert.notEqual(status.code, 0);
    assert.match(proc.stderr, /SECRET_KEY is not set/);
    assert.doesNotMatch(proc.stderr, /^\s+at /m, proc.stderr);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
