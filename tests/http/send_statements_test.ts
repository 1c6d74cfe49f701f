// The statements one POST /messages runs on embedded SQLite, counted where
// SQLite executes them (node:sqlite's StatementSync), not where they are built.
import assert from "node:assert/strict";
import { createHarness, type Harness } from "../_harness.ts";
import { seedTemplate, templateTo } from "../messaging/_helpers.ts";
import { JobInsertHook } from "../../src/db/job_insert_hook.ts";
import { sqliteStatementsOf as statementsOf } from "../_support/statements.ts";

async function send(h: Harness, to: string): Promise<void> {
  const res = await h.request("POST", "/api/v2/messages", {
    body: {
      phoneNumberId: h.tenant.channel.id,
      ...templateTo(to, "greeting", ["Ana"]),
    },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
}

const count = (list: string[], pattern: RegExp) =>
  list.filter((s) => pattern.test(s)).length;

Deno.test("a send to a new recipient looks its contact and conversation up once each", async () => {
  await using h = await createHarness();
  await seedTemplate(h);
  await send(h, "+5491155550100"); // caches, statement cache
  const sql = await statementsOf(() => send(h, "+5491155550200"));
  assert.equal(count(sql, /^select .* from "contacts"/is), 1, sql.join("\n"));
  // The new conversation is made as it is inserted: no read back.
  assert.equal(
    count(sql, /^select .* from "conversations"/is),
    0,
    sql.join("\n"),
  );
  assert.equal(count(sql, /^insert into "?contacts"?/i), 1);
  assert.equal(count(sql, /^insert into "?conversations"?/i), 1);
  // contact.created, conversation.created and the internal message.created.
  assert.equal(count(sql, /^insert into "?events"?/i), 3);
});

Deno.test("a send to a known recipient runs nine statements besides its group's begin and commit", async () => {
  await using h = await createHarness();
  await seedTemplate(h);
  await send(h, "+5491155550100");
  const sql = await statementsOf(() => send(h, "+5491155550100"));
  const own = sql.filter((s) => !/^(begin|commit)/i.test(s));
  assert.deepEqual(
    own.map((s) => s.replace(/\s+/g, " ").slice(0, 24).toLowerCase()),
    [
      "select n from cache_epoc", // the lookup cache's epoch (auth)
      "savepoint group_unit",
      // The contact and its conversation on the channel, in one statement.
      'select "ct".*, "cv"."id"',
      'insert into "messages" (',
      // message.created, for the panel's stream (no webhook delivery).
      "insert into events (id, ",
      "update conversations set",
      "update contacts set last",
      "insert into jobs (id, ki",
      "release group_unit",
    ],
  );
});

Deno.test("a send's own statements run straight on SQLite, not through Kysely's executor", async () => {
  await using h = await createHarness();
  await seedTemplate(h);
  await send(h, "+5491155550100");
  // Every statement Kysely's executor runs passes the container's plugins
  // (JobInsertHook among them) once; executeRaw() (src/db/raw.ts) does not.
  const proto = JobInsertHook.prototype;
  const original = proto.transformResultNow;
  let passes = 0;
  proto.transformResultNow = function (this: JobInsertHook, args) {
    passes++;
    return original.call(this, args);
  };
  let sql: string[];
  try {
    sql = await statementsOf(() => send(h, "+5491155550100"));
  } finally {
    proto.transformResultNow = original;
  }
  // The group's savepoint and release; the contact lookup, the message, its
  // event, the conversation and contact updates and the job go straight to
  // SQLite.
  assert.equal(passes, 2, sql.join("\n"));
  assert.equal(count(sql, /^insert into "messages"/i), 1);
  assert.equal(count(sql, /^insert into events/i), 1);
  assert.equal(count(sql, /^insert into jobs/i), 1);
});
