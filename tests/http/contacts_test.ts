// The list endpoint (pagination, filters) is tested in contacts_list_test.ts.
import assert from "node:assert/strict";
import { ManualClock } from "../../src/clock.ts";
import { engineTest, type Harness } from "../_harness.ts";

const CONTACT_KEYS = [
  "createdAt",
  "customFields",
  "email",
  "id",
  "lastMessageAt",
  "name",
  "optedIn",
  "phoneNumber",
  "tags",
  "userId",
  "username",
];

function phone(n: number): string {
  return `+54911223${String(n).padStart(5, "0")}`;
}

async function create(h: Harness, body: Record<string, unknown>) {
  const res = await h.request("POST", "/api/v2/contacts", { body });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data;
}

engineTest(
  "POST /contacts creates a contact in the exact wire shape",
  async (h) => {
    const res = await h.request("POST", "/api/v2/contacts", {
      body: {
        phoneNumber: "5491122334455",
        name: "Ana López",
        email: "ana@example.com",
        tags: [" vip ", "vip", "lead"],
        customFields: { plan: "gold", visits: 3, active: true, gone: null },
      },
    });
    assert.equal(res.status, 201);
    const data = res.body.data;
    assert.deepEqual(Object.keys(data).sort(), CONTACT_KEYS);
    assert.match(data.id, /^[0-9a-f-]{36}$/);
    assert.deepEqual({ ...data, id: undefined }, {
      id: undefined,
      phoneNumber: "+5491122334455",
      userId: null,
      username: null,
      name: "Ana López",
      email: "ana@example.com",
      tags: ["vip", "lead"],
      customFields: { plan: "gold", visits: 3, active: true },
      optedIn: true,
      lastMessageAt: null,
      createdAt: h.clock.now().toISOString(),
    });
    assert.equal(typeof res.body.meta.requestId, "string");
  },
);

engineTest("POST /contacts defaults a bare phone-only contact", async (h) => {
  const data = await create(h, { phoneNumber: "+1 (555) 010-9999" });
  assert.equal(data.phoneNumber, "+15550109999");
  assert.equal(data.name, null);
  assert.equal(data.email, null);
  assert.deepEqual(data.tags, []);
  assert.deepEqual(data.customFields, {});
  assert.equal(data.optedIn, true);
});

engineTest(
  "POST /contacts records a contact.created event in the wire shape",
  async (h) => {
    const data = await create(h, { phoneNumber: phone(1), name: "Eve" });
    const rows = await h.container.db.selectFrom("events").selectAll()
      .where("type", "=", "contact.created").execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.account_id, h.tenant.account.id);
    assert.equal(rows[0]!.created_at, data.createdAt);
    assert.deepEqual(JSON.parse(rows[0]!.data), data);
    const dup = await h.request("POST", "/api/v2/contacts", {
      body: { phoneNumber: phone(1) },
    });
    assert.equal(dup.status, 409);
    const after = await h.container.db.selectFrom("events").select("id")
      .execute();
    assert.equal(after.length, 1, "a rejected create records no event");
  },
);

engineTest(
  "POST /contacts rejects a duplicate phone, also its Argentine variant",
  async (h) => {
    const first = await create(h, { phoneNumber: "+5491122334455" });
    for (const phoneNumber of ["+5491122334455", "541122334455"]) {
      const res = await h.request("POST", "/api/v2/contacts", {
        body: { phoneNumber },
      });
      assert.equal(res.status, 409);
      assert.equal(res.body.error.code, "CONTACT_ALREADY_EXISTS");
      assert.equal(res.body.error.details.contactId, first.id);
    }
    const other = await h.makeTenant("dup-other");
    const theirs = await h.request("POST", "/api/v2/contacts", {
      key: other.key,
      body: { phoneNumber: "+5491122334455" },
    });
    assert.equal(
      theirs.status,
      201,
      "another account may have the same number",
    );
  },
);

engineTest(
  "POST /contacts rejects an invalid phone with INVALID_PHONE",
  async (h) => {
    for (const phoneNumber of ["12", "+00012345", "hello", "+54 9 11"]) {
      const res = await h.request("POST", "/api/v2/contacts", {
        body: { phoneNumber },
      });
      assert.equal(res.status, 400, phoneNumber);
      assert.equal(res.body.error.code, "INVALID_PHONE");
      assert.ok(res.body.error.message.includes(`"${phoneNumber}"`));
    }
  },
);

const BAD_CREATES: [string, unknown, RegExp][] = [
  ["missing phone", { name: "x" }, /"phoneNumber": is required/],
  ["phone of wrong type", { phoneNumber: 5491122334455 }, /"phoneNumber"/],
  ["unknown field", { phoneNumber: phone(2), nickname: "x" }, /"nickname"/],
  ["name too long", { phoneNumber: phone(2), name: "n".repeat(257) }, /"name"/],
  ["empty name", { phoneNumber: phone(2), name: "  " }, /"name"/],
  ["bad e-mail", { phoneNumber: phone(2), email: "nope" }, /"email"/],
  ["tags not an array", { phoneNumber: phone(2), tags: "vip" }, /"tags"/],
  [
    "tag too long",
    { phoneNumber: phone(2), tags: ["t".repeat(65)] },
    /"tags.0"/,
  ],
  [
    "too many tags",
    {
      phoneNumber: phone(2),
      tags: Array.from({ length: 51 }, (_, i) => `t${i}`),
    },
    /"tags"/,
  ],
  [
    "custom fields array",
    { phoneNumber: phone(2), customFields: [] },
    /"customFields"/,
  ],
  [
    "nested custom field",
    { phoneNumber: phone(2), customFields: { a: { b: 1 } } },
    /"customFields.a"/,
  ],
  [
    "too many custom fields",
    {
      phoneNumber: phone(2),
      customFields: Object.fromEntries(
        Array.from({ length: 51 }, (_, i) => [`k${i}`, i]),
      ),
    },
    /at most 50 keys/,
  ],
  ["body is an array", [], /expected object/],
];

engineTest("POST /contacts rejects bad bodies with a clear 400", async (h) => {
  for (const [what, body, message] of BAD_CREATES) {
    const res = await h.request("POST", "/api/v2/contacts", { body });
    assert.equal(res.status, 400, what);
    assert.equal(res.body.error.code, "VALIDATION_ERROR", what);
    assert.match(res.body.error.message, message, what);
  }
  const count = await h.container.db.selectFrom("contacts").select("id")
    .execute();
  assert.equal(count.length, 0);
});

engineTest(
  "POST and PATCH /contacts reject a non-JSON body with 415",
  async (h) => {
    const data = await create(h, { phoneNumber: phone(3) });
    for (
      const [method, path] of [
        ["POST", "/api/v2/contacts"],
        ["PATCH", `/api/v2/contacts/${data.id}`],
      ] as const
    ) {
      const res = await h.request(method, path, {
        rawBody: "name=x",
        headers: { "content-type": "application/x-www-form-urlencoded" },
      });
      assert.equal(res.status, 415, method);
      assert.equal(res.body.error.code, "UNSUPPORTED_MEDIA_TYPE");
    }
  },
);

engineTest(
  "GET /contacts/:id returns the contact; unknown or foreign ids are 404",
  async (h) => {
    const data = await create(h, { phoneNumber: phone(4), name: "Bo" });
    const res = await h.request("GET", `/api/v2/contacts/${data.id}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, data);

    const other = await h.makeTenant("get-other");
    const foreign = await h.request("GET", `/api/v2/contacts/${data.id}`, {
      key: other.key,
    });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.error.code, "CONTACT_NOT_FOUND");
    assert.equal(
      foreign.body.error.message,
      `Cannot find contact "${data.id}"`,
    );

    const unknown = "01900000-0000-7000-8000-000000000000";
    const missing = await h.request("GET", `/api/v2/contacts/${unknown}`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, "CONTACT_NOT_FOUND");

    const bad = await h.request("GET", "/api/v2/contacts/not-a-uuid");
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /"id": must be a UUID/);
  },
);

engineTest("PATCH /contacts/:id changes only the given fields", async (h) => {
  const data = await create(h, {
    phoneNumber: phone(5),
    name: "Cy",
    email: "cy@example.com",
    tags: ["a", "b"],
    customFields: { keep: "yes", drop: 1, change: "old" },
  });
  (h.clock as ManualClock).advance(60_000);
  const res = await h.request("PATCH", `/api/v2/contacts/${data.id}`, {
    body: {
      customFields: { drop: null, change: "new", added: false },
      tags: ["c", " c "],
    },
  });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.data, {
    ...data,
    tags: ["c"],
    customFields: { keep: "yes", change: "new", added: false },
  });

  const cleared = await h.request("PATCH", `/api/v2/contacts/${data.id}`, {
    body: { name: null, email: null, optedIn: false, phoneNumber: phone(6) },
  });
  assert.equal(cleared.status, 200);
  assert.equal(cleared.body.data.name, null);
  assert.equal(cleared.body.data.email, null);
  assert.equal(cleared.body.data.optedIn, false);
  assert.equal(cleared.body.data.phoneNumber, phone(6));
  assert.equal(cleared.body.data.createdAt, data.createdAt);

  const again = await h.request("GET", `/api/v2/contacts/${data.id}`);
  assert.deepEqual(again.body.data, cleared.body.data);
});

engineTest(
  "PATCH /contacts/:id rejects a phone held by another contact",
  async (h) => {
    const a = await create(h, { phoneNumber: "+5491122334455" });
    const b = await create(h, { phoneNumber: phone(7) });
    const res = await h.request("PATCH", `/api/v2/contacts/${b.id}`, {
      body: { phoneNumber: "+541122334455" },
    });
    assert.equal(res.status, 409);
    assert.equal(res.body.error.code, "CONTACT_ALREADY_EXISTS");
    assert.equal(res.body.error.details.contactId, a.id);
    const own = await h.request("PATCH", `/api/v2/contacts/${a.id}`, {
      body: { phoneNumber: "5491122334455" },
    });
    assert.equal(own.status, 200, "a contact may keep its own number");
    const invalid = await h.request("PATCH", `/api/v2/contacts/${b.id}`, {
      body: { phoneNumber: "123" },
    });
    assert.equal(invalid.status, 400);
    assert.equal(invalid.body.error.code, "INVALID_PHONE");
  },
);

engineTest(
  "PATCH /contacts/:id rejects bad bodies and foreign ids",
  async (h) => {
    const data = await create(h, { phoneNumber: phone(8), customFields: {} });
    const path = `/api/v2/contacts/${data.id}`;
    const cases: [string, unknown, RegExp][] = [
      ["empty body", {}, /send at least one field to change/],
      ["unknown field", { lastMessageAt: null }, /"lastMessageAt"/],
      ["optedIn of wrong type", { optedIn: "yes" }, /"optedIn"/],
      ["name too long", { name: "n".repeat(257) }, /"name"/],
      ["tags null", { tags: null }, /"tags"/],
    ];
    for (const [what, body, message] of cases) {
      const res = await h.request("PATCH", path, { body });
      assert.equal(res.status, 400, what);
      assert.equal(res.body.error.code, "VALIDATION_ERROR", what);
      assert.match(res.body.error.message, message, what);
    }
    const bad = await h.request("PATCH", "/api/v2/contacts/123", {
      body: { name: "x" },
    });
    assert.equal(bad.status, 400);
    const other = await h.makeTenant("patch-other");
    const foreign = await h.request("PATCH", path, {
      key: other.key,
      body: { name: "stolen" },
    });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.error.code, "CONTACT_NOT_FOUND");
    const unchanged = await h.request("GET", path);
    assert.deepEqual(unchanged.body.data, data);
  },
);

engineTest(
  "PATCH /contacts/:id keeps at most 50 custom fields after the merge",
  async (h) => {
    const fields = Object.fromEntries(
      Array.from({ length: 50 }, (_, i) => [`k${i}`, i]),
    );
    const data = await create(h, {
      phoneNumber: phone(9),
      customFields: fields,
    });
    const res = await h.request("PATCH", `/api/v2/contacts/${data.id}`, {
      body: { customFields: { one_more: 1 } },
    });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /at most 50 keys/);
    const swap = await h.request("PATCH", `/api/v2/contacts/${data.id}`, {
      body: { customFields: { one_more: 1, k0: null } },
    });
    assert.equal(swap.status, 200);
    assert.equal(Object.keys(swap.body.data.customFields).length, 50);
  },
);

engineTest("contacts endpoints need their scopes", async (h) => {
  const readOnly = await h.makeKey(h.tenant.account.id, ["contacts:read"]);
  const write = await h.request("POST", "/api/v2/contacts", {
    key: readOnly,
    body: { phoneNumber: phone(10) },
  });
  assert.equal(write.status, 403);
  assert.equal(write.body.error.code, "INSUFFICIENT_SCOPE");
  const writeOnly = await h.makeKey(h.tenant.account.id, ["contacts:write"]);
  const read = await h.request("GET", "/api/v2/contacts", { key: writeOnly });
  assert.equal(read.status, 403);
});
