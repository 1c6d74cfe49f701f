// WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT: past it, POST /webhooks (and its
// /api/v1 alias) answers 422 WEBHOOK_LIMIT_REACHED and creates nothing.
import assert from "node:assert/strict";
import { engineTest, type Harness } from "../_harness.ts";
import { assertErrorBody } from "../http/_routes.ts";

const HOOK = "http://127.0.0.1:9/hook";
const BODY = { url: HOOK, events: ["contact.created"] };

async function count(h: Harness, accountId: string): Promise<number> {
  const rows = await h.container.db.selectFrom("webhooks").select("id")
    .where("account_id", "=", accountId).execute();
  return rows.length;
}

engineTest(
  "POST /webhooks past the account's limit answers 422 WEBHOOK_LIMIT_REACHED, on both paths",
  async (h) => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await h.request("POST", "/api/v2/webhooks", { body: BODY });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      ids.push(res.body.data.id);
    }
    const refused = await h.request("POST", "/api/v2/webhooks", { body: BODY });
    assertErrorBody(refused, 422, "WEBHOOK_LIMIT_REACHED");
    assert.equal(
      refused.body.error.message,
      "Cannot create webhook: the account already has 3 subscriptions, the most allowed (WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT)",
    );
    assert.deepEqual(refused.body.error.details, { limit: 3 });
    const panel = await h.request("POST", "/api/v1/webhook-subscriptions", {
      body: BODY,
    });
    assertErrorBody(panel, 422, "WEBHOOK_LIMIT_REACHED");
    assert.equal(await count(h, h.tenant.account.id), 3, "nothing created");
    // Disabled ones count: they are still there to enable.
    await h.request("PATCH", `/api/v2/webhooks/${ids[0]}`, {
      body: { enabled: false },
    });
    assertErrorBody(
      await h.request("POST", "/api/v2/webhooks", { body: BODY }),
      422,
      "WEBHOOK_LIMIT_REACHED",
    );
    // The limit is per account, and a deletion makes room.
    const other = await h.makeTenant("other-account");
    const theirs = await h.request("POST", "/api/v2/webhooks", {
      body: BODY,
      key: other.key,
    });
    assert.equal(theirs.status, 201);
    const gone = await h.request("DELETE", `/api/v2/webhooks/${ids[1]}`);
    assert.equal(gone.status, 200);
    const again = await h.request("POST", "/api/v1/webhook-subscriptions", {
      body: BODY,
    });
    assert.equal(again.status, 201, JSON.stringify(again.body));
  },
  { env: { WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT: "3" } },
);

engineTest(
  "creates at once cannot pass the limit together",
  async (h) => {
    const answers = await Promise.all(
      Array.from(
        { length: 8 },
        () => h.request("POST", "/api/v2/webhooks", { body: BODY }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [201, 201, 201, 422, 422, 422, 422, 422]);
    assert.equal(await count(h, h.tenant.account.id), 3);
  },
  { env: { WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT: "3" } },
);

engineTest(
  "an account has 25 subscriptions at most by default",
  async (h) => {
    for (let i = 0; i < 25; i++) {
      const res = await h.request("POST", "/api/v2/webhooks", { body: BODY });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    assertErrorBody(
      await h.request("POST", "/api/v2/webhooks", { body: BODY }),
      422,
      "WEBHOOK_LIMIT_REACHED",
    );
  },
);
