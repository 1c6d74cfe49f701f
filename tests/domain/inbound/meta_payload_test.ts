import assert from "node:assert/strict";
import {
  inboundContent,
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
