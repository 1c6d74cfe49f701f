import assert from "node:assert/strict";
import {
  assertForwardChain,
  behave,
  countRows,
  customerWrites,
  type Json,
  messagingTest,
  newPhone,
  seedTemplate,
  sendOk,
  sim,
  simSendsOf,
  statusEvents,
  templateTo,
  textTo,
  waitPayloadsProcessed,
} from "./_helpers.ts";

messagingTest(
  "an async 131047 from the upstream fails the message with its code",
  async (h) => {
    const phone = newPhone();
    await customerWrites(h, phone);
    await behave(h, { failNext: [{ code: 131047, mode: "async", to: phone }] });
    const id = await sendOk(h, textTo(phone));
    const message: Json = await h.waitForStatus(id, ["failed", "read"]);
    assert.equal(message.status, "failed");
    assert.equal(message.errorCode, "131047");
    assert.match(message.errorMessage, /24 hours/);
    assert.match(String(message.waMessageId), /^wamid\./);
    const last = (await statusEvents(h, id)).at(-1)!;
    assert.equal(last.data.newStatus, "failed");
    assert.equal(last.data.errorCode, "131047");
  },
);

messagingTest(
  "a sync permanent 132001 fails the message without retrying",
  async (h) => {
    await seedTemplate(h);
    const phone = newPhone();
    await behave(h, { failNext: [{ code: 132001, mode: "sync", to: phone }] });
    const id = await sendOk(h, templateTo(phone));
    const message: Json = await h.waitForStatus(id, ["failed", "read"]);
    assert.equal(message.status, "failed");
    assert.equal(message.errorCode, "132001");
    assert.ok(message.errorMessage);
    assert.equal(message.waMessageId, null);
    assert.equal((await simSendsOf(h, id)).length, 0);
    const job = await h.until(
      () =>
        h.container.db.selectFrom("jobs").select(["state", "attempt"])
          .where("unique_key", "=", `message.send:${id}`)
          .where("state", "=", "completed").executeTakeFirst(),
      "the send job to complete",
    );
    assert.equal(job.attempt, 1, "one attempt only");
    const events = await statusEvents(h, id);
    assert.deepEqual(
      events.map((e) => [e.data.previousStatus, e.data.newStatus]),
      [["queued", "failed"]],
    );
  },
);

messagingTest(
  "a sync 130429 throttle is retried and the message still reaches read",
  async (h) => {
    const phone = newPhone();
    await customerWrites(h, phone);
    await behave(h, { failNext: [{ code: 130429, mode: "sync", to: phone }] });
    const id = await sendOk(h, textTo(phone));
    const message: Json = await h.waitForStatus(id, ["read", "failed"]);
    assert.equal(message.status, "read");
    assert.equal(message.errorCode, null);
    assert.equal((await sim(h, "/behaviour")).failNext.length, 0);
    assert.equal((await simSendsOf(h, id)).length, 1);
    const statuses = (await statusEvents(h, id)).map((e) => e.data.newStatus);
    assert.ok(!statuses.includes("failed"), statuses.join(","));
  },
);

messagingTest(
  "duplicated and reordered status reports never move a message backwards",
  async (h) => {
    const phone = newPhone();
    await customerWrites(h, phone);
    await behave(h, { duplicateRate: 1, reorderRate: 1 });
    const id = await sendOk(h, { ...textTo(phone), clientRef: "dup-1" });
    const message: Json = await h.waitForStatus(id, ["read", "failed"]);
    assert.equal(message.status, "read");
    // Wait for every report (3 statuses, each twice) to be delivered and applied.
    const callbacks: Json[] = await h.until(async () => {
      const all = (await sim(h, "/callbacks")).callbacks.filter((c: Json) =>
        c.wamid === message.waMessageId && c.httpStatus === 200
      );
      return all.length === 6 ? all : null;
    }, "six status callbacks");
    assert.deepEqual(
      callbacks.map((c) => c.status),
      ["sent", "sent", "read", "read", "delivered", "delivered"],
      "the upstream reported read before delivered, each twice",
    );
    await waitPayloadsProcessed(h);
    assert.equal((await h.waitForStatus(id, ["read"])).status, "read");
    const events = await statusEvents(h, id);
    assertForwardChain(events, "read");
    for (const event of events) assert.equal(event.data.clientRef, "dup-1");
    assert.ok(events.length >= 2 && events.length <= 3, `${events.length}`);
    assert.equal((await simSendsOf(h, id)).length, 1);
    assert.equal(
      await countRows(h, "messages", {
        column: "direction",
        value: "outbound",
      }),
      1,
    );
  },
);
