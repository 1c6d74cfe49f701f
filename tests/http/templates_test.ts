import assert from "node:assert/strict";
import type { ManualClock } from "../../src/clock.ts";
import { createChannel } from "../../src/domain/channels/channel_service.ts";
import {
  createTemplate,
  type NewTemplate,
} from "../../src/domain/templates/template_service.ts";
import { engineTest, type Harness } from "../_harness.ts";

const BODY = [{
  type: "BODY",
  text: "Hola {{1}}, tu pedido {{2}} está en camino.",
}];

function seed(h: Harness, input: Partial<NewTemplate> = {}) {
  return createTemplate(h.container, {
    accountId: h.tenant.account.id,
    name: "order_update",
    language: "es_AR",
    category: "UTILITY",
    status: "approved",
    components: BODY,
    ...input,
  });
}

function secondChannel(h: Harness) {
  return createChannel(h.container, {
    accountId: h.tenant.account.id,
    phoneNumber: "+15550199999",
    displayName: "second line",
    upstreamPhoneNumberId: `2${crypto.randomUUID().replace(/\D/g, "")}`,
    wabaId: "99",
    accessToken: "token-2",
  });
}

engineTest(
  "GET /templates/:id returns the template in the exact wire shape",
  async (h) => {
    const t = await seed(h, {
      channelId: h.tenant.channel.id,
      metaTemplateId: "1234567890",
    });
    const res = await h.request("GET", `/api/v2/templates/${t.id}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, {
      id: t.id,
      phoneNumberId: h.tenant.channel.id,
      metaTemplateId: "1234567890",
      name: "order_update",
      language: "es_AR",
      category: "UTILITY",
      status: "approved",
      components: BODY,
      createdAt: h.clock.now().toISOString(),
      // What a sync from Meta fills in (issue 28); a hand-made one is local.
      wabaId: null,
      source: "local",
      metaStatus: null,
      parameterFormat: null,
      qualityScore: null,
      rejectedReason: null,
      syncedAt: null,
    });
    const global = await seed(h, { name: "welcome", language: "en_US" });
    const g = await h.request("GET", `/api/v2/templates/${global.id}`);
    assert.equal(g.body.data.phoneNumberId, null);
    assert.equal(g.body.data.metaTemplateId, null);
  },
);

engineTest(
  "GET /templates/:id is 404 NOT_FOUND for unknown and foreign ids",
  async (h) => {
    const t = await seed(h);
    const other = await h.makeTenant("tpl-other");
    const foreign = await h.request("GET", `/api/v2/templates/${t.id}`, {
      key: other.key,
    });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.error.code, "NOT_FOUND");
    assert.equal(foreign.body.error.message, `Cannot find template "${t.id}"`);
    const unknown = "01900000-0000-7000-8000-000000000000";
    const missing = await h.request("GET", `/api/v2/templates/${unknown}`);
    assert.equal(missing.status, 404);
    const bad = await h.request("GET", "/api/v2/templates/order_update");
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /"id": must be a UUID/);
  },
);

engineTest(
  "GET /templates filters by channel (plus global) and status",
  async (h) => {
    const clock = h.clock as ManualClock;
    const second = await secondChannel(h);
    const mine = await seed(h, { channelId: h.tenant.channel.id });
    clock.advance(1_000);
    const global = await seed(h, { name: "welcome", status: "pending" });
    clock.advance(1_000);
    const theirs = await seed(h, { channelId: second.id, status: "rejected" });
    const other = await h.makeTenant("tpl-list-other");
    await createTemplate(h.container, {
      accountId: other.account.id,
      name: "order_update",
      language: "es_AR",
      category: "UTILITY",
      status: "approved",
      components: BODY,
    });
    const ids = async (query: string) => {
      const res = await h.request("GET", `/api/v2/templates?${query}`);
      assert.equal(res.status, 200, query);
      assert.equal(res.body.meta.total, res.body.data.length, query);
      return res.body.data.map((t: { id: string }) => t.id);
    };
    assert.deepEqual(await ids(""), [theirs.id, global.id, mine.id]);
    assert.deepEqual(await ids(`phoneNumberId=${h.tenant.channel.id}`), [
      global.id,
      mine.id,
    ]);
    assert.deepEqual(await ids(`phoneNumberId=${second.id}`), [
      theirs.id,
      global.id,
    ]);
    assert.deepEqual(await ids("status=approved"), [mine.id]);
    assert.deepEqual(
      await ids(`status=rejected&phoneNumberId=${h.tenant.channel.id}`),
      [],
    );
    assert.deepEqual(await ids(`status=pending&phoneNumberId=${second.id}`), [
      global.id,
    ]);
  },
);

engineTest(
  "GET /templates walks every page newest first, each row once",
  async (h) => {
    const clock = h.clock as ManualClock;
    const created: { id: string; createdAt: string }[] = [];
    for (let i = 0; i < 45; i++) {
      // Runs of four share a created_at, so the id breaks the ties.
      if (i % 4 === 0) clock.advance(1_000);
      created.push(await seed(h, { name: `tpl_${i}` }));
    }
    const expected = [...created].sort((a, b) =>
      a.createdAt !== b.createdAt
        ? (a.createdAt < b.createdAt ? 1 : -1)
        : (a.id < b.id ? 1 : -1)
    ).map((t) => t.id);
    const seen: string[] = [];
    for (let page = 1; page <= 5; page++) {
      const res = await h.request(
        "GET",
        `/api/v2/templates?page=${page}&pageSize=10`,
      );
      assert.equal(res.status, 200);
      assert.equal(res.body.meta.total, 45);
      assert.equal(res.body.meta.page, page);
      assert.equal(res.body.meta.pageSize, 10);
      assert.equal(res.body.data.length, page < 5 ? 10 : 5);
      seen.push(...res.body.data.map((t: { id: string }) => t.id));
    }
    assert.deepEqual(seen, expected);
    assert.equal(new Set(seen).size, 45);
    const defaults = await h.request("GET", "/api/v2/templates");
    assert.equal(defaults.body.meta.pageSize, 20);
    assert.equal(defaults.body.meta.page, 1);
    assert.deepEqual(
      defaults.body.data.map((t: { id: string }) => t.id),
      expected.slice(0, 20),
    );
  },
);

engineTest("GET /templates rejects bad query parameters", async (h) => {
  const cases: [string, RegExp][] = [
    ["pageSize=0", /"pageSize"/],
    ["pageSize=101", /"pageSize"/],
    ["page=0", /"page"/],
    ["status=approve", /"status"/],
    ["phoneNumberId=106540352242922", /"phoneNumberId": must be a UUID/],
    ["name=welcome", /"name"/],
  ];
  for (const [query, message] of cases) {
    const res = await h.request("GET", `/api/v2/templates?${query}`);
    assert.equal(res.status, 400, query);
    assert.equal(res.body.error.code, "VALIDATION_ERROR");
    assert.match(res.body.error.message, message, query);
  }
});

engineTest(
  "GET /templates/by-name/:name returns the most recent match",
  async (h) => {
    const clock = h.clock as ManualClock;
    const second = await secondChannel(h);
    const older = await seed(h, { channelId: h.tenant.channel.id });
    clock.advance(1_000);
    const english = await seed(h, { language: "en_US" });
    clock.advance(1_000);
    const newestGlobal = await seed(h);
    clock.advance(1_000);
    const onSecond = await seed(h, { channelId: second.id });
    const get = async (query: string) => {
      const res = await h.request(
        "GET",
        `/api/v2/templates/by-name/order_update${query}`,
      );
      assert.equal(res.status, 200, query);
      return res.body.data.id;
    };
    assert.equal(await get(""), onSecond.id);
    assert.equal(await get("?language=en_US"), english.id);
    // The channel's own template wins over a newer global one.
    assert.equal(
      await get(`?language=es_AR&phoneNumberId=${h.tenant.channel.id}`),
      older.id,
    );
    const third = await createChannel(h.container, {
      accountId: h.tenant.account.id,
      phoneNumber: "+15550188888",
      displayName: "third line",
      upstreamPhoneNumberId: `3${crypto.randomUUID().replace(/\D/g, "")}`,
      wabaId: "99",
      accessToken: "token-3",
    });
    assert.equal(
      await get(`?language=es_AR&phoneNumberId=${third.id}`),
      newestGlobal.id,
    );
    const res = await h.request(
      "GET",
      `/api/v2/templates/by-name/order_update`,
    );
    assert.deepEqual(Object.keys(res.body.data).sort(), [
      "category",
      "components",
      "createdAt",
      "id",
      "language",
      "metaStatus",
      "metaTemplateId",
      "name",
      "parameterFormat",
      "phoneNumberId",
      "qualityScore",
      "rejectedReason",
      "source",
      "status",
      "syncedAt",
      "wabaId",
    ]);
  },
);

/** Names no template can have: each is simply not found. */
const ODD_SPELLINGS = [
  "Order-Update",
  "ORDER_UPDATE",
  "order update",
  "orden_de_compra_ñ",
  "a".repeat(513),
];

engineTest(
  "GET /templates/by-name/:name is 404 when none matches",
  async (h) => {
    await seed(h);
    const other = await h.makeTenant("tpl-name-other");
    for (
      const [path, key] of [
        ["/api/v2/templates/by-name/welcome", undefined],
        ["/api/v2/templates/by-name/order_update?language=en_US", undefined],
        ["/api/v2/templates/by-name/order_update", other.key],
        ...ODD_SPELLINGS.map((name): [string, undefined] => [
          `/api/v2/templates/by-name/${encodeURIComponent(name)}`,
          undefined,
        ]),
      ] as [string, string | undefined][]
    ) {
      const res = await h.request("GET", path, { key });
      assert.equal(res.status, 404, path);
      assert.equal(res.body.error.code, "NOT_FOUND");
      assert.match(res.body.error.message, /^Cannot find template "/);
    }
  },
);

engineTest("GET /templates/by-name/:name rejects bad input", async (h) => {
  const cases: [string, RegExp][] = [
    ["order_update?language=spanish", /"language"/],
    ["order_update?phoneNumberId=123", /"phoneNumberId"/],
    ["order_update?status=approved", /"status"/],
  ];
  for (const [suffix, message] of cases) {
    const res = await h.request("GET", `/api/v2/templates/by-name/${suffix}`);
    assert.equal(res.status, 400, suffix);
    assert.equal(res.body.error.code, "VALIDATION_ERROR");
    assert.match(res.body.error.message, message, suffix);
  }
});

engineTest("templates endpoints need templates:read", async (h) => {
  const t = await seed(h);
  const key = await h.makeKey(h.tenant.account.id, ["contacts:read"]);
  for (
    const path of [
      "/api/v2/templates",
      `/api/v2/templates/${t.id}`,
      "/api/v2/templates/by-name/order_update",
    ]
  ) {
    const res = await h.request("GET", path, { key });
    assert.equal(res.status, 403, path);
    assert.equal(res.body.error.code, "INSUFFICIENT_SCOPE");
  }
});
