// What a send job reads before it calls the upstream: its message with its
// recipient in one statement, its channel and token from the lookup cache
// where that cache is exact, and a change to the channel, whoever makes it
// and even while the send waits for its turn, seen by that send.
import assert from "node:assert/strict";
import { sql } from "kysely";
import { createHarness, engineTest, type Harness } from "../_harness.ts";
import { queuedNotice, queuedTemplate } from "../_support/queued_message.ts";
import { sqliteStatementsOf } from "../_support/statements.ts";
import {
  acceptingUpstream,
  type SentCall,
} from "../_support/accepting_upstream.ts";
import { deliverMessage } from "../../src/domain/messages/delivery_service.ts";
import { updateChannel } from "../../src/domain/channels/channel_service.ts";
import { createContact } from "../../src/domain/contacts/contact_service.ts";
import { createContainer } from "../../src/container.ts";
import { createLogger } from "../../src/log.ts";
import { SendGovernor } from "../../src/upstream/send_governor.ts";

/** A governor that runs `meanwhile` while it holds each send back. */
class HoldingGovernor extends SendGovernor {
  constructor(private meanwhile: () => Promise<unknown>) {
    super({ defaultRatePerSecond: 1_000 });
  }
  override async acquire(): Promise<void> {
    await this.meanwhile();
  }
}

async function messageOf(h: Harness, id: string) {
  return await h.container.db.selectFrom("messages")
    .select(["status", "error_code"]).where("id", "=", id)
    .executeTakeFirstOrThrow();
}

/** The message went nowhere (two sends before it) and failed CHANNEL_NOT_CONNECTED. */
async function assertNotSent(h: Harness, calls: SentCall[], id: string) {
  assert.equal(calls.length, 2, "nothing sent through a disconnected channel");
  const failed = await messageOf(h, id);
  assert.equal(failed.status, "failed");
  assert.equal(failed.error_code, "CHANNEL_NOT_CONNECTED");
}

/** Three queued messages of the tenant's channel to different numbers. */
async function threeQueued(h: Harness): Promise<string[]> {
  const ids = [await queuedTemplate(h)];
  for (const to of ["+5491144446666", "+5491144447777"]) {
    ids.push(await queuedNotice(h, to));
  }
  return ids;
}

Deno.test("a send job reads its message with its recipient in one statement, and its channel and token from the lookup cache", async () => {
  await using h = await createHarness();
  const { graph, calls } = acceptingUpstream();
  const [first, second] = await threeQueued(h);
  await deliverMessage({ ...h.container, graph }, first!); // fills the cache
  const sql = await sqliteStatementsOf(() =>
    deliverMessage({ ...h.container, graph }, second!)
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
  assert.equal((await messageOf(h, second!)).status, "sent");
});

engineTest(
  "a channel given a new token, then disconnected, by another process (the admin CLI) is what the next send uses",
  async (h) => {
    const { graph, calls } = acceptingUpstream();
    const ids = await threeQueued(h);
    const deps = { ...h.container, graph };
    await deliverMessage(deps, ids[0]!);
    assert.equal(calls[0]!.accessToken, `token-${h.tenant.account.slug}`);

    // Its own container, as `main.ts channels update` opens: this process's
    // cache hears of the change only through the database.
    await using other = createContainer(h.container.config, {
      log: createLogger("silent"),
    });
    await updateChannel(other, h.tenant.channel.id, {
      accessToken: "rotated-elsewhere",
    });
    await deliverMessage(deps, ids[1]!);
    assert.equal(calls[1]!.accessToken, "rotated-elsewhere");

    await updateChannel(other, h.tenant.channel.id, {
      status: "disconnected",
    });
    await deliverMessage(deps, ids[2]!);
    await assertNotSent(h, calls, ids[2]!);
  },
);

engineTest(
  "a send held by the governor uses the token its channel has once let go, and is not sent if the channel was disconnected meanwhile",
  async (h) => {
    const { graph, calls } = acceptingUpstream();
    const ids = await threeQueued(h);
    const deps = { ...h.container, graph };
    await deliverMessage(deps, ids[0]!); // fills the cache

    let change: Parameters<typeof updateChannel>[2] = {
      accessToken: "rotated-while-waiting",
    };
    const governor = new HoldingGovernor(() =>
      updateChannel(h.container, h.tenant.channel.id, change)
    );
    await deliverMessage({ ...deps, governor }, ids[1]!);
    assert.equal(calls[1]!.accessToken, "rotated-while-waiting");

    change = { status: "disconnected" };
    await deliverMessage({ ...deps, governor }, ids[2]!);
    await assertNotSent(h, calls, ids[2]!);
  },
);

engineTest(
  "a send never goes to a contact of another account, whatever its message row says",
  async (h) => {
    const { graph, calls } = acceptingUpstream();
    const [id] = await threeQueued(h);
    const other = await h.makeTenant(
      `other-${crypto.randomUUID().slice(0, 8)}`,
    );
    const stranger = await createContact(h.container, {
      accountId: other.account.id,
      phoneNumber: "+5491199998888",
    });
    await sql`update messages set contact_id = ${stranger.id}
      where id = ${id!}`.execute(h.container.db);
    await assert.rejects(
      deliverMessage({ ...h.container, graph }, id!),
      /its contact is gone/,
    );
    assert.equal(calls.length, 0);
  },
);
