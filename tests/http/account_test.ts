import assert from "node:assert/strict";
import { engineTest } from "../_harness.ts";

engineTest("GET /account returns the key's account", async (h) => {
  const res = await h.request("GET", "/api/v2/account");
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.data, {
    id: h.tenant.account.id,
    name: h.tenant.account.name,
    slug: h.tenant.account.slug,
    plan: "crece",
  });
  assert.equal(typeof res.body.meta.requestId, "string");
});

engineTest("GET /channels lists only the account's channels", async (h) => {
  const other = await h.makeTenant("other-co");
  const res = await h.request("GET", "/api/v2/channels");
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.data.map((c: { id: string }) => c.id), [
    h.tenant.channel.id,
  ]);
  const theirs = await h.request("GET", "/api/v2/channels", { key: other.key });
  assert.deepEqual(theirs.body.data.map((c: { id: string }) => c.id), [
    other.channel.id,
  ]);
  assert.equal(
    res.body.data[0].phoneNumberId,
    h.tenant.channel.upstreamPhoneNumberId,
  );
  assert.equal("accessToken" in res.body.data[0], false);
});
