// GET /contacts: pagination, filters and bad query parameters.
import assert from "node:assert/strict";
import type { ManualClock } from "../../src/clock.ts";
import { engineTest, type Harness } from "../_harness.ts";

function phone(n: number): string {
  return `+54911223${String(n).padStart(5, "0")}`;
}

async function create(h: Harness, body: Record<string, unknown>) {
  const res = await h.request("POST", "/api/v2/contacts", { body });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data;
}

interface Row {
  id: string;
  createdAt: string;
}

function newestFirst(a: Row, b: Row): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** Reads every page; checks meta on each and that the last page is short. */
async function walk(h: Harness, path: string, pageSize: number) {
  const seen: Row[] = [];
  for (let page = 1;; page++) {
    const sep = path.includes("?") ? "&" : "?";
    const res = await h.request(
      "GET",
      `${path}${sep}page=${page}&pageSize=${pageSize}`,
    );
    assert.equal(res.status, 200);
    assert.equal(res.body.meta.page, page);
    assert.equal(res.body.meta.pageSize, pageSize);
    seen.push(...res.body.data);
    if (page * pageSize >= res.body.meta.total) {
      assert.equal(seen.length, res.body.meta.total);
      return seen;
    }
    assert.equal(res.body.data.length, pageSize);
  }
}

engineTest(
  "GET /contacts walks every page newest first, each row once",
  async (h) => {
    const clock = h.clock as ManualClock;
    const created: Row[] = [];
    for (let i = 0; i < 45; i++) {
      // Runs of three share a created_at, so the id breaks the ties.
      if (i % 3 === 0) clock.advance(1_000);
      created.push(await create(h, { phoneNumber: phone(100 + i) }));
    }
    const other = await h.makeTenant("list-other");
    await h.request("POST", "/api/v2/contacts", {
      key: other.key,
      body: { phoneNumber: phone(500) },
    });
    const expected = [...created].sort(newestFirst).map((r) => r.id);
    const seen = await walk(h, "/api/v2/contacts", 7);
    assert.deepEqual(seen.map((r) => r.id), expected);
    assert.equal(new Set(seen.map((r) => r.id)).size, 45);

    const defaults = await h.request("GET", "/api/v2/contacts");
    assert.deepEqual(
      { ...defaults.body.meta, requestId: undefined },
      { requestId: undefined, page: 1, pageSize: 20, total: 45 },
    );
    assert.deepEqual(
      defaults.body.data.map((r: Row) => r.id),
      expected.slice(0, 20),
    );
    const past = await h.request("GET", "/api/v2/contacts?page=9&pageSize=7");
    assert.deepEqual(past.body.data, []);
    assert.equal(past.body.meta.total, 45);
    const max = await h.request("GET", "/api/v2/contacts?pageSize=100");
    assert.equal(max.body.data.length, 45);
  },
);

engineTest("GET /contacts filters by search and tag", async (h) => {
  const ana = await create(h, {
    phoneNumber: "+5491122334455",
    name: "Ana María",
    tags: ["vip"],
  });
  const bob = await create(h, {
    phoneNumber: "+15550109999",
    name: "Bob",
    email: "Bob.Builder@Example.com",
    tags: ["lead", "vip-2"],
  });
  await create(h, { phoneNumber: "+447700900123", name: "100% real_user" });
  const ids = async (query: string) => {
    const res = await h.request("GET", `/api/v2/contacts?${query}`);
    assert.equal(res.status, 200, query);
    assert.equal(res.body.meta.total, res.body.data.length);
    return res.body.data.map((r: Row) => r.id).sort();
  };
  assert.deepEqual(await ids("search=ana"), [ana.id]);
  assert.deepEqual(await ids("search=ANA%20MAR"), [ana.id]);
  assert.deepEqual(await ids("search=builder%40example"), [bob.id]);
  assert.deepEqual(await ids("search=5491122"), [ana.id]);
  assert.deepEqual(await ids("search=%2B1555"), [bob.id]);
  assert.deepEqual(await ids("search=11%202233-4455"), [ana.id]);
  // LIKE wildcards in the search text are literal.
  const real = await ids("search=real_");
  assert.equal(real.length, 1);
  assert.deepEqual(await ids("search=%25"), real);
  assert.deepEqual(await ids("search=_"), real);
  assert.deepEqual(await ids("search=zzz"), []);
  assert.deepEqual(await ids("tag=vip"), [ana.id]);
  assert.deepEqual(await ids("tag=lead"), [bob.id]);
  assert.deepEqual(await ids("tag=vi"), []);
  assert.deepEqual(await ids("tag=vip&search=bob"), []);
  assert.deepEqual(await ids("tag=vip-2&search=bob"), [bob.id]);
  assert.equal(
    (await ids("search=&tag=")).length,
    3,
    "empty filters are ignored",
  );
});

engineTest("GET /contacts rejects bad query parameters", async (h) => {
  const cases: [string, RegExp][] = [
    ["pageSize=0", /"pageSize"/],
    ["pageSize=101", /"pageSize"/],
    ["page=0", /"page"/],
    ["page=abc", /"page"/],
    ["pageSize=1.5", /"pageSize"/],
    ["sort=name", /"sort"/],
    [`search=${"s".repeat(257)}`, /"search"/],
    [`tag=${"t".repeat(65)}`, /"tag"/],
  ];
  for (const [query, message] of cases) {
    const res = await h.request("GET", `/api/v2/contacts?${query}`);
    assert.equal(res.status, 400, query);
    assert.equal(res.body.error.code, "VALIDATION_ERROR");
    assert.match(res.body.error.message, message, query);
  }
});
