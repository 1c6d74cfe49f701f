import assert from "node:assert/strict";
import { updateChannel } from "../../src/domain/channels/channel_service.ts";
import { countRows, messagingTest, newPhone, send } from "./_helpers.ts";

const LINK = "https://cdn.example.com/a.jpg";

function buttons(ids: string[]) {
  return {
    type: "button",
    body: { text: "Pick one" },
    action: {
      buttons: ids.map((id, i) => ({
        type: "reply",
        reply: { id, title: `Option ${i}` },
      })),
    },
  };
}

function list(rows: number) {
  return {
    type: "list",
    body: { text: "Pick one" },
    action: {
      button: "Options",
      sections: [{
        rows: Array.from({ length: rows }, (_, i) => ({
          id: `r${i}`,
          title: `Row ${i}`,
        })),
      }],
    },
  };
}

/** Bodies that must be rejected with 400 VALIDATION_ERROR, by name. */
const BAD_SHAPES: Record<string, Record<string, unknown>> = {
  "image with both link and id": {
    type: "image",
    image: { link: LINK, id: "123" },
  },
  "image with neither link nor id": { type: "image", image: { caption: "x" } },
  "video with both link and id": {
    type: "video",
    video: { link: LINK, id: "123" },
  },
  "audio with neither": { type: "audio", audio: {} },
  "audio with a caption": {
    type: "audio",
    audio: { link: LINK, caption: "x" },
  },
  "document with neither": { type: "document", document: { filename: "a" } },
  "caption over 1024": {
    type: "image",
    image: { link: LINK, caption: "x".repeat(1025) },
  },
  "text over 4096": { type: "text", text: { body: "x".repeat(4097) } },
  "empty text": { type: "text", text: { body: "" } },
  "text as a bare string": { type: "text", text: "Hi" },
  "4 buttons": {
    type: "interactive",
    interactive: buttons(["a", "b", "c", "d"]),
  },
  "duplicate button ids": {
    type: "interactive",
    interactive: buttons(["a", "a"]),
  },
  "list with 11 rows": { type: "interactive", interactive: list(11) },
  "unknown interactive type": {
    type: "interactive",
    interactive: { type: "carousel", body: { text: "x" }, action: {} },
  },
  "link that is not a URL": { type: "image", image: { link: "not a url" } },
  "link with a non-http scheme": {
    type: "video",
    video: { link: "ftp://cdn.example.com/v.mp4" },
  },
  "unknown top-level field": {
    type: "text",
    text: { body: "Hi" },
    priority: "high",
  },
  "unknown field inside the type object": {
    type: "text",
    text: { body: "Hi", bold: true },
  },
  "template with a bad name": {
    type: "template",
    template: { name: "Bad Name", language: { code: "es_AR" } },
  },
  "reaction without emoji": {
    type: "reaction",
    reaction: { message_id: "wamid.x" },
  },
  "clientRef of 257 characters": {
    type: "text",
    text: { body: "Hi" },
    clientRef: "r".repeat(257),
  },
};

/** What each rejection's message must name (the field or the rule). */
const NAMED: Record<string, string> = {
  "image with both link and id": 'exactly one of "link" or "id"',
  "image with neither link nor id": 'exactly one of "link" or "id"',
  "video with both link and id": 'exactly one of "link" or "id"',
  "audio with neither": 'exactly one of "link" or "id"',
  "audio with a caption": '"caption"',
  "document with neither": 'exactly one of "link" or "id"',
  "caption over 1024": '"image.caption"',
  "text over 4096": '"text.body"',
  "empty text": '"text.body"',
  "text as a bare string": '"text"',
  "4 buttons": '"interactive.action.buttons"',
  "duplicate button ids": "button ids must be unique",
  "list with 11 rows": "10",
  "unknown interactive type": '"interactive.type"',
  "link that is not a URL": '"image.link"',
  "link with a non-http scheme": '"video.link"',
  "unknown top-level field": '"priority"',
  "unknown field inside the type object": '"bold"',
  "template with a bad name": '"template.name"',
  "reaction without emoji": '"reaction.emoji"',
  "clientRef of 257 characters": '"clientRef"',
};

messagingTest("POST /messages rejects every bad shape with 400", async (h) => {
  const to = newPhone();
  for (const [name, body] of Object.entries(BAD_SHAPES)) {
    const res = await send(h, { to, ...body });
    assert.equal(res.status, 400, name);
    assert.equal(res.body.error.code, "VALIDATION_ERROR", name);
    assert.ok(
      res.body.error.message.includes(NAMED[name]!),
      `${name}: ${res.body.error.message}`,
    );
  }
  assert.equal(await countRows(h, "messages"), 0);
  assert.equal(await countRows(h, "contacts"), 0);
});

messagingTest(
  "POST /messages names unsupported types and missing fields",
  async (h) => {
    const to = newPhone();
    for (const type of ["sticker", "location"]) {
      const res = await send(h, { to, type, [type]: { id: "1" } });
      assert.equal(res.status, 400, type);
      assert.equal(res.body.error.code, "INVALID_MESSAGE_TYPE", type);
      assert.match(res.body.error.message, new RegExp(`"${type}"`));
    }
    const noText = await send(h, { to, type: "text" });
    assert.equal(noText.status, 400);
    assert.equal(noText.body.error.code, "MISSING_REQUIRED_FIELD");
    assert.match(noText.body.error.message, /"text"/);
    const noTo = await send(h, { type: "text", text: { body: "Hi" } });
    assert.equal(noTo.status, 400);
    assert.equal(noTo.body.error.code, "MISSING_REQUIRED_FIELD");
    assert.match(noTo.body.error.message, /"to"/);
    const noType = await send(h, { to, text: { body: "Hi" } });
    assert.equal(noType.body.error.code, "MISSING_REQUIRED_FIELD");
  },
);

messagingTest("POST /messages rejects a malformed phone number", async (h) => {
  for (const to of ["abc", "12", "+54 11 abcd"]) {
    const res = await send(h, { to, type: "text", text: { body: "Hi" } });
    assert.equal(res.status, 400, to);
    assert.equal(res.body.error.code, "INVALID_PHONE", to);
  }
  assert.equal(await countRows(h, "contacts"), 0);
});

messagingTest(
  "POST /messages rejects an unknown, foreign or disconnected channel with 422",
  async (h) => {
    const to = newPhone();
    const text = { to, type: "text", text: { body: "Hi" } };
    const unknown = await send(h, {
      ...text,
      phoneNumberId: crypto.randomUUID(),
    });
    assert.equal(unknown.status, 422);
    assert.equal(unknown.body.error.code, "INVALID_CHANNEL");
    const other = await h.makeTenant(
      `other-${crypto.randomUUID().slice(0, 8)}`,
    );
    const foreign = await send(h, { ...text, phoneNumberId: other.channel.id });
    assert.equal(foreign.status, 422);
    assert.equal(foreign.body.error.code, "INVALID_CHANNEL");
    await updateChannel(h.container, h.tenant.channel.id, {
      status: "disconnected",
    });
    const disconnected = await send(h, text);
    assert.equal(disconnected.status, 422);
    assert.equal(disconnected.body.error.code, "CHANNEL_NOT_CONNECTED");
    assert.equal(await countRows(h, "messages"), 0);
  },
);
