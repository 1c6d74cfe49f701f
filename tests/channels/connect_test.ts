// channels connect (issue 28, item 5) against the simulator playing Meta:
// the token checked, a channel per number from what Meta says, the app
// subscribed, the number registered with a PIN, the app's webhook fields
// completed, the templates synced; a second run changes nothing.
import assert from "node:assert/strict";
import {
  type ConnectDeps,
  connectWaba,
} from "../../src/domain/channels/connect_service.ts";
import { SIM_APP_ID } from "../../src/simulator/waba_state.ts";
import { WEBHOOK_FIELDS } from "../../src/domain/wabas/webhook_fields.ts";
import { metaTest, type MetaWorld } from "../_support/meta.ts";

const TOKEN = "EAAG-connect-token";

/** The container with the app configured: META_APP_ID and the callback on the test's server. */
function withApp(w: MetaWorld, app = true): ConnectDeps {
  return {
    ...w.container,
    config: {
      ...w.container.config,
      publicBaseUrl: w.baseUrl,
      metaAppId: app ? SIM_APP_ID : undefined,
    },
  };
}

function connect(w: MetaWorld, extra: { pin?: string; app?: boolean } = {}) {
  return connectWaba(withApp(w, extra.app ?? true), {
    accountId: w.tenant.account.id,
    wabaId: w.wabaId,
    accessToken: TOKEN,
    pin: extra.pin,
  });
}

/** What a second run must leave as it was: rows without the time of the last health read. */
async function snapshot(w: MetaWorld) {
  const db = w.container.db;
  const channels = (await db.selectFrom("channels").selectAll().orderBy("id")
    .execute()).map(({ health_checked_at: _, ...r }) => r);
  const templates = await db.selectFrom("templates").selectAll().orderBy("id")
    .execute();
  const wabas = (await db.selectFrom("wabas").selectAll().execute()).map((
    { quota_used: _u, quota_window_start: _w, ...r },
  ) => r);
  return { channels, templates, wabas };
}

metaTest(
  "connect makes the channels from Meta, subscribes the app and its webhook fields, syncs the templates; twice changes nothing",
  async (w) => {
    await w.sim("/numbers", {
      phoneNumberId: "106540352240777",
      displayPhoneNumber: "+15550107777",
      wabaId: w.wabaId,
      verifiedName: "Acme Support",
    });
    const first = await connect(w);
    assert.equal(first.token.method, "debug_token");
    assert.deepEqual(
      first.channels.map((c) => [c.upstreamPhoneNumberId, c.created]).sort(),
      [
        [w.tenant.channel.upstreamPhoneNumberId, false],
        ["106540352240777", true],
      ],
    );
    const made = first.channels.find((c) => c.created)!;
    assert.equal(made.phoneNumber, "+15550107777");
    assert.equal(made.displayName, "Acme Support");
    assert.equal(made.status, "connected");
    assert.equal(first.subscribed, "subscribed");
    assert.equal(first.webhook.status, "updated");
    assert.deepEqual(first.webhook.missing, [...WEBHOOK_FIELDS]);
    assert.ok(first.templates.templates > 25);
    const waba = await w.simGet(`/wabas/${w.wabaId}`);
    assert.deepEqual(waba.subscribedApps, [SIM_APP_ID]);
    const app = await w.simGet("/app") as {
      subscription: { callbackUrl: string; fields: string[] };
    };
    assert.equal(app.subscription.callbackUrl, `${w.baseUrl}/meta/webhook`);
    assert.deepEqual(
      app.subscription.fields.sort(),
      [...WEBHOOK_FIELDS].sort(),
    );
    // Meta's handshake reached this server while the fields were set.
    const verified = await w.container.db.selectFrom("channels")
      .select("webhook_verified").execute();
    assert.ok(verified.every((c) => c.webhook_verified === 1));

    const before = await snapshot(w);
    const calls = (await w.calls()).length;
    const second = await connect(w);
    assert.ok(second.channels.every((c) => !c.created && !c.changed));
    assert.equal(second.subscribed, "already");
    assert.equal(second.webhook.status, "already");
    assert.equal(second.templates.created + second.templates.updated, 0);
    assert.deepEqual(await snapshot(w), before, "nothing changed");
    const posts = (await w.calls()).slice(calls).filter((c) =>
      c.method === "POST"
    );
    assert.deepEqual(posts, [], "nothing asked of Meta but reads");
  },
);

metaTest(
  "connect registers a number that is not on Cloud API yet when given the PIN, once",
  async (w) => {
    await fetch(
      `${w.simulator.url}/_sim/numbers/${w.tenant.channel.upstreamPhoneNumberId}/health`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ status: "PENDING", time: 1_700_000_000 }),
      },
    ).then((r) => r.body?.cancel());
    const first = await connect(w, { pin: "123456" });
    assert.equal(first.channels[0]!.registered, "registered");
    assert.equal(first.channels[0]!.status, "connected");
    const registers = (await w.calls()).filter((c) =>
      c.path.endsWith("/register")
    );
    assert.equal(registers.length, 1);
    const second = await connect(w, { pin: "123456" });
    assert.equal(second.channels[0]!.registered, "already");
    assert.equal(
      (await w.calls()).filter((c) => c.path.endsWith("/register")).length,
      1,
      "Meta allows 10 registrations per 72 h: not one more",
    );
    await assert.rejects(
      () => connect(w, { pin: "12345" }),
      /--pin must be the number's six-digit/,
    );
  },
);

metaTest(
  "connect names the missing permission (debug_token, and by calls without META_APP_ID) and creates nothing",
  async (w) => {
    await w.sim("/tokens", {
      token: TOKEN,
      scopes: ["whatsapp_business_management"],
    });
    const before = await snapshot(w);
    await assert.rejects(
      () => connect(w),
      /lacks whatsapp_business_messaging on WhatsApp Business Account/,
    );
    await assert.rejects(
      () => connect(w, { app: false }),
      /lacks whatsapp_business_messaging .*\(Meta error 200\)/,
    );
    assert.deepEqual(await snapshot(w), before);
    await w.sim("/tokens", { token: TOKEN, valid: false });
    await assert.rejects(
      () => connect(w),
      /invalid or expired \(Meta error 190\)/,
    );
    await assert.rejects(() => connect(w, { app: false }), /Meta error 190/);
  },
);

metaTest(
  "a Graph error of a management call becomes a message naming Meta's code",
  async (w) => {
    for (
      const [code, says] of [
        [190, /Meta error 190.*expired/],
        [200, /Meta error 200.*permission/],
        [10, /Meta error 10.*permission/],
        [4, /Meta error 4.*rate limit/],
        [80007, /Meta error 80007.*rate limit/],
        [100, /Meta error 100.*does not know this object/],
      ] as const
    ) {
      await w.sim("/management/fail", { code, path: "/phone_numbers" });
      await assert.rejects(
        () => connect(w),
        (err: Error) => {
          assert.match(
            err.message,
            /^Cannot connect: listing the WABA's phone numbers: /,
          );
          assert.match(err.message, says);
          return true;
        },
      );
    }
  },
);
