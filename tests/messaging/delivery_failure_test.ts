import assert from "node:assert/strict";
import { createHarness, type Harness } from "../_harness.ts";
import { queuedTemplate } from "../_support/queued_message.ts";
import { deliverMessage } from "../../src/domain/messages/delivery_service.ts";
import type { Container } from "../../src/container.ts";
import { createJobHandlers } from "../../src/jobs/registry.ts";
import { createLogger } from "../../src/log.ts";
import { processInboundPayload } from "../../src/domain/inbound/inbound_service.ts";
import {
  retryUnmatchedStatus,
  STATUS_RETRY_JOB,
} from "../../src/domain/inbound/unmatched_status_service.ts";
import { RetryLater } from "../../src/errors.ts";
import type { GraphApi } from "../../src/upstream/graph_api.ts";
import { createGraphClient } from "../../src/upstream/graph_client.ts";

async function statusOf(h: Harness, id: string) {
  return await h.container.db.selectFrom("messages")
    .select(["status", "error_code", "error_message"]).where("id", "=", id)
    .executeTakeFirstOrThrow();
}

/** Runs the registry's message.send handler as attempt `attempt` of `maxAttempts`. */
async function runSendJob(
  c: Container,
  messageId: string,
  attempts: { attempt: number; maxAttempts: number },
): Promise<void> {
  const handler = createJobHandlers(c)["message.send"];
  await handler({ messageId }, {
    job: {
      id: "job-1",
      kind: "message.send",
      priority: 0,
      payload: { messageId },
      runAt: "",
      leaseToken: "t",
      uniqueKey: null,
      groupKey: null,
      errors: [],
      ...attempts,
    },
    signal: new AbortController().signal,
    stopping: new AbortController().signal,
    log: createLogger("silent"),
    completeIn: () => Promise.resolve(false),
    markCompleted: () => {},
  });
}

const NEVER_CALLED: GraphApi = {
  sendMessage: () => Promise.reject(new Error("must not be called")),
  markRead: () => Promise.reject(new Error("must not be called")),
  getMediaInfo: () => Promise.reject(new Error("must not be called")),
  downloadMedia: () => Promise.reject(new Error("must not be called")),
  uploadMedia: () => Promise.reject(new Error("must not be called")),
};

Deno.test("a send that cannot even start fails the message on its last attempt instead of leaving it queued", async () => {
  await using h = await createHarness();
  const id = await queuedTemplate(h);
  // A SECRET_KEY change makes the stored access token undecryptable.
  await h.container.db.updateTable("channels").set({
    access_token_enc: "v1.AAAA.AAAA",
  })
    .where("id", "=", h.tenant.channel.id).execute();
  const deps = { ...h.container, graph: NEVER_CALLED };
  await assert.rejects(runSendJob(deps, id, { attempt: 1, maxAttempts: 3 }));
  assert.equal(
    (await statusOf(h, id)).status,
    "queued",
    "retried while attempts remain",
  );
  // The last attempt's failure runs the final-failure hook, which marks the message.
  await runSendJob(deps, id, { attempt: 3, maxAttempts: 3 });
  const row = await statusOf(h, id);
  assert.equal(row.status, "failed");
  assert.equal(row.error_code, "SEND_FAILED");
  assert.doesNotMatch(String(row.error_message), /v1\.|decrypt|stack/i);
});

Deno.test("a send that fails on this side (not the network) fails the message on its first attempt", async () => {
  await using h = await createHarness();
  const id = await queuedTemplate(h);
  const graph = createGraphClient({
    baseUrl: "http://graph.test/v22.0",
    fetch: () => Promise.reject(new RangeError("Invalid array length")),
  });
  await runSendJob({ ...h.container, graph }, id, {
    attempt: 1,
    maxAttempts: 3,
  });
  const row = await statusOf(h, id);
  assert.equal(row.status, "failed");
  assert.equal(row.error_code, "local_error");
  assert.match(
    row.error_message ?? "",
    /^Cannot send the message to the Graph API: Invalid array length/,
  );
});

Deno.test("a send accepted upstream is recorded even if the first write fails, and is never sent twice", async () => {
  await using h = await createHarness();
  const id = await queuedTemplate(h);
  let sends = 0;
  const graph: GraphApi = {
    ...NEVER_CALLED,
    sendMessage: () =>
      Promise.resolve({
        wamid: `wamid.T${++sends}`,
        waId: null,
        messageStatus: null,
      }),
  };
  // The first transaction after the upstream call fails (a dropped libSQL connection, say).
  const db = h.container.db;
  let failNext = false;
  const flaky = new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === "transaction" && failNext) {
        failNext = false;
        return () => ({
          execute: () => Promise.reject(new Error("connection reset")),
        });
      }
      const value = Reflect.get(target, prop, receiver);
      // Kysely keeps #private fields: call its methods on the real instance.
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const deps = {
    ...h.container,
    db: flaky,
    graph: {
      ...graph,
      sendMessage: async (...args: Parameters<GraphApi["sendMessage"]>) => {
        const out = await graph.sendMessage(...args);
        failNext = true;
        return out;
      },
    },
  };
  await deliverMessage(deps, id);
  await deliverMessage(deps, id);
  assert.equal(sends, 1);
  const row = await db.selectFrom("messages").select([
    "status",
    "wa_message_id",
  ])
    .where("id", "=", id).executeTakeFirstOrThrow();
  assert.deepEqual({ ...row }, { status: "sent", wa_message_id: "wamid.T1" });
});

Deno.test("a status report for a message not committed yet is retried without spending attempts", async () => {
  await using h = await createHarness();
  const body = JSON.stringify({
    object: "whatsapp_business_account",
    entry: [{
      id: h.tenant.channel.wabaId,
      changes: [{
        field: "messages",
        value: {
          messaging_product: "whatsapp",
          metadata: {
            display_phone_number: "15550100001",
            phone_number_id: h.tenant.channel.upstreamPhoneNumberId,
          },
          statuses: [{
            id: "wamid.unknown",
            status: "delivered",
            timestamp: "1",
          }],
        },
      }],
    }],
  });
  const id = crypto.randomUUID();
  await h.container.db.insertInto("inbound_payloads").values({
    id,
    body,
    received_at: h.clock.now().toISOString(),
    processed_at: null,
    error: null,
  }).execute();
  // The payload is done; the one report waits in a job of its own, and a
  // try that still finds no message is a RetryLater (the pool's Snooze).
  await processInboundPayload(h.container, id);
  const job = await h.container.db.selectFrom("jobs").select("payload")
    .where("kind", "=", STATUS_RETRY_JOB).executeTakeFirstOrThrow();
  await assert.rejects(
    retryUnmatchedStatus(h.container, JSON.parse(job.payload)),
    RetryLater,
  );
});
