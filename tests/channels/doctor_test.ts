// doctor (issue 28, item 6): every prerequisite checked, one line each with
// the fix when it fails; blocking when one that stops sending or receiving
// fails.
import assert from "node:assert/strict";
import {
  type ConnectDeps,
  connectWaba,
} from "../../src/domain/channels/connect_service.ts";
import {
  type DoctorDeps,
  runDoctor,
} from "../../src/domain/channels/doctor_service.ts";
import { SIM_APP_ID } from "../../src/simulator/waba_state.ts";
import { WEBHOOK_FIELDS } from "../../src/domain/wabas/webhook_fields.ts";
import { metaTest, type MetaWorld } from "../_support/meta.ts";

const PUBLIC = "https://bm.example.com";

function deps(
  w: MetaWorld,
  publicBaseUrl = PUBLIC,
): DoctorDeps & ConnectDeps {
  return {
    ...w.container,
    config: { ...w.container.config, publicBaseUrl, metaAppId: SIM_APP_ID },
  };
}

/** A connected setup: channels from Meta, the app subscribed, its webhook fields set in the dashboard. */
async function connected(w: MetaWorld) {
  await connectWaba(deps(w), {
    accountId: w.tenant.account.id,
    wabaId: w.wabaId,
    accessToken: "EAAG-doctor",
  });
  await w.sim("/app", {
    subscription: {
      callbackUrl: `${PUBLIC}/meta/webhook`,
      verifyToken: "test-verify-token",
      fields: [...WEBHOOK_FIELDS],
    },
  });
}

metaTest(
  "doctor on a healthy setup: every check passes, nothing blocks",
  async (w) => {
    await connected(w);
    // Traffic: a customer writes, a reply goes and Meta reports its status.
    await w.inbound({
      from: "+5491155500011",
      type: "text",
      text: { body: "Hi" },
    });
    await w.settle();
    const res = await w.request("POST", "/api/v2/messages", {
      body: {
        phoneNumberId: w.tenant.channel.id,
        to: "+5491155500011",
        type: "text",
        text: { body: "Hello" },
      },
    });
    await w.waitForStatus(res.body.data.id, ["read"]);
    const report = await runDoctor(deps(w), w.tenant.account.id);
    const failed = report.checks.filter((c) => !c.ok);
    assert.deepEqual(failed, [], JSON.stringify(report.checks, null, 2));
    assert.equal(report.blocking, false);
    const names = report.checks.map((c) => c.name);
    for (
      const expected of [
        "META_APP_SECRET",
        "META_VERIFY_TOKEN",
        "PUBLIC_BASE_URL",
        "app webhook fields",
        `token (WABA ${w.wabaId})`,
        `app subscribed (WABA ${w.wabaId})`,
        `templates (WABA ${w.wabaId})`,
        `number ${w.tenant.channel.phoneNumber}`,
        "webhook verified",
        "last inbound message",
        "last status callback",
      ]
    ) assert.ok(names.includes(expected), `${expected} in ${names}`);
    const number = report.checks.find((c) => c.name.startsWith("number"))!;
    assert.match(
      number.detail,
      /Meta: CONNECTED, quality GREEN, throughput STANDARD/,
    );
    const templates = report.checks.find((c) =>
      c.name.startsWith("templates")
    )!;
    assert.match(templates.detail, /29 approved/);
  },
);

metaTest(
  "doctor on a broken setup names each failure with its fix and blocks",
  async (w) => {
    await connected(w);
    // The number was banned, the server is on http, the fields half ticked.
    await fetch(
      `${w.simulator.url}/_sim/numbers/${w.tenant.channel.upstreamPhoneNumberId}/health`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ status: "BANNED", time: 1_700_000_000 }),
      },
    ).then((r) => r.body?.cancel());
    await w.sim("/app", {
      subscription: {
        callbackUrl: `${PUBLIC}/meta/webhook`,
        verifyToken: "test-verify-token",
        fields: ["message_template_status_update"],
      },
    });
    const report = await runDoctor(
      deps(w, "http://bm.example.com"),
      w.tenant.account.id,
    );
    assert.equal(report.blocking, true);
    const byName = new Map(report.checks.map((c) => [c.name, c]));
    const failing = (name: string) => {
      const c = byName.get(name);
      assert.ok(
        c && !c.ok && c.blocking && c.fix,
        `${name}: ${JSON.stringify(c)}`,
      );
      return c;
    };
    assert.match(failing("PUBLIC_BASE_URL").detail, /is not https/);
    assert.match(failing("app webhook fields").detail, /missing messages/);
    const number = failing(`number ${w.tenant.channel.phoneNumber}`);
    assert.match(number.detail, /Meta: BANNED/);
    assert.match(
      number.detail,
      /channel disconnected \(Meta reports the number as BANNED\)/,
    );
    // The token is refused for the WABA, but the number's own token still reads it.
    const none = report.checks.find((c) => c.name === "last inbound message")!;
    assert.equal(none.ok, false);
    assert.equal(
      none.blocking,
      false,
      "no traffic yet warns, it does not block",
    );
  },
);
