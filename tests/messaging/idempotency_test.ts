import assert from "node:assert/strict";
import {
  countRows,
  customerWrites,
  messagingTest,
  newPhone,
  send,
  simSendsOf,
  textTo,
} from "./_helpers.ts";

messagingTest(
  "the same Idempotency-Key and body replays the response and sends once",
  async (h) => {
    const phone = newPhone();
    await customerWrites(h, phone);
    const body = { ...textTo(phone, "Pedido listo"), clientRef: "o-1" };
    const key = { "Idempotency-Key": "order-1-ready" };
    const first = await send(h, body, key);
    assert.equal(first.status, 201);
    assert.equal(first.headers.get("idempotent-replayed"), null);
    const id = first.body.data.id;
    await h.waitForStatus(id, ["read"]);
    const again = await send(h, body, key);
    assert.equal(again.status, 201);
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    assert.deepEqual(again.body.data, first.body.data);
    assert.equal(
      await countRows(h, "messages", {
        column: "direction",
        value: "outbound",
      }),
      1,
    );
    assert.equal((await simSendsOf(h, id)).length, 1);
    const { messages } = await (await fetch(`${h.simulator.url}/_sim/messages`))
      .json();
    assert.equal(messages.length, 1, "the upstream saw one send in total");
  },
);

messagingTest(
  "the same Idempotency-Key with another body is IDEMPOTENCY_KEY_REUSED",
  async (h) => {
    const phone = newPhone();
    await customerWrites(h, phone);
    const key = { "Idempotency-Key": "k-2" };
    assert.equal((await send(h, textTo(phone, "one"), key)).status, 201);
    const other = await send(h, textTo(phone, "two"), key);
    assert.equal(other.status, 409);
    assert.equal(other.body.error.code, "IDEMPOTENCY_KEY_REUSED");
    assert.match(other.body.error.message, /"k-2"/);
    assert.equal(
      await countRows(h, "messages", {
        column: "direction",
        value: "outbound",
      }),
      1,
    );
    // Another key is another request.
    const fresh = await send(h, textTo(phone, "two"), {
      "Idempotency-Key": "k-3",
    });
    assert.equal(fresh.status, 201);
  },
);

messagingTest(
  "concurrent requests with the same Idempotency-Key produce one message",
  async (h) => {
    const phone = newPhone();
    await customerWrites(h, phone);
    const body = textTo(phone, "Solo una vez");
    const key = { "Idempotency-Key": "concurrent-1" };
    const responses = await Promise.all(
      Array.from({ length: 5 }, () => send(h, body, key)),
    );
    for (const res of responses) {
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    const ids = new Set(responses.map((r) => r.body.data.id));
    assert.equal(ids.size, 1, "every response names the same message");
    assert.equal(
      responses.filter((r) => r.headers.get("idempotent-replayed") === "true")
        .length,
      4,
    );
    const [id] = ids;
    await h.waitForStatus(id!, ["read"]);
    assert.equal(
      await countRows(h, "messages", {
        column: "direction",
        value: "outbound",
      }),
      1,
    );
    assert.equal((await simSendsOf(h, id!)).length, 1);
  },
);

messagingTest("a malformed Idempotency-Key is rejected", async (h) => {
  const phone = newPhone();
  await customerWrites(h, phone);
  const res = await send(h, textTo(phone), {
    "Idempotency-Key": "x".repeat(256),
  });
  assert.equal(res.status, 400);
  assert.equal(res.body.error.code, "VALIDATION_ERROR");
});
