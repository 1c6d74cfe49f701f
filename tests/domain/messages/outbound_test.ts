import assert from "node:assert/strict";
import { isOneEmoji } from "../../../src/domain/messages/emoji.ts";
import { parseSendMessage } from "../../../src/domain/messages/outbound.ts";

const CHANNEL = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

Deno.test("isOneEmoji takes one emoji of any length and nothing else", () => {
  const one = [
    "👍",
    "👍🏽", // skin tone
    "🇦🇷", // flag
    "1️⃣", // keycap
    "#️⃣",
    "👨‍👩‍👧‍👦", // ZWJ family
    "🧑🏻‍❤️‍💋‍🧑🏼", // ZWJ with skin tones, 15 UTF-16 units
    "🏴󠁧󠁢󠁳󠁣󠁴󠁿", // tag sequence
    "❤", // text-default, no U+FE0F
    "❤️",
  ];
  for (const e of one) assert.ok(isOneEmoji(e), JSON.stringify(e));
  const notOne = [
    "",
    "a",
    "1",
    "ab",
    "👍👍",
    "👍 ",
    "🇦🇦",
    "😀\u0301",
    "\u200D",
  ];
  for (const e of notOne) assert.ok(!isOneEmoji(e), JSON.stringify(e));
});

function reaction(emoji: string) {
  return parseSendMessage({
    phoneNumberId: CHANNEL,
    to: "+5491122334455",
    type: "reaction",
    reaction: { message_id: "wamid.x", emoji },
  });
}

Deno.test("a reaction's emoji is one emoji or empty", () => {
  for (const emoji of ["🧑🏻‍❤️‍💋‍🧑🏼", "🇦🇷", ""]) {
    assert.ok(reaction(emoji).ok, JSON.stringify(emoji));
  }
  for (const emoji of ["ab", "👍👍", "ok"]) {
    const parsed = reaction(emoji);
    assert.ok(!parsed.ok, emoji);
    assert.equal(parsed.problem.code, "VALIDATION_ERROR");
    assert.match(
      parsed.problem.message,
      /"reaction\.emoji": must be one emoji/,
    );
  }
});

function templateWith(components: unknown[]) {
  return parseSendMessage({
    phoneNumberId: CHANNEL,
    to: "+5491122334455",
    type: "template",
    template: { name: "greeting", language: { code: "es_AR" }, components },
  });
}

Deno.test("template send components take their type in any case", () => {
  const parsed = templateWith([
    { type: "HEADER", parameters: [{ type: "text", text: "Hi" }] },
    { type: "Body", parameters: [{ type: "text", text: "Ana" }] },
    {
      type: "BUTTON",
      sub_type: "quick_reply",
      index: 0,
      parameters: [{ type: "payload", payload: "yes" }],
    },
  ]);
  assert.ok(parsed.ok, JSON.stringify(parsed));
  const value = parsed.value as {
    template: { components: { type: string }[] };
  };
  assert.deepEqual(value.template.components.map((c) => c.type), [
    "header",
    "body",
    "button",
  ]);
  const wrong = templateWith([{ type: "FOOTER", parameters: [] }]);
  assert.ok(!wrong.ok);
  assert.match(wrong.problem.message, /"template\.components\.0\.type"/);
});

Deno.test("a channel id that is not a UUID is INVALID_CHANNEL naming its field", () => {
  const text = { to: "+5491122334455", type: "text", text: { body: "Hi" } };
  for (const bad of ["106540352242922", 106540352242922, "", "channel-1"]) {
    const own = parseSendMessage({ ...text, phoneNumberId: bad });
    assert.ok(!own.ok);
    assert.equal(own.problem.code, "INVALID_CHANNEL");
    assert.match(own.problem.message, /^Invalid field "phoneNumberId": /);
    const fallback = parseSendMessage(text, { defaultPhoneNumberId: bad });
    assert.ok(!fallback.ok);
    assert.equal(fallback.problem.code, "INVALID_CHANNEL");
    assert.match(
      fallback.problem.message,
      /^Invalid field "defaultPhoneNumberId": /,
    );
  }
  // An item's own good channel wins over a bad default.
  const own = parseSendMessage({ ...text, phoneNumberId: CHANNEL }, {
    defaultPhoneNumberId: "106540352242922",
  });
  assert.ok(own.ok);
});
