// Text with a lone surrogate (valid JSON: "\ud800") is stored the same way on
// both engines, as U+FFFD, instead of failing the statement on libSQL.
import assert from "node:assert/strict";
import { engineTest } from "../_harness.ts";

const RAW = '{"phoneNumber":"+5491155001199","name":"a\\ud800b"}';

engineTest(
  "a lone surrogate in a request's text is stored as U+FFFD",
  async (h) => {
    const created = await h.request("POST", "/api/v2/contacts", {
      rawBody: RAW,
      headers: { "content-type": "application/json" },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const read = await h.request(
      "GET",
      `/api/v2/contacts/${created.body.data.id}`,
    );
    assert.equal(read.status, 200);
    assert.equal(read.body.data.name, "a\uFFFDb");
  },
);
