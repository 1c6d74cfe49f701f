// GET /conversations/resolve when one of several identifiers is unusable:
// the others still match; only when none is usable is the request refused.
import assert from "node:assert/strict";
import { engineTest, type Harness } from "../_harness.ts";
import { insertThread } from "./_conversation_fixtures.ts";
import { assertErrorBody } from "./_routes.ts";

const resolve = (h: Harness, query: Record<string, string>) =>
  h.request(
    "GET",
    `/api/v2/conversations/resolve?${new URLSearchParams(query)}`,
  );

engineTest(
  "GET /conversations/resolve matches on the usable identifiers when one is unusable",
  async (h) => {
    const ana = await insertThread(h, {
      phoneNumber: "+5491122334455",
      email: "ana@example.com",
      customFields: { instagram: "ana.shop" },
    });
    const cases: Record<string, string>[] = [
      { phone: "not a phone", email: "ana@example.com" },
      { phone: "12", instagram: "@ana.shop" },
      { phone: "+5491122334455", email: "" },
      { phone: "+5491122334455", instagram: "@" },
      { email: "   ", instagram: "ana.shop" },
      { phone: "", email: "ana@example.com", instagram: "" },
    ];
    for (const query of cases) {
      const res = await resolve(h, query);
      assert.equal(res.status, 200, JSON.stringify([query, res.body]));
      assert.deepEqual(res.body.data, {
        conversationId: ana.conversationId,
        alternatives: [],
      }, JSON.stringify(query));
    }
  },
);

engineTest(
  "GET /conversations/resolve refuses when no identifier is usable",
  async (h) => {
    await insertThread(h, { phoneNumber: "+5491122334455" });
    const badPhone = await resolve(h, {
      phone: "abc",
      email: "",
      instagram: "@",
    });
    assertErrorBody(badPhone, 400, "INVALID_PHONE");
    assert.match(badPhone.body.error.message, /"abc"/);
    const blank = await resolve(h, { phone: " ", email: "", instagram: "@" });
    assertErrorBody(blank, 400, "VALIDATION_ERROR");
    assert.match(blank.body.error.message, /at least one of/);
  },
);
