// What a send job reads before it calls the upstream: its message with its
// recipient in one statement, its channel and token from the lookup cache,
// and a change to the channel seen by the very next send.
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { createHarness, engineTest, type Harness } from "../_harness.ts";
import { queuedNotice, queuedTemplate } from "../_support/queued_message.ts";
import { sqliteStatementsOf } from "../_support/statements.ts";
import { deliverMessage } from "../../src/domain/messages/delivery_service.ts";
import { updateChannel } from "../../src/domain/channels/channel_service.ts";
import type { GraphApi } from "../../src/upstream/graph_api.ts";

interface Call {
  phoneNumberId: string;
  accessToken: string;
  to: unknown;
}

/** An upstream that accepts every send and keeps what it was given. */
function recordingUpstream(): { graph: GraphApi; calls: Call[] } {
  const calls: Call[] = [];
  const graph: GraphApi = {
    sendMessage: (auth, body) => {
      calls.push({ ...auth, to: (body as { to?: unknown }).to });
      return Promise.resolve({
        wamid: `wamid.R${calls.length}`,
        waId: null,
        messageStatus: null,
      });
    },
    markRead: () => Promise.reject(new Error("unused")),
    getMediaInfo: () => Promise.reject(new Error("unused")),
    downloadMedia: () => Promise.reject(new Error("unused")),
  };
  return { graph, calls };
}

async function messageOf(h: Harness, id: string) {
  return await h.container.db.selectFrom("messages")
    .select(["status", "error_code"]).where("id", "=", id)
    .executeTakeFirstOrThrow();
}

Deno.test("a send job reads its message with its recipient in one statement, and its channel and token from the lookup cache", async () => {
  await using h = await createHarness();
  const { graph, calls } = recordingUpstream();
  const first = await queuedTemplate(h);
  const second = await queuedNotice(h, "+5491144446666");
  await deliverMessage({ ...h.container, graph }, first); // fills the cache
  const sql = await sqliteStatementsOf(() =>
    deliverMessage({ ...h.container, graph }, second)
  );
  // Everything before the record's transaction is the send's own reading.
  const recordAt = sql.findIndex((s) => /^(begin|savepoint)/i.test(s));
  assert.ok(recordAt > 0, sql.join("\n"));
  const reads = sql.slice(0, recordAt).map((s) =>
    s.replace(/\s+/g, " ").slice(0, 30).toLowerCase()
  );
  assert.deepEqual(reads, [
    'select "m".*, "c"."id" as "rec', // the message and its recipient
    "select n from cache_epoch wher", // the cache is still exact
    "select n from cache_epoch wher", // and still, after the governor's wait
  ], sql.join("\n"));
  assert.equal(calls.length, 2);
  assert.equal(calls[1]!.to, "5491144446666");
  assert.equal(calls[1]!.accessToken, calls[0]!.accessToken);
  assert.equal((await messageOf(h, second)).status, "sent");
});

engineTest(
  "a channel changed after a send is what the next send of it uses: its new token, then its disconnection",
  async (h) => {
    const { graph, calls } = recordingUpstream();
    const ids = [await queuedTemplate(h)];
    for (const to of ["+5491144446666", "+5491144447777"]) {
      ids.push(await queuedNotice(h, to));
    }
    const deps = { ...h.container, graph };
    await deliverMessage(deps, ids[0]!);
    assert.equal(calls[0]!.accessToken, `token-${h.tenant.account.slug}`);

    await updateChannel(h.container, h.tenant.channel.id, {
      accessToken: "rotated-token",
    });
    await deliverMessage(deps, ids[1]!);
    assert.equal(calls[1]!.accessToken, "rotated-token");

    await updateChannel(h.container, h.tenant.channel.id, {
      status: "disconnected",
    });
    await deliverMessage(deps, ids[2]!);
    assert.equal(
      calls.length,
      2,
      "nothing sent through a disconnected channel",
    );
    const failed = await messageOf(h, ids[2]!);
    assert.equal(failed.status, "failed");
    assert.equal(failed.error_code, "CHANNEL_NOT_CONNECTED");
  },
);

Deno.test("a token changed by another process, straight in the database file, is used by the next send", async () => {
  await using h = await createHarness();
  const { graph, calls } = recordingUpstream();
  const first = await queuedTemplate(h);
  const second = await queuedNotice(h, "+5491144446666");
  await deliverMessage({ ...h.container, graph }, first);
  const sealed = await h.container.secrets.seal("token-from-elsewhere");
  const other = new DatabaseSync(`${h.dir}/app.db`);
  try {
    other.prepare("update channels set access_token_enc = ? where id = ?")
      .run(sealed, h.tenant.channel.id);
  } finally {
    other.close();
  }
  await deliverMessage({ ...h.container, graph }, second);
  assert.equal(calls[1]!.accessToken, "token-from-elsewhere");
});
