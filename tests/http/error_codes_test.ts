// Every code of the code -> status table, thrown from a route: the status is
// the table's, a 4xx keeps its code and message, and every 5xx goes out as
// the spec's fixed INTERNAL_ERROR body with nothing of the cause in it.
import assert from "node:assert/strict";
import { newRouter } from "../../src/http/openapi.ts";
import { STATUS_BY_CODE } from "../../src/http/errors.ts";
import { AppError, type ErrorCode } from "../../src/errors.ts";
import { createHarness, type TestResponse } from "../_harness.ts";
import { API_PREFIX } from "./_routes.ts";

/** Looks like what an internal message may carry: a storage key, a host, a query. */
const SECRET = "media/acct-7f3a/s3-bucket-prod.internal/AKIA1234SECRET";

function throwingRoutes() {
  const router = newRouter();
  router.get("/_test/throw/:code", (c) => {
    throw new AppError(
      c.req.param("code") as ErrorCode,
      `Cannot read "${SECRET}": select * from blobs failed`,
      {
        details: { storageKey: SECRET },
        cause: new Error(SECRET),
        retryAfterMs: 2_000,
      },
    );
  });
  return router;
}

function assertNoSecret(res: TestResponse, what: string): void {
  assert.ok(!JSON.stringify(res.body).includes(SECRET), `${what}: body leaks`);
  for (const [name, value] of res.headers) {
    assert.ok(!value.includes(SECRET), `${what}: header ${name} leaks`);
  }
}

Deno.test("every code of the error table gets its status, and every 5xx the fixed INTERNAL_ERROR body", async () => {
  await using h = await createHarness({
    extensions: () => ({ api: [throwingRoutes()] }),
  });
  const codes = Object.keys(STATUS_BY_CODE) as ErrorCode[];
  assert.ok(codes.length > 20, "the table is walked, not a sample");
  let serverErrors = 0;
  for (const code of codes) {
    const status = STATUS_BY_CODE[code];
    const res = await h.request("GET", `${API_PREFIX}/_test/throw/${code}`);
    assert.equal(res.status, status, code);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    const meta = { requestId: res.headers.get("x-request-id") };
    if (status >= 500) {
      serverErrors++;
      assert.deepEqual(res.body, {
        error: { code: "INTERNAL_ERROR", message: "Internal server error" },
        meta,
      }, code);
      assertNoSecret(res, code);
    } else {
      assert.equal(res.body.error.code, code);
      assert.match(res.body.error.message, /^Cannot read /, code);
      assert.deepEqual(res.body.meta, meta, code);
    }
    if (status === 401) {
      assert.equal(res.headers.get("www-authenticate"), "Bearer", code);
    }
    // Retry-After is a hint, not an internal, and a 503 needs it most.
    assert.equal(res.headers.get("retry-after"), "2", code);
  }
  assert.ok(serverErrors >= 4, "500, 502 and both 503 codes were walked");
});
