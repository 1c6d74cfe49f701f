import assert from "node:assert/strict";
import { createHarness, engineTest, type Harness } from "../_harness.ts";
import { assertErrorBody } from "../http/_routes.ts";

const HOOK = "http://127.0.0.1:9/hook";

async function create(h: Harness, body: Record<string, unknown>) {
  return await h.request("POST", "/api/v2/webhooks", { body });
}

engineTest(
  "POST /webhooks returns the secret once and GET never shows it or header values",
  async (h) => {
    const res = await create(h, {
      url: HOOK,
      events: ["message.received", "contact.created", "message.received"],
      description: "CRM",
      headers: { "X-Api-Key": "receiver-key-123", Authorization: "Basic abc" },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const hook = res.body.data;
    assert.match(hook.secret, /^whsec_[0-9A-Za-z]{40}$/);
    assert.deepEqual(hook.events, ["message.received", "contact.created"]);
    assert.deepEqual(hook.headers, {
      "X-Api-Key": "********",
      Authorization: "********",
    });
    assert.equal(hook.enabled, true);
    assert.equal(hook.consecutiveFailures, 0);
    assert.equal(hook.lastDeliveryAt, null);
    assert.equal(hook.lastDeliveryStatus, null);
    assert.equal(hook.disabledAt, null);
    assert.equal(hook.disabledReason, null);

    const one = await h.request("GET", `/api/v2/webhooks/${hook.id}`);
    assert.equal(one.status, 200);
    assert.equal("secret" in one.body.data, false);
    assert.deepEqual(one.body.data.headers, hook.headers);
    const list = await h.request("GET", "/api/v2/webhooks");
    assert.deepEqual(list.body.data.map((w: { id: string }) => w.id), [
      hook.id,
    ]);
    assert.equal("secret" in list.body.data[0], false);

    // At rest: neither the secret nor a header value is stored in clear.
    const row = await h.container.db.selectFrom("webhooks").selectAll()
      .where("id", "=", hook.id).executeTakeFirstOrThrow();
    const stored = JSON.stringify(row);
    assert.equal(stored.includes(hook.secret), false);
    assert.equal(stored.includes("receiver-key-123"), false);
    assert.equal(stored.includes("Basic abc"), false);
  },
);

const INVALID: Array<[string, Record<string, unknown>, string]> = [
  ["a missing url", { url: undefined }, "url"],
  ["a url that is not a URL", { url: "not a url" }, "url"],
  ["an ftp url", { url: "ftp://example.com/x" }, "url"],
  ["a url with credentials", { url: "http://u:p@127.0.0.1:9/" }, "url"],
  ["an over-long url", { url: `http://127.0.0.1/${"a".repeat(2100)}` }, "url"],
  ["no events", { events: [] }, "events"],
  ["an unknown event", { events: ["message.deleted"] }, "events.0"],
  ["events as a string", { events: "contact.created" }, "events"],
  ["11 headers", {
    headers: Object.fromEntries(
      Array.from({ length: 11 }, (_, i) => [`X-H${i}`, "v"]),
    ),
  }, "headers"],
  [
    "a header name with a space",
    { headers: { "Bad Name": "v" } },
    "headers.Bad Name",
  ],
  ["a 257-character header name", {
    headers: { [`X-${"a".repeat(255)}`]: "v" },
  }, `headers.X-${"a".repeat(255)}`],
  ["names equal but for case", {
    headers: { "X-Token": "a", "x-token": "b" },
  }, "headers.x-token"],
  [
    "a 1025-character value",
    { headers: { "X-A": "v".repeat(1025) } },
    "headers.X-A",
  ],
  [
    "a value with a line break",
    { headers: { "X-A": "a\r\nX-B: c" } },
    "headers.X-A",
  ],
  ["a number as value", { headers: { "X-A": 1 } }, "headers.X-A"],
  [
    "Content-Type",
    { headers: { "content-type": "text/plain" } },
    "headers.content-type",
  ],
  ["Host", { headers: { Host: "evil.example" } }, "headers.Host"],
  [
    "X-Service-Signature",
    { headers: { "X-Service-Signature": "t=1,v1=0" } },
    "headers.X-Service-Signature",
  ],
  ["X-Service-First-Attempt-At", {
    headers: { "x-service-first-attempt-at": "x" },
  }, "headers.x-service-first-attempt-at"],
  [
    "Transfer-Encoding",
    { headers: { "Transfer-Encoding": "chunked" } },
    "headers.Transfer-Encoding",
  ],
  ["an unknown field", { secret: "mine" }, ""],
];

engineTest(
  "POST /webhooks answers a clear 400 naming the field for each broken rule",
  async (h) => {
    for (const [what, patch, field] of INVALID) {
      const res = await create(h, {
        url: HOOK,
        events: ["contact.created"],
        ...patch,
      });
      assertErrorBody(res, 400, "VALIDATION_ERROR", what);
      if (field) {
        assert.ok(
          res.body.error.message.includes(`"${field}"`),
          `${what}: ${res.body.error.message} does not name "${field}"`,
        );
      }
    }
    assert.equal(
      (await h.request("GET", "/api/v2/webhooks")).body.data.length,
      0,
    );
  },
);

Deno.test("POST /webhooks refuses private and http targets unless the server allows them", async () => {
  await using h = await createHarness({
    env: {
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: "false",
      WEBHOOK_ALLOW_HTTP: "false",
    },
  });
  for (
    const url of [
      "https://127.0.0.1/hook",
      "https://10.1.2.3/hook",
      "https://[::1]/hook",
      "https://169.254.169.254/latest/meta-data",
      "https://0x7f.1/hook",
      "https://localhost/hook",
      "http://93.184.215.14/hook",
    ]
  ) {
    const res = await create(h, { url, events: ["contact.created"] });
    assertErrorBody(res, 400, "VALIDATION_ERROR", url);
    assert.match(res.body.error.message, /^Invalid request body "url": /, url);
  }
});

engineTest(
  "PATCH /webhooks/:id keeps omitted headers, replaces them, and deletes them with null or {}",
  async (h) => {
    const hook = (await create(h, {
      url: HOOK,
      events: ["contact.created"],
      headers: { "X-One": "1" },
    })).body.data;
    const path = `/api/v2/webhooks/${hook.id}`;
    const renamed = await h.request("PATCH", path, {
      body: { description: "renamed" },
    });
    assert.equal(renamed.status, 200);
    assert.deepEqual(renamed.body.data.headers, { "X-One": "********" });
    assert.equal(renamed.body.data.description, "renamed");
    const replaced = await h.request("PATCH", path, {
      body: { headers: { "X-Two": "2", "X-Three": "3" } },
    });
    assert.deepEqual(replaced.body.data.headers, {
      "X-Two": "********",
      "X-Three": "********",
    });
    for (const none of [null, {}]) {
      await h.request("PATCH", path, { body: { headers: { "X-Again": "x" } } });
      const cleared = await h.request("PATCH", path, {
        body: { headers: none },
      });
      assert.equal(cleared.status, 200);
      assert.equal(cleared.body.data.headers, null, JSON.stringify(none));
    }
    const empty = await h.request("PATCH", path, { body: {} });
    assertErrorBody(empty, 400, "VALIDATION_ERROR");
    const bad = await h.request("PATCH", path, {
      body: { headers: { "X-Service-Webhook-Id": "x" } },
    });
    assertErrorBody(bad, 400, "VALIDATION_ERROR");
    assert.match(bad.body.error.message, /"headers\.X-Service-Webhook-Id"/);
  },
);

engineTest(
  "every X-Service-* name is reserved, in any case, on /api/v2/webhooks and the panel aliases",
  async (h) => {
    const ok = (await create(h, { url: HOOK, events: ["contact.created"] }))
      .body.data;
    const panel = await h.request("POST", "/api/v1/webhook-subscriptions", {
      body: { url: HOOK, events: ["contact.created"] },
    });
    assert.equal(panel.status, 201, JSON.stringify(panel.body));
    const calls = [
      ["POST", "/api/v2/webhooks", { url: HOOK, events: ["contact.created"] }],
      ["PATCH", `/api/v2/webhooks/${ok.id}`, {}],
      ["POST", "/api/v1/webhook-subscriptions", {
        url: HOOK,
        events: ["contact.created"],
      }],
      ["PATCH", `/api/v1/webhook-subscriptions/${panel.body.data.id}`, {}],
    ] as const;
    const names = [
      "X-Service-Foo",
      "x-service-foo",
      "X-SERVICE-WEBHOOK-RETRY",
      "X-Service-",
    ];
    for (const [method, path, body] of calls) {
      for (const name of names) {
        const what = `${method} ${path} with ${name}`;
        const res = await h.request(method, path, {
          body: { ...body, headers: { "X-Fine": "1", [name]: "x" } },
        });
        assertErrorBody(res, 400, "VALIDATION_ERROR", what);
        assert.ok(
          res.body.error.message.includes(`"headers.${name}"`),
          `${what}: ${res.body.error.message}`,
        );
        assert.match(res.body.error.message, /X-Service-\* names are reserved/);
      }
    }
    // A name that merely contains the words is the subscriber's.
    const near = await h.request("PATCH", `/api/v2/webhooks/${ok.id}`, {
      body: { headers: { "X-Services-Key": "1", "My-X-Service-Id": "2" } },
    });
    assert.equal(near.status, 200, JSON.stringify(near.body));
    assert.deepEqual(Object.keys(near.body.data.headers), [
      "X-Services-Key",
      "My-X-Service-Id",
    ]);
  },
);

engineTest(
  "PATCH enabled: true clears an auto-disable and resets the failure counter",
  async (h) => {
    const hook = (await create(h, { url: HOOK, events: ["contact.created"] }))
      .body.data;
    await h.container.db.updateTable("webhooks").set({
      enabled: 0,
      consecutive_failures: 10,
      disabled_at: "2026-11-20T12:00:00.000Z",
      disabled_reason: "auto",
    }).where("id", "=", hook.id).execute();
    const before = await h.request("GET", `/api/v2/webhooks/${hook.id}`);
    assert.equal(before.body.data.enabled, false);
    assert.equal(before.body.data.disabledReason, "auto");
    assert.equal(before.body.data.consecutiveFailures, 10);
    const res = await h.request("PATCH", `/api/v2/webhooks/${hook.id}`, {
      body: { enabled: true },
    });
    assert.equal(res.body.data.enabled, true);
    assert.equal(res.body.data.consecutiveFailures, 0);
    assert.equal(res.body.data.disabledAt, null);
    assert.equal(res.body.data.disabledReason, null);
    const off = await h.request("PATCH", `/api/v2/webhooks/${hook.id}`, {
      body: { enabled: false },
    });
    assert.equal(off.body.data.enabled, false);
    assert.equal(off.body.data.disabledReason, null);
    assert.equal(typeof off.body.data.disabledAt, "string");
  },
);

engineTest(
  "DELETE /webhooks/:id removes it; rotate-secret returns a new secret once",
  async (h) => {
    const hook = (await create(h, { url: HOOK, events: ["contact.created"] }))
      .body.data;
    const rotated = await h.request(
      "POST",
      `/api/v2/webhooks/${hook.id}/rotate-secret`,
    );
    assert.equal(rotated.status, 200);
    assert.match(rotated.body.data.secret, /^whsec_/);
    assert.notEqual(rotated.body.data.secret, hook.secret);
    const del = await h.request("DELETE", `/api/v2/webhooks/${hook.id}`);
    assert.equal(del.status, 200);
    assert.deepEqual(del.body.data, { id: hook.id, deleted: true });
    const gone = await h.request("GET", `/api/v2/webhooks/${hook.id}`);
    assertErrorBody(gone, 404, "WEBHOOK_NOT_FOUND");
    const again = await h.request("DELETE", `/api/v2/webhooks/${hook.id}`);
    assertErrorBody(again, 404, "WEBHOOK_NOT_FOUND");
  },
);

engineTest(
  "the panel aliases /api/v1/webhook-subscriptions take the same fields and rules",
  async (h) => {
    const created = await h.request("POST", "/api/v1/webhook-subscriptions", {
      body: {
        url: HOOK,
        events: ["message.status_changed"],
        headers: { "X-Panel": "yes" },
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.meta, undefined);
    assert.match(created.body.data.secret, /^whsec_/);
    assert.deepEqual(created.body.data.headers, { "X-Panel": "********" });
    const id = created.body.data.id;
    const patched = await h.request(
      "PATCH",
      `/api/v1/webhook-subscriptions/${id}`,
      {
        body: { headers: null, events: ["contact.created"] },
      },
    );
    assert.equal(patched.status, 200);
    assert.equal(patched.body.data.headers, null);
    assert.deepEqual(patched.body.data.events, ["contact.created"]);
    const one = await h.request("GET", `/api/v1/webhook-subscriptions/${id}`);
    assert.equal(one.body.data.id, id);
    assert.equal("secret" in one.body.data, false);
    const list = await h.request("GET", "/api/v1/webhook-subscriptions");
    assert.deepEqual(list.body.data.map((w: { id: string }) => w.id), [id]);
    // Same rules, same errors.
    const bad = await h.request("POST", "/api/v1/webhook-subscriptions", {
      body: { url: HOOK, events: ["contact.created"], headers: { Host: "x" } },
    });
    assertErrorBody(bad, 400, "VALIDATION_ERROR");
    assert.match(bad.body.error.message, /"headers\.Host"/);
    const notJson = await h.request(
      "PATCH",
      `/api/v1/webhook-subscriptions/${id}`,
      {
        rawBody: "{",
        headers: { "content-type": "application/json" },
      },
    );
    assertErrorBody(notJson, 400, "VALIDATION_ERROR");
    const notUuid = await h.request("GET", "/api/v1/webhook-subscriptions/42");
    assertErrorBody(notUuid, 400, "VALIDATION_ERROR");
    // Scopes and isolation hold there too.
    const readOnly = await h.makeKey(h.tenant.account.id, ["webhooks:read"]);
    const denied = await h.request("POST", "/api/v1/webhook-subscriptions", {
      key: readOnly,
      body: { url: HOOK, events: ["contact.created"] },
    });
    assertErrorBody(denied, 403, "INSUFFICIENT_SCOPE");
    const other = await h.makeTenant(
      `other-${crypto.randomUUID().slice(0, 6)}`,
    );
    const foreign = await h.request(
      "GET",
      `/api/v1/webhook-subscriptions/${id}`,
      {
        key: other.key,
      },
    );
    assertErrorBody(foreign, 404, "WEBHOOK_NOT_FOUND");
    const anonymous = await h.request("GET", "/api/v1/webhook-subscriptions", {
      key: null,
    });
    assertErrorBody(anonymous, 401, "UNAUTHORIZED");
  },
);
