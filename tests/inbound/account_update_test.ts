// account_update (issue 28, item 3): a restriction refuses business-initiated
// sends (templates outside the window) with 422 CHANNEL_RESTRICTED until it
// expires, replies inside an open window still go; a ban disconnects the
// WABA's channels with the reason kept, a reinstatement reconnects them, and
// a channel an operator disconnected stays disconnected.
import assert from "node:assert/strict";
import { ManualClock } from "../../src/clock.ts";
import { syncWabaTemplates } from "../../src/domain/templates/template_sync_service.ts";
import { updateChannel } from "../../src/domain/channels/channel_service.ts";
import { createChannel } from "../../src/domain/channels/channel_service.ts";
import { metaTest, type MetaWorld } from "../_support/meta.ts";
import * as F from "../_support/meta_fixtures.ts";

const WELCOME = {
  type: "template",
  template: {
    name: "welcome",
    language: { code: "en_US" },
    components: [{
      type: "body",
      parameters: [{ type: "text", text: "Ana" }],
    }],
  },
};

function accountUpdate(w: MetaWorld, value: unknown, time: number): string {
  return JSON.stringify({
    object: "whatsapp_business_account",
    entry: [{
      id: w.wabaId,
      time,
      changes: [{ field: "account_update", value }],
    }],
  });
}

async function send(w: MetaWorld, to: string, body: Record<string, unknown>) {
  return await w.request("POST", "/api/v2/messages", {
    body: { phoneNumberId: w.tenant.channel.id, to, ...body },
  });
}

metaTest(
  "a restriction refuses templates outside the window with CHANNEL_RESTRICTED until it expires; replies in an open window go",
  async (w) => {
    await syncWabaTemplates(w.container, w.wabaId, { mode: "live" });
    const writer = "+5491155500001";
    await w.inbound({ from: writer, type: "text", text: { body: "Hola" } });
    await w.settle();
    // The reference's sample: expired in 2022, it refuses nothing.
    await w.postWebhook(F.forWaba(F.ACCOUNT_RESTRICTION, w.wabaId));
    const channels = await w.request("GET", "/api/v2/channels");
    assert.deepEqual(channels.body.data[0].restrictions, [
      {
        type: "RESTRICTED_BIZ_INITIATED_MESSAGING",
        until: "2022-01-04T21:08:18.000Z",
      },
      {
        type: "RESTRICTED_ADD_PHONE_NUMBER_ACTION",
        until: "2022-01-04T21:08:18.000Z",
      },
    ]);
    assert.equal((await send(w, "+5491155500002", WELCOME)).status, 201);

    const until = Math.floor(w.clock.now().getTime() / 1000) + 3600;
    await w.postWebhook(accountUpdate(w, {
      event: "ACCOUNT_RESTRICTION",
      restriction_info: [{
        restriction_type: "RESTRICTED_BIZ_INITIATED_MESSAGING",
        expiration: until,
      }],
    }, 1_900_000_000));
    const refused = await send(w, "+5491155500003", WELCOME);
    assert.equal(refused.status, 422, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, "CHANNEL_RESTRICTED");
    assert.match(
      refused.body.error.message,
      /RESTRICTED_BIZ_INITIATED_MESSAGING until/,
    );
    // The customer who wrote has an open window: a reply, a template too, goes.
    assert.equal(
      (await send(w, writer, { type: "text", text: { body: "Hi!" } })).status,
      201,
    );
    assert.equal((await send(w, writer, WELCOME)).status, 201);
    // In a batch only the business-initiated item fails.
    const batch = await w.request("POST", "/api/v2/messages/batch", {
      body: {
        defaultPhoneNumberId: w.tenant.channel.id,
        messages: [
          { to: writer, type: "text", text: { body: "ok" } },
          { to: "+5491155500004", ...WELCOME },
        ],
      },
    });
    assert.deepEqual(
      batch.body.data.items.map((
        i: { result: string; error?: { code: string } },
      ) => [i.result, i.error?.code ?? null]),
      [["queued", null], ["failed", "CHANNEL_RESTRICTED"]],
    );
    // Until it expires.
    (w.clock as ManualClock).advance(3_601_000);
    assert.equal((await send(w, "+5491155500005", WELCOME)).status, 201);
  },
);

metaTest(
  "a ban disconnects the WABA's channels with the reason kept; a reinstatement reconnects them, but not one an operator disconnected",
  async (w) => {
    const second = await createChannel(w.container, {
      accountId: w.tenant.account.id,
      phoneNumber: "+15550783882",
      displayName: "Second",
      upstreamPhoneNumberId: "106540352249998",
      wabaId: w.wabaId,
      accessToken: "token-2",
    });
    await updateChannel(w.container, second.id, { status: "disconnected" });
    await w.postWebhook(accountUpdate(w, {
      event: "DISABLED_UPDATE",
      ban_info: { waba_ban_state: "DISABLE", waba_ban_date: "2026-11-29" },
    }, 1_900_000_000));
    let rows = (await w.request("GET", "/api/v2/channels")).body.data;
    const first = rows.find((c: { id: string }) =>
      c.id === w.tenant.channel.id
    );
    assert.equal(first.status, "disconnected");
    assert.match(
      first.statusReason,
      /Meta disabled the WhatsApp Business Account/,
    );
    const refused = await send(w, "+5491155500006", WELCOME);
    assert.equal(refused.body.error.code, "CHANNEL_NOT_CONNECTED");
    // The health check does not reconnect a banned WABA's number.
    await w.container.db.updateTable("channels").set({
      health_checked_at: null,
    })
      .execute();
    await w.postWebhook(accountUpdate(w, {
      event: "DISABLED_UPDATE",
      ban_info: { waba_ban_state: "REINSTATE" },
    }, 1_900_000_100));
    rows = (await w.request("GET", "/api/v2/channels")).body.data;
    // deno-lint-ignore no-explicit-any
    const byId = new Map<string, any>(
      rows.map((c: { id: string }) => [c.id, c]),
    );
    assert.equal(byId.get(w.tenant.channel.id).status, "connected");
    assert.equal(byId.get(w.tenant.channel.id).statusReason, null);
    assert.equal(byId.get(second.id).status, "disconnected", "the operator's");
    assert.equal(
      byId.get(second.id).statusReason,
      "Disconnected by an operator",
    );
  },
);
