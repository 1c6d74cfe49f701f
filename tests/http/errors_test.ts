// The error envelope across the app: unknown routes, body problems, internal
// failures that must not leak, and the health endpoints.
import assert from "node:assert/strict";
import { sql } from "kysely";
import { DatabaseSync } from "node:sqlite";
import { Hono } from "hono";
import { AppError } from "../../src/errors.ts";
import { handleError } from "../../src/http/errors.ts";
import type { AppEnv } from "../../src/http/env.ts";
import { createLogger } from "../../src/log.ts";
import { createHarness, type TestResponse } from "../_harness.ts";
import { API_PREFIX, assertErrorBody } from "./_routes.ts";

const CONTACTS = `${API_PREFIX}/contacts`;
const INTERNAL = { code: "INTERNAL_ERROR", message: "Internal server error" };
/** Traces of internals that must never reach a client. */
const LEAK_REGEXP =
  /sqlite|libsql|kysely|select |insert |no such|SQL|stack|\.ts\b|\bat \S+ \(|Error:/i;

function assertInternalError(res: TestResponse, what: string): void {
  assert.equal(res.status, 500, what);
  assert.deepEqual(res.body, {
    error: INTERNAL,
    meta: { requestId: res.headers.get("x-request-id") },
  });
  const text = JSON.stringify(res.body);
  assert.doesNotMatch(text.replace(JSON.stringify(INTERNAL), ""), LEAK_REGEXP);
}

Deno.test("unknown routes get a 404 JSON error", async () => {
  await using h = await createHarness();
  assertErrorBody(
    await h.request("GET", `${API_PREFIX}/no-such-thing`),
    404,
    "NOT_FOUND",
  );
  const top = await h.request("GET", "/no-such-thing", { key: null });
  assertErrorBody(top, 404, "NOT_FOUND");
  assert.match(top.headers.get("content-type") ?? "", /^application\/json/);
});

Deno.test("POST /contacts rejects a non-JSON content type with 415", async () => {
  await using h = await createHarness();
  for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
    const res = await h.request("POST", CONTACTS, {
      rawBody: JSON.stringify({ phoneNumber: "+5491122334455" }),
      headers: { "content-type": type },
    });
    assertErrorBody(res, 415, "UNSUPPORTED_MEDIA_TYPE", type);
  }
  const list = await h.request("GET", CONTACTS);
  assert.equal(list.body.meta.total, 0, "nothing was created");
});

Deno.test("POST /contacts rejects malformed JSON with 400 VALIDATION_ERROR", async () => {
  await using h = await createHarness();
  const res = await h.request("POST", CONTACTS, {
    rawBody: '{"phoneNumber": "+5491122334455",',
    headers: { "content-type": "application/json" },
  });
  assertErrorBody(res, 400, "VALIDATION_ERROR");
});

Deno.test("a body above BODY_LIMIT_BYTES gets 413 PAYLOAD_TOO_LARGE", async () => {
  await using h = await createHarness({ env: { BODY_LIMIT_BYTES: "2048" } });
  const res = await h.request("POST", CONTACTS, {
    body: { phoneNumber: "+5491122334455", name: "x".repeat(3000) },
  });
  assertErrorBody(res, 413, "PAYLOAD_TOO_LARGE");
  const small = await h.request("POST", CONTACTS, {
    body: { phoneNumber: "+5491122334455", name: "Ana" },
  });
  assert.equal(small.status, 201, "a body under the limit still works");
});

Deno.test("a failing query gives the fixed 500 body without internals", async () => {
  await using h = await createHarness();
  await sql`drop table contacts`.execute(h.container.db);
  assertInternalError(await h.request("GET", CONTACTS), "GET /contacts");
  assertInternalError(
    await h.request("POST", CONTACTS, {
      body: { phoneNumber: "+5491122334455" },
    }),
    "POST /contacts",
  );
});

Deno.test("a closed database gives the fixed 500 body and /readyz 503", async () => {
  await using h = await createHarness();
  const health = await h.request("GET", "/healthz", { key: null });
  assert.equal(health.status, 200);
  assert.deepEqual(health.body, { status: "ok" });
  const ready = await h.request("GET", "/readyz", { key: null });
  assert.equal(ready.status, 200);
  assert.deepEqual(ready.body, { status: "ready" });

  await h.container.db.destroy();
  assertInternalError(await h.request("GET", CONTACTS), "GET /contacts");
  const down = await h.request("GET", "/readyz", { key: null });
  assertErrorBody(down, 503, "INTERNAL_ERROR", "GET /readyz");
  assert.doesNotMatch(JSON.stringify(down.body), LEAK_REGEXP);
  assert.equal((await h.request("GET", "/healthz", { key: null })).status, 200);
});

/** The JSON log lines written to stderr (warn and error) while `run` runs. */
async function stderrLog(run: () => Promise<void>) {
  const lines: Record<string, unknown>[] = [];
  // deno-lint-ignore no-console
  const original = console.error;
  // deno-lint-ignore no-console
  console.error = (text: string) => {
    try {
      lines.push(JSON.parse(text));
    } catch {
      lines.push({ text });
    }
  };
  try {
    await run();
  } finally {
    // deno-lint-ignore no-console
    console.error = original;
  }
  return lines;
}

Deno.test("a 503 without a cause logs a warning with its reason and no stack; a 500 logs an error with its stack", async () => {
  await using h = await createHarness({ env: { LOG_LEVEL: "warn" } });
  await h.container.db.destroy();
  const probe = await stderrLog(async () => {
    const down = await h.request("GET", "/readyz", { key: null });
    assert.equal(down.status, 503);
  });
  assert.equal(probe.length, 1, JSON.stringify(probe));
  assert.equal(probe[0]!.level, "warn");
  assert.equal(probe[0]!.msg, "Request refused: service unavailable");
  // The database's own error is in the log line (never in the body).
  assert.match(
    String(probe[0]!.reason),
    /^Service is not ready: database unreachable \(.*destroyed.*\)$/,
  );
  assert.doesNotMatch(JSON.stringify(probe), /stack/);
  const failed = await stderrLog(async () => {
    assert.equal((await h.request("GET", CONTACTS)).status, 500);
  });
  assert.ok(
    failed.some((l) => l.level === "error" && /stack/.test(JSON.stringify(l))),
    JSON.stringify(failed),
  );
});

Deno.test("a 503 with a cause (a dependency's error) stays an error with the cause", async () => {
  const app = new Hono<AppEnv>();
  app.use("*", async (c, next) => {
    c.set("log", createLogger("warn"));
    await next();
  });
  app.onError(handleError);
  app.get("/", () => {
    throw new AppError(
      "SERVICE_UNAVAILABLE",
      "Cannot read blob: storage is unreachable",
      {
        cause: new TypeError("error sending request: connection refused"),
      },
    );
  });
  const lines = await stderrLog(async () => {
    const res = await app.request("/");
    assert.equal(res.status, 503);
    assert.deepEqual((await res.json()).error, INTERNAL);
  });
  assert.equal(lines.length, 1, JSON.stringify(lines));
  assert.equal(lines[0]!.level, "error");
  assert.match(
    JSON.stringify(lines[0]),
    /storage is unreachable.*connection refused/,
  );
});

/** A real SQLITE_BUSY of node:sqlite: another connection holds the write lock. */
function sqliteBusyError(dir: string): unknown {
  const path = `${dir}/busy.db`;
  const holder = new DatabaseSync(path);
  const writer = new DatabaseSync(path, { timeout: 0 });
  try {
    holder.exec(
      "create table t (x); begin immediate; insert into t values (1)",
    );
    writer.prepare("insert into t values (2)").run();
  } catch (err) {
    return err;
  } finally {
    writer.close();
    holder.close();
  }
  throw new Error("expected SQLITE_BUSY");
}

Deno.test("a write the database stays busy for, once the writers gave up, answers 503 with Retry-After, not 500", async () => {
  const dir = await Deno.makeTempDir();
  // libSQL's LibsqlError as sqld sends it (code and message); a real one
  // cannot be had on demand: this sqld build mostly waits for the lock.
  const libsqlBusy = Object.assign(
    new Error("SQLITE_BUSY: database is locked"),
    { name: "LibsqlError", code: "SQLITE_BUSY" },
  );
  try {
    for (const busy of [sqliteBusyError(dir), libsqlBusy]) {
      const app = new Hono<AppEnv>();
      app.use("*", async (c, next) => {
        c.set("log", createLogger("error"));
        await next();
      });
      app.onError(handleError);
      app.post("/", () => {
        throw busy;
      });
      const res = await app.request("/", { method: "POST" });
      assert.equal(res.status, 503, String(busy));
      assert.equal(res.headers.get("retry-after"), "1");
      const body = await res.json();
      assert.deepEqual(body.error, INTERNAL);
      assert.doesNotMatch(JSON.stringify(body), LEAK_REGEXP);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
