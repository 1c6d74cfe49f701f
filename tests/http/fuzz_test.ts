// The API under a fixed-seed fuzz run (tests/_support/fuzz): requests drawn
// from the served OpenAPI document and signed Meta webhooks must never get a
// 5xx or an error outside the documented codes, and every stored row must
// stay readable afterwards. `deno run -A scripts/fuzz.ts` runs 100,000.
import assert from "node:assert/strict";
import fc from "fast-check";
import { DOCUMENTED_STATUS, SPEC_ERROR_CODES } from "../_support/fuzz/codes.ts";
import { judge, summarize } from "../_support/fuzz/oracle.ts";
import { type FuzzResult, runFuzz } from "../_support/fuzz/run.ts";
import type { FuzzRequest } from "../_support/fuzz/requests.ts";
import { anyJson, applyMutations, mutation } from "../_support/fuzz/mutate.ts";

const SEED = 20261122;
const RUNS = 3_000;

/** Operations whose handlers the run must reach (a 2xx), not only their validators. */
const REACHED = [
  "GET /contacts/{id}",
  "GET /conversations/{id}/messages",
  "PATCH /conversations/{id}",
  "POST /messages/batch",
  "POST /webhooks",
  "POST /meta/webhook",
];

const get: FuzzRequest = {
  label: "/contacts/{id}",
  method: "GET",
  url: "/api/v2/contacts/x",
  headers: {},
};
const json = "application/json";
const error = (code: string) =>
  JSON.stringify({ error: { code, message: "m" }, meta: {} });

Deno.test("fuzz oracle: every code of the spec's table has a documented status", () => {
  for (const code of SPEC_ERROR_CODES) assert.ok(DOCUMENTED_STATUS[code], code);
});

Deno.test("fuzz oracle: rejects a 5xx, a bare error, an undocumented code and a wrong status", () => {
  const reply = (status: number, text: string, contentType = json) =>
    judge(get, { status, contentType, text });
  assert.equal(reply(500, error("INTERNAL_ERROR")), "server error");
  assert.equal(reply(503, "<html>", "text/html"), "server error");
  assert.match(reply(404, "Not Found", "text/plain")!, /not JSON/);
  assert.match(reply(400, JSON.stringify({ error: "bad" }))!, /not \{ error/);
  assert.equal(
    reply(409, error("SOMETHING_NEW")),
    "undocumented code SOMETHING_NEW",
  );
  assert.equal(
    reply(404, error("VALIDATION_ERROR")),
    "code VALIDATION_ERROR is documented as 400",
  );
  assert.equal(reply(404, error("CONTACT_NOT_FOUND")), undefined);
  assert.equal(reply(200, "{}"), undefined);
});

Deno.test("fuzz: mutating a body never changes the generated values it came from", () => {
  const shared = {};
  const body = { a: { b: 1 } };
  applyMutations(body, [
    { kind: "retype", at: 1, value: shared },
    { kind: "add", at: 1, key: "grown", value: 1 },
    { kind: "bomb", at: 0, shape: "wide-object", size: 64 },
  ]);
  assert.deepEqual(shared, {});
  assert.deepEqual(body, { a: { b: 1 } });
});

Deno.test("fuzz: a seed and a path regenerate the same value", async () => {
  const arb = fc.tuple(anyJson, fc.array(mutation, { maxLength: 3 }))
    .map(([value, ms]) => applyMutations(value, ms));
  const first = fc.sample(arb, { seed: SEED, numRuns: 50 });
  assert.deepEqual(fc.sample(arb, { seed: SEED, numRuns: 50 }), first);
  const replayed: unknown[] = [];
  await fc.assert(
    fc.asyncProperty(arb, (v) => {
      replayed.push(v);
      return Promise.resolve(true);
    }),
    { seed: SEED, numRuns: 1, path: "37" },
  );
  assert.deepEqual(replayed, [first[37]]);
});

function assertClean(result: FuzzResult): void {
  assert.equal(
    result.findings.length,
    0,
    `${result.findings.length} findings (replay one with deno run -A scripts/fuzz.ts --seed ${result.seed} --path P):\n${
      summarize(result.findings, 2)
    }`,
  );
}

/** Operations that answered 2xx at least once: the generator reaches the handlers, not only the validators. */
function succeeded(result: FuzzResult): Set<string> {
  return new Set(
    Object.entries(result.routes).filter(([, outcomes]) =>
      Object.keys(outcomes).some((o) => o.startsWith("2"))
    )
      .map(([route]) => route),
  );
}

/** libSQL is slower per request; a shorter run still covers its SQL paths. */
const RUNS_BY_ENGINE = [["sqlite", RUNS], ["libsql", 500]] as const;

for (const [engine, runs] of RUNS_BY_ENGINE) {
  Deno.test({
    name:
      `[${engine}] fuzz: ${runs} generated requests (seed ${SEED}) get no 5xx, only documented codes, and leave every row readable`,
    sanitizeResources: engine === "sqlite",
    sanitizeOps: engine === "sqlite",
    fn: async () => {
      const result = await runFuzz({ seed: SEED, runs, engine });
      assert.equal(result.generated, runs);
      assert.ok(result.walked > 100, `walk sent ${result.walked} requests`);
      const ok = succeeded(result);
      // The short libSQL run cannot be expected to reach every handler.
      for (const route of engine === "sqlite" ? REACHED : []) {
        assert.ok(ok.has(route), `${route} never answered 2xx`);
      }
      assertClean(result);
    },
  });
}
