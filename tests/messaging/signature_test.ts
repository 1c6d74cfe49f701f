import assert from "node:assert/strict";
import { signMetaBody } from "../../src/upstream/meta_signature.ts";
import { APP_SECRET } from "../_support/messaging.ts";
import {
  countRows,
  inboundEnvelope,
  messagingTest,
  type Mh,
  newPhone,
  postWebhook,
  signedBody,
  waitInbound,
} from "./_helpers.ts";

function textEnvelope(
  h: Mh,
  body: string,
  wamid = `wamid.${crypto.randomUUID()}`,
) {
  return inboundEnvelope(
    h,
    { id: wamid, type: "text", text: { body } },
    newPhone(),
  );
}

async function assertNothingStored(h: Mh) {
  assert.equal(await countRows(h, "inbound_payloads"), 0);
  assert.equal(await countRows(h, "messages"), 0);
  assert.equal(
    await countRows(h, "jobs", { column: "kind", value: "meta.inbound" }),
    0,
  );
}

messagingTest(
  "POST /meta/webhook refuses a wrong or missing signature and an altered body",
  async (h) => {
    const { raw, signature } = await signedBody(textEnvelope(h, "Hola"));
    const wrongSecret = signMetaBody("another-secret", raw);
    const altered = raw.replace("Hola", "Chau");
    assert.notEqual(altered, raw);
    const cases: [string, string, string | null][] = [
      ["wrong secret", raw, wrongSecret],
      ["garbage", raw, "sha256=deadbeef"],
      ["no prefix", raw, signature.slice("sha256=".length)],
      ["missing", raw, null],
      ["body altered after signing", altered, signature],
    ];
    for (const [name, body, header] of cases) {
      const res = await postWebhook(h, body, header);
      assert.equal(res.status, 401, name);
      assert.equal(res.body.error.code, "UNAUTHORIZED", name);
    }
    await assertNothingStored(h);
  },
);

messagingTest(
  "a body signed in Meta's escaped form is accepted and stored unescaped; a decoded copy is refused",
  async (h) => {
    const text = "Hola ñandú, ¿cómo va? 👋🏽";
    // Meta's own form: the raw body is the escaped JSON itself.
    const escaped = await signedBody(textEnvelope(h, text, "wamid.escaped"));
    assert.ok(escaped.raw.includes("\\u00f1"), "the body is escaped");
    assert.equal(
      (await postWebhook(h, escaped.raw, escaped.signature)).status,
      200,
    );
    assert.deepEqual((await waitInbound(h, "wamid.escaped")).content, { text });
    // A body whose escapes were decoded on the way is not what Meta signed:
    // only the raw bytes are hashed, so it is refused and nothing is stored.
    const payload = textEnvelope(h, text, "wamid.utf8");
    const { signature } = await signedBody(payload);
    const res = await postWebhook(h, JSON.stringify(payload), signature);
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, "UNAUTHORIZED");
    assert.equal(await countRows(h, "inbound_payloads"), 1);
  },
);

messagingTest(
  "a signed body that is not JSON or not a Meta envelope is acknowledged with 200 and stored with its error, unprocessed",
  async (h) => {
    const bodies = {
      "Cannot parse webhook body: it is not valid JSON": '{"entry": [',
      "Cannot read webhook body: it is not a Meta webhook envelope": JSON
        .stringify({ hello: "world" }),
    };
    for (const [error, raw] of Object.entries(bodies)) {
      const res = await postWebhook(
        h,
        raw,
        signMetaBody(APP_SECRET, raw),
      );
      assert.equal(res.status, 200, error);
      assert.equal(res.body, "EVENT_RECEIVED");
      const row = await h.container.db.selectFrom("inbound_payloads")
        .selectAll().where("body", "=", raw).executeTakeFirstOrThrow();
      assert.equal(row.error, error);
      assert.ok(row.processed_at, "stored as done: nothing will process it");
    }
    assert.equal(
      await countRows(h, "jobs", { column: "kind", value: "meta.inbound" }),
      0,
    );
    assert.equal(await countRows(h, "messages"), 0);
  },
);

messagingTest(
  "GET /meta/webhook echoes the challenge only for the right verify token",
  async (h) => {
    const query = (token: string) =>
      `/meta/webhook?hub.mode=subscribe&hub.verify_token=${token}&hub.challenge=1158201444`;
    const ok = await h.request("GET", query("test-verify-token"), {
      key: null,
    });
    assert.equal(ok.status, 200);
    assert.equal(String(ok.body), "1158201444");
    // Compared in constant time; a prefix, a same-length guess, a longer
    // token and an empty one are all refused.
    for (
      const guess of [
        "guess",
        "test-verify-toke",
        "test-verify-tokex",
        "test-verify-token2",
        "",
      ]
    ) {
      const wrong = await h.request("GET", query(guess), { key: null });
      assert.equal(wrong.status, 403, `verify token "${guess}"`);
    }
    const noToken = await h.request(
      "GET",
      "/meta/webhook?hub.mode=subscribe&hub.challenge=1",
      { key: null },
    );
    assert.equal(noToken.status, 403);
    const noMode = await h.request(
      "GET",
      "/meta/webhook?hub.verify_token=test-verify-token&hub.challenge=1",
      { key: null },
    );
    assert.equal(noMode.status, 403);
  },
);
