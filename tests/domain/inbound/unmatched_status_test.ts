// Statuses for messages this server never sent (another tool on the same
// number, or sent before a migration) wait on their own, then are dropped.
import assert from "node:assert/strict";
// First: the app's schemas extend zod before any domain schema is built.
import { createHarness, type Harness } from "../../_harness.ts";
import { ManualClock } from "../../../src/clock.ts";
import { RetryLater } from "../../../src/errors.ts";
import { processInboundPayload } from "../../../src/domain/inbound/inbound_service.ts";
import {
  retryUnmatchedStatus,
  STATUS_RETRY_JOB,
  type StatusAt,
} from "../../../src/domain/inbound/unmatched_status_service.ts";
import { setWamidIfMissing } from "../../../src/domain/messages/message_repo.ts";
import {
  metaChange,
  postWebhook,
  signedBody,
} from "../../messaging/_helpers.ts";

const PHONE = "5491155550201";

async function retryDelay(h: Harness, at: StatusAt): Promise<number | null> {
  try {
    await retryUnmatchedStatus(h.container, at);
    return null;
  } catch (err) {
    if (err instanceof RetryLater) return err.delayMs;
    throw err;
  }
}

Deno.test("a status for an unknown message is recorded once, tried on its own with a growing wait, then dropped", async () => {
  const clock = new ManualClock();
  await using h = await createHarness({ clock });
  const unix = String(Math.floor(clock.now().getTime() / 1000));
  // Status shape: reference §4.5 (id, status, timestamp, recipient_id).
  const { raw, signature } = await signedBody(metaChange(h, {
    contacts: [{ profile: { name: "Ana" }, wa_id: PHONE }],
    messages: [{
      from: PHONE,
      id: "wamid.in-1",
      timestamp: unix,
      type: "text",
      text: { body: "Hola" },
    }],
    statuses: [
      {
        id: "wamid.other-tool",
        status: "delivered",
        timestamp: unix,
        recipient_id: PHONE,
      },
      {
        id: "wamid.late",
        status: "delivered",
        timestamp: unix,
        recipient_id: PHONE,
      },
    ],
  }));
  assert.equal((await postWebhook(h, raw, signature)).status, 200);
  const { id: payloadId } = await h.container.db.selectFrom("inbound_payloads")
    .select("id").executeTakeFirstOrThrow();

  // One run of the payload: the message is stored, the payload is done.
  await processInboundPayload(h.container, payloadId);
  const stored = await h.container.db.selectFrom("inbound_payloads")
    .select(["processed_at", "error"]).executeTakeFirstOrThrow();
  assert.ok(stored.processed_at);
  assert.match(
    stored.error ?? "",
    /^2 status report\(s\) matched no message yet/,
  );
  const retries = await h.container.db.selectFrom("jobs").select("payload")
    .where("kind", "=", STATUS_RETRY_JOB).execute();
  const at = retries.map((r) => JSON.parse(r.payload) as StatusAt)
    .sort((a, b) => a.status - b.status);
  assert.deepEqual(at, [
    { payloadId, entry: 0, change: 0, status: 0 },
    { payloadId, entry: 0, change: 0, status: 1 },
  ]);

  // Our send records its upstream id after the report came: the retry matches it.
  const sent = await h.request("POST", "/api/v2/messages", {
    body: {
      phoneNumberId: h.tenant.channel.id,
      to: `+${PHONE}`,
      type: "text",
      text: { body: "¡Hola!" },
    },
  });
  assert.equal(sent.status, 201);
  await setWamidIfMissing(h.container.db, sent.body.data.id, "wamid.late");
  assert.equal(await retryDelay(h, at[1]!), null);
  const message = await h.request(
    "GET",
    `/api/v2/messages/${sent.body.data.id}`,
  );
  assert.equal(message.body.data.status, "delivered");

  // The other tool's report: the wait grows with its age, then it is dropped.
  assert.equal(await retryDelay(h, at[0]!), 2_000);
  clock.advance(8_000);
  assert.equal(await retryDelay(h, at[0]!), 8_000);
  clock.advance(5 * 60_000);
  assert.equal(await retryDelay(h, at[0]!), 60_000);
  clock.advance(5 * 60_000);
  assert.equal(await retryDelay(h, at[0]!), null, "dropped after 10 minutes");

  // The payload itself was never run again.
  const after = await h.container.db.selectFrom("inbound_payloads")
    .select("processed_at").executeTakeFirstOrThrow();
  assert.equal(after.processed_at, stored.processed_at);
  assert.equal(
    (await h.container.db.selectFrom("messages").select("id").execute()).length,
    2,
  );
});
