// Tenant isolation across every operation of the OpenAPI document: tenant A's
// key never reaches, changes or lists tenant B's rows.
import assert from "node:assert/strict";
import type { Harness } from "../_harness.ts";
import {
  API_PREFIX,
  apiOperations,
  assertErrorBody,
  buildRequest,
  type Fixture,
  fixtureIds,
  type Json,
  loadDocument,
  nextPhone,
  routeTest,
  seedTenant,
  send,
  stringsIn,
  templateSend,
} from "./_routes.ts";

async function twoTenants(h: Harness): Promise<{ a: Fixture; b: Fixture }> {
  const a = await seedTenant(h, h.tenant, { label: "a" });
  const other = await h.makeTenant(`b-${crypto.randomUUID().slice(0, 8)}`);
  const b = await seedTenant(h, other, { label: "b" });
  return { a, b };
}

/** Fails naming every identifier of `b` found anywhere in the body. */
function assertNoneOf(b: Fixture, body: Json, where: string): void {
  const seen = stringsIn(body);
  const leaked = fixtureIds(b).filter((id) => seen.has(id));
  assert.deepEqual(leaked, [], `${where} shows tenant B's rows`);
}

routeTest(
  "tenant A gets 404 for every operation given tenant B's ids",
  async (h, t) => {
    const { a, b } = await twoTenants(h);
    const ops = apiOperations(await loadDocument(h))
      .filter((op) => op.pathParams.length > 0);
    assert.ok(ops.length > 0);
    for (const op of ops) {
      await t.step(op.label, async () => {
        const req = buildRequest(op, a, { pathFrom: b, strict: true });
        const res = await send(h, req, a.tenant.key);
        assertErrorBody(res, 404, /NOT_FOUND$/, `${op.label} with B's ids`);
        assert.equal("data" in res.body, false);
        // The same request with A's own ids works: the 404 is isolation.
        const own = await send(
          h,
          buildRequest(op, a, { strict: true }),
          a.tenant.key,
        );
        assert.ok(own.status < 300, `${op.label} with A's ids: ${own.status}`);
      });
    }
    // Nothing A attempted changed B's rows.
    const contactUrl = `${API_PREFIX}/contacts/${b.contactId}`;
    const contact = await h.request("GET", contactUrl, { key: b.tenant.key });
    assert.equal(contact.body.data.name, "Contact b");
    const conversation = await h.request(
      "GET",
      `${API_PREFIX}/conversations/${b.conversationId}`,
      { key: b.tenant.key },
    );
    assert.equal(conversation.body.data.status, "open");
    assert.equal(conversation.body.data.unreadCount, 2);
  },
);

routeTest(
  "tenant A's lists and lookups never show tenant B's rows",
  async (h, t) => {
    const { a, b } = await twoTenants(h);
    const ops = apiOperations(await loadDocument(h))
      .filter((op) => op.pathParams.length === 0);
    for (const op of ops) {
      await t.step(op.label, async () => {
        const req = buildRequest(op, a, { strict: true });
        const res = await send(h, req, a.tenant.key);
        assert.ok(res.status < 300, `${op.label}: ${JSON.stringify(res.body)}`);
        assertNoneOf(b, res.body, op.label);
        if (op.method === "GET" && Array.isArray(res.body.data)) {
          const ids: string[] = res.body.data.map((row: Json) => row.id);
          const theirs = new Set(fixtureIds(b));
          assert.ok(ids.length > 0, `${op.label} lists A's own rows`);
          assert.deepEqual(ids.filter((id) => theirs.has(id)), [], op.label);
        }
      });
    }
    // B's identifiers as filters find nothing of B's either.
    for (
      const url of [
        `/templates?phoneNumberId=${b.tenant.channel.id}`,
        `/conversations/resolve?phone=${encodeURIComponent(b.contactPhone)}`,
        `/conversations/resolve?channel=${b.tenant.channel.id}&phone=${
          encodeURIComponent(b.contactPhone)
        }`,
        `/conversations?search=${encodeURIComponent(b.contactPhone)}`,
        `/contacts?search=${encodeURIComponent(b.contactPhone)}`,
      ]
    ) {
      const res = await h.request("GET", API_PREFIX + url, {
        key: a.tenant.key,
      });
      assert.ok(res.status < 500, `${url}: ${res.status}`);
      assertNoneOf(b, res.body, url);
    }
  },
);

routeTest(
  "tenant A cannot use B's media key, channel or inbound message id",
  async (h) => {
    const { a, b } = await twoTenants(h);
    const byKey = await h.request(
      "GET",
      `${API_PREFIX}/media/by-key?key=${encodeURIComponent(b.mediaKey)}`,
      { key: a.tenant.key },
    );
    assertErrorBody(byKey, 404, /NOT_FOUND$/, "by-key with B's key");
    assertNoneOf(b, { data: byKey.body.data }, "by-key");

    const sendOnB = await h.request("POST", `${API_PREFIX}/messages`, {
      key: a.tenant.key,
      body: {
        ...templateSend(a, nextPhone()),
        phoneNumberId: b.tenant.channel.id,
      },
    });
    assertErrorBody(sendOnB, 422, "INVALID_CHANNEL", "send on B's channel");

    const batchOnB = await h.request("POST", `${API_PREFIX}/messages/batch`, {
      key: a.tenant.key,
      body: {
        messages: [{
          ...templateSend(a, nextPhone()),
          phoneNumberId: b.tenant.channel.id,
        }],
      },
    });
    assert.equal(batchOnB.status, 202, JSON.stringify(batchOnB.body));
    assert.equal(batchOnB.body.data.accepted, 0);
    assert.equal(batchOnB.body.data.items[0].result, "failed");
    assert.equal(batchOnB.body.data.items[0].error.code, "INVALID_CHANNEL");

    const read = await h.request(
      "POST",
      `${API_PREFIX}/messages/${encodeURIComponent(b.inboundWamid)}/read`,
      { key: a.tenant.key },
    );
    assertErrorBody(read, 404, /NOT_FOUND$/, "read with B's wamid");
  },
);
