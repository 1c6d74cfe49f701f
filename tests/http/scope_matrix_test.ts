// Every operation of the OpenAPI document against keys with and without its
// scope, and against an agent's user token. New routes are covered as soon as
// they appear in the document.
import assert from "node:assert/strict";
import { createHarness, type Harness } from "../_harness.ts";
import { SCOPES } from "../../src/domain/accounts/scopes.ts";
import {
  apiOperations,
  type ApiRequest,
  assertErrorBody,
  buildRequest,
  type Fixture,
  loadDocument,
  type Operation,
  routeTest,
  seedTenant,
  send,
} from "./_routes.ts";

async function operations(h: Harness): Promise<Operation[]> {
  const ops = apiOperations(await loadDocument(h));
  assert.ok(ops.length > 0, "the document lists operations");
  return ops;
}

function requiredScope(op: Operation) {
  assert.ok(op.scope, `${op.label} declares no single known scope`);
  return op.scope;
}

/**
 * A request built from the fixture must succeed; one with guessed values (a
 * route _routes.ts does not know yet) must at least pass auth without a 5xx.
 */
async function assertLetThrough(
  h: Harness,
  op: Operation,
  input: { fx: Fixture; key: string },
) {
  let req: ApiRequest;
  let known = true;
  try {
    req = buildRequest(op, input.fx, { strict: true });
  } catch {
    known = false;
    req = buildRequest(op, input.fx);
  }
  const res = await send(h, req, input.key);
  const where = `${op.label} -> ${res.status} ${JSON.stringify(res.body)}`;
  assert.notEqual(res.status, 401, where);
  assert.notEqual(res.status, 403, where);
  assert.ok(res.status < 500, where);
  if (known) assert.ok(res.status >= 200 && res.status < 300, where);
}

Deno.test("every /api/v2 operation requires exactly one known scope", async () => {
  await using h = await createHarness();
  const ops = await operations(h);
  const problems = ops
    .filter((op) => !op.scope)
    .map((op) => `${op.label}: security ${JSON.stringify(op.op.security)}`);
  assert.deepEqual(problems, [], "operations without a single known scope");
  for (const op of ops) {
    assert.deepEqual(op.op.security, [{ bearerAuth: [op.scope] }], op.label);
  }
});

routeTest(
  "a key lacking an operation's scope gets 403 INSUFFICIENT_SCOPE",
  async (h, t) => {
    const fx = await seedTenant(h, h.tenant, { label: "a" });
    for (const op of await operations(h)) {
      await t.step(op.label, async () => {
        const scope = requiredScope(op);
        const key = await h.makeKey(
          h.tenant.account.id,
          SCOPES.filter((s) => s !== scope),
        );
        const res = await send(h, buildRequest(op, fx), key);
        assertErrorBody(res, 403, "INSUFFICIENT_SCOPE", op.label);
        assert.deepEqual(res.body.error.details, { requiredScope: scope });
        assert.ok(res.body.error.message.includes(`"${scope}"`));
        assert.equal("data" in res.body, false);
      });
    }
  },
);

routeTest(
  "a key with only an operation's scope is let through",
  async (h, t) => {
    const fx = await seedTenant(h, h.tenant, { label: "a" });
    for (const op of await operations(h)) {
      await t.step(op.label, async () => {
        const key = await h.makeKey(h.tenant.account.id, [requiredScope(op)]);
        await assertLetThrough(h, op, { fx, key });
      });
    }
  },
);

// What agents (user tokens, panel sessions) may do on each route: agent_access_test.ts.
