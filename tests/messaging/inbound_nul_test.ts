// What Meta sends is stored, never refused: a NUL (U+0000) in its text is
// stored as U+FFFD, as a lone surrogate is. On SQLite a NUL cut a text column
// on reading (a name "\u0000nul" read back ""); on libSQL it came back whole.
import assert from "node:assert/strict";
import {
  behave,
  customerWrites,
  events,
  getConversation,
  getMessage,
  type Json,
  messagingTest,
  metaChange,
  type Mh,
  newPhone,
  postSigned,
  postWebhook,
  sendOk,
  textTo,
  waitInbound,
} from "./_helpers.ts";
import { APP_SECRET } from "../_support/messaging.ts";
import { signMetaBody } from "../../src/upstream/meta_signature.ts";

const R = "\uFFFD";

function message(sender: string, type: string, body: Record<string, unknown>) {
  return {
    from: sender,
    id: `wamid.nul-${crypto.randomUUID()}`,
    timestamp: String(Math.floor(Date.now() / 1000)),
    type,
    ...body,
  };
}

async function contactOf(h: Mh, stored: Json): Promise<Json> {
  const res = await h.request("GET", `/api/v2/contacts/${stored.contactId}`);
  assert.equal(res.status, 200);
  return res.body.data;
}

async function inboundWithNul(h: Mh): Promise<void> {
  const phone = newPhone();
  const digits = phone.slice(1);
  const text = message(digits, "text", { text: { body: "r\u0000s" } });
  const image = message(digits, "image", {
    image: {
      id: "1479537139650973",
      mime_type: "image/jpeg",
      sha256: "abc",
      caption: "cap\u0000tion",
    },
  });
  const reply = message(digits, "interactive", {
    interactive: {
      type: "button_reply",
      button_reply: { id: "b\u00001", title: "S\u0000í" },
    },
  });
  const location = message(digits, "location", {
    location: { latitude: -34.6, longitude: -58.4, "na\u0000me": "Obelisco" },
  });
  await postSigned(
    h,
    metaChange(h, {
      contacts: [{
        profile: { name: "\u0000nul", username: "ana\u0000.cafe" },
        wa_id: digits,
      }],
      messages: [text, image, reply, location],
    }),
  );
  const stored = await waitInbound(h, text.id);
  assert.deepEqual(stored.content, { text: `r${R}s` });
  const contact = await contactOf(h, stored);
  assert.equal(contact.name, `${R}nul`);
  assert.equal(contact.username, `ana${R}.cafe`);
  const captioned = await waitInbound(h, image.id);
  assert.equal(captioned.content.caption, `cap${R}tion`);
  const replied = await waitInbound(h, reply.id);
  assert.deepEqual(replied.content.button_reply, {
    id: `b${R}1`,
    title: `S${R}í`,
  });
  const located = await waitInbound(h, location.id);
  assert.equal(located.content[`na${R}me`], "Obelisco");
  const conversation = await getConversation(h, stored.conversationId);
  assert.equal(conversation.contact.name, `${R}nul`);
  const received = (await events(h)).find((e) =>
    e.type === "message.received" && e.data.id === stored.id
  )!;
  assert.equal(received.data.contact.name, `${R}nul`);
}

/** A signed body that is not JSON is kept for the operator: whole, with U+FFFD. */
async function unreadableWithNul(h: Mh): Promise<void> {
  const raw = "not JSON \u0000 but signed";
  const res = await postWebhook(h, raw, signMetaBody(APP_SECRET, raw));
  assert.equal(res.status, 200);
  const stored = await h.container.db.selectFrom("inbound_payloads")
    .select(["body", "error"]).executeTakeFirstOrThrow();
  assert.equal(stored.body, `not JSON ${R} but signed`);
  assert.match(stored.error ?? "", /not valid JSON/);
}

async function statusWithNul(h: Mh): Promise<void> {
  const phone = newPhone();
  await customerWrites(h, phone);
  // Meta's own failed report comes below, after "sent" (a read message stays read).
  await behave(h, { stopAfter: "sent" });
  const id = await sendOk(h, textTo(phone, "Hola"));
  const sent = await h.waitForStatus(id, ["sent"]);
  // A status-only payload is applied before the 200 (status_webhook_service.ts).
  await postSigned(
    h,
    metaChange(h, {
      statuses: [{
        id: sent.waMessageId,
        status: "failed",
        timestamp: String(Math.floor(Date.now() / 1000)),
        recipient_id: phone.slice(1),
        errors: [{
          code: 131026,
          title: "Message undeliverable",
          error_data: { details: "Receiver \u0000 is incapable" },
        }],
      }],
    }),
  );
  const failed = await h.waitForStatus(id, ["failed"]);
  assert.equal(failed.errorMessage, `Receiver ${R} is incapable`);
  assert.equal((await getMessage(h, id)).errorMessage, failed.errorMessage);
}

for (const engine of ["sqlite", "libsql"] as const) {
  messagingTest(
    `[${engine}] a NUL in an inbound message, its contact or its caption is stored as U+FFFD`,
    inboundWithNul,
    { engine },
  );
  messagingTest(
    `[${engine}] a NUL in a status report's error is stored as U+FFFD`,
    statusWithNul,
    { engine },
  );
  messagingTest(
    `[${engine}] a signed body that is not JSON is stored with U+FFFD for a NUL`,
    unreadableWithNul,
    { engine },
  );
}
