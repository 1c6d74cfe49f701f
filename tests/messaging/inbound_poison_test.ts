// Poison input from the Meta side: a correctly signed message nested deeper
// than the JSON bound is skipped with its reason instead of being stored as
// content that every serializer showing it would then fail on (500 forever).
import assert from "node:assert/strict";
import { ENGINES } from "../_harness.ts";
import {
  customerWrites,
  type Json,
  messagingTest,
  metaChange,
  type Mh,
  newPhone,
  postWebhook,
  waitInbound,
  waitPayloadsProcessed,
} from "./_helpers.ts";
import { APP_SECRET } from "../_support/messaging.ts";
import {
  escapeUnicode,
  signMetaBody,
} from "../../src/upstream/meta_signature.ts";
import { jsonDepth, MAX_JSON_DEPTH } from "../../src/domain/json_bounds.ts";

/** An object nested exactly `levels` deep. */
function nest(levels: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) v = { n: v };
  return v;
}

/** Every item of a cursor-paged list, each page answering 200. */
async function allPages(h: Mh, path: string): Promise<Json[]> {
  const items: Json[] = [];
  let cursor: string | null = null;
  do {
    const q: string = cursor ? `&cursor=${cursor}` : "";
    const res = await h.request("GET", `/api/v2${path}?limit=2${q}`);
    assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
    items.push(...res.body.data);
    cursor = res.body.data.length ? res.body.meta.cursor ?? null : null;
  } while (cursor);
  return items;
}

for (const engine of ENGINES) {
  messagingTest(
    `[${engine}] a signed inbound message nested 100,000 deep is skipped with its reason, its siblings are stored, and every read answers 200`,
    async (h) => {
      const phone = newPhone();
      const { message: first } = await customerWrites(h, phone);
      const from = phone.slice(1);
      const timestamp = String(Math.floor(Date.now() / 1000));
      const atBound = {
        from,
        id: "wamid.at-bound",
        timestamp,
        type: "interactive",
        interactive: nest(MAX_JSON_DEPTH - 1),
      };
      assert.equal(jsonDepth(atBound), MAX_JSON_DEPTH);
      const payload = metaChange(h, {
        contacts: [{ profile: { name: "Ana" }, wa_id: from }],
        messages: [
          {
            from,
            id: "wamid.abyss",
            timestamp,
            type: "interactive",
            interactive: { type: "nfm_reply", nfm_reply: "DEEP" },
          },
          atBound,
          {
            from,
            id: "wamid.after",
            timestamp,
            type: "text",
            text: { body: "Sigo" },
          },
        ],
      });
      // Written by hand: JSON.stringify of the abyss would overflow this stack.
      const abyss = '{"a":'.repeat(100_000) + "{}" + "}".repeat(100_000);
      const raw = escapeUnicode(JSON.stringify(payload)).replace(
        '"DEEP"',
        abyss,
      );
      const res = await postWebhook(
        h,
        raw,
        signMetaBody(APP_SECRET, raw),
      );
      assert.equal(res.status, 200);
      await waitInbound(h, "wamid.after");
      await waitPayloadsProcessed(h);

      const stored = await h.container.db.selectFrom("messages")
        .select("wa_message_id").where("direction", "=", "inbound").execute();
      assert.deepEqual(
        stored.map((r) => r.wa_message_id).sort(),
        [first.waMessageId, "wamid.after", "wamid.at-bound"].sort(),
      );
      const payloads = await h.container.db.selectFrom("inbound_payloads")
        .select("error").where("error", "is not", null).execute();
      assert.equal(payloads.length, 1);
      assert.match(
        payloads[0]!.error!,
        new RegExp(
          `message "wamid\\.abyss": must nest at most ${MAX_JSON_DEPTH} levels deep`,
        ),
      );

      // Every endpoint that shows the conversation's messages still reads.
      const conv = first.conversationId;
      const shown = await allPages(h, `/conversations/${conv}/messages`);
      assert.equal(shown.length, 3);
      const kept = shown.find((m) => m.waMessageId === "wamid.at-bound");
      assert.deepEqual(kept.content, nest(MAX_JSON_DEPTH - 1));
      const one = await h.request("GET", `/api/v2/messages/${kept.id}`);
      assert.equal(one.status, 200, JSON.stringify(one.body));
      const events = await allPages(h, "/events");
      assert.ok(events.some((e) => e.data?.id === kept.id));
      for (const path of [`/conversations/${conv}`, "/conversations"]) {
        const read = await h.request("GET", `/api/v2${path}`);
        assert.equal(read.status, 200, `${path}: ${JSON.stringify(read.body)}`);
      }
    },
    { engine },
  );
}
