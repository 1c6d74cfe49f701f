import assert from "node:assert/strict";
import {
  inboundContent,
  MetaContact,
  MetaMessage,
} from "../../../src/domain/inbound/meta_payload.ts";
import { senderOf } from "../../../src/domain/inbound/sender.ts";

Deno.test("an On-Premises style voice message is stored as audio marked voice", () => {
  // On-Premises API webhooks name voice notes `type: "voice"` with a `voice` object.
  const message = MetaMessage.parse({
    from: "5491155550001",
    id: "wamid.voice-1",
    type: "voice",
    voice: { id: "9911", mime_type: "audio/ogg; codecs=opus", sha256: "abc" },
  });
  const { type, content, media } = inboundContent(message);
  assert.equal(type, "audio");
  assert.equal(content.voice, true);
  assert.equal(media?.kind, "audio");
  assert.equal(media?.upstreamId, "9911");
});

Deno.test("senderOf reads phone, BSUID and profile, and refuses ids that are neither", () => {
  const cases: [Record<string, unknown>, unknown][] = [
    [{ from: "5491155550001" }, {
      phoneNumber: "+5491155550001",
      userId: null,
    }],
    [{ from: "US.13491208655302741918" }, {
      phoneNumber: null,
      userId: "US.13491208655302741918",
    }],
    [{ from_user_id: "US.ENT.11815799212886844830" }, {
      phoneNumber: null,
      userId: "US.ENT.11815799212886844830",
    }],
    [{ from: "1234" }, "refused"],
    [{ from: "+" }, "refused"],
    [{ from: "US.13491208655302741918x!" }, "refused"],
    [{ from_user_id: "not a bsuid" }, "refused"],
    [{}, "refused"],
  ];
  for (const [ids, expected] of cases) {
    const message = MetaMessage.parse({ id: "wamid.x", type: "text", ...ids });
    const result = senderOf(message, []);
    if (expected === "refused") {
      assert.ok("refused" in result, JSON.stringify(ids));
    } else {
      assert.ok("sender" in result, JSON.stringify(ids));
      assert.deepEqual({
        phoneNumber: result.sender.phoneNumber,
        userId: result.sender.userId,
      }, expected);
    }
  }
});

Deno.test("senderOf takes a lone contacts[] entry only when it names no one else", () => {
  const message = (ids: Record<string, unknown>) =>
    MetaMessage.parse({ id: "wamid.x", type: "text", ...ids });
  const sender = (ids: Record<string, unknown>, entry: unknown) => {
    const result = senderOf(message(ids), [MetaContact.parse(entry)]);
    assert.ok("sender" in result);
    return result.sender;
  };
  // The lone entry names another phone and its BSUID: neither is the sender's.
  const other = sender({ from: "5491155550001" }, {
    profile: { name: "Other" },
    wa_id: "5491155550999",
    user_id: "US.4444",
  });
  assert.deepEqual(
    [other.phoneNumber, other.userId, other.name],
    ["+5491155550001", null, null],
  );
  const otherUser = sender({ from_user_id: "US.1111" }, {
    profile: { name: "Other", username: "other" },
    user_id: "US.2222",
  });
  assert.deepEqual(
    [otherUser.userId, otherUser.username],
    ["US.1111", null],
  );
  // An entry without ids is the sender's profile (a BSUID in `from`).
  const own = sender({ from: "AR.8842193300417" }, {
    profile: { name: "Leo", username: "leo" },
  });
  assert.deepEqual([own.userId, own.name, own.username], [
    "AR.8842193300417",
    "Leo",
    "leo",
  ]);
});
