import assert from "node:assert/strict";
import { createSimulatorApp } from "../../src/simulator/app.ts";
import {
  createSimulatorState,
  settleSimulator,
} from "../../src/simulator/state.ts";

const PN = "106540352242922";

async function withApp(
  fn: (
    call: (method: string, path: string, body?: unknown) => Promise<Response>,
  ) => Promise<void>,
): Promise<void> {
  const state = createSimulatorState({
    appSecret: "x",
    throughputPerSecond: 3,
  });
  const app = createSimulatorApp(state);
  try {
    await fn((method, path, body) =>
      Promise.resolve(app.request(path, {
        method,
        headers: { Authorization: "Bearer tok" },
        body: body === undefined ? undefined : JSON.stringify(body),
      }))
    );
  } finally {
    await settleSimulator(state);
  }
}

function text(n: number) {
  return {
    messaging_product: "whatsapp",
    to: "5491122334455",
    type: "text",
    text: { body: `m${n}` },
    biz_opaque_callback_data: `op-${n}`,
  };
}

Deno.test("GET /_sim/messages pages with offset and limit", async () => {
  await withApp(async (call) => {
    for (let n = 0; n < 3; n++) {
      assert.equal(
        (await call("POST", `/v22.0/${PN}/messages`, text(n))).status,
        200,
      );
    }
    const first = await (await call("GET", "/_sim/messages?limit=2")).json();
    assert.deepEqual(
      first.messages.map((m: { bizOpaque: string }) => m.bizOpaque),
      ["op-0", "op-1"],
    );
    assert.equal(first.total, 3);
    assert.equal(first.nextOffset, 2);
    assert.equal(first.countsByOpaque, undefined);
    const rest = await (await call(
      "GET",
      `/_sim/messages?offset=${first.nextOffset}&limit=2`,
    )).json();
    assert.deepEqual(
      rest.messages.map((m: { bizOpaque: string }) => m.bizOpaque),
      ["op-2"],
    );
    assert.equal(rest.nextOffset, 3);
    assert.equal(
      (await call("GET", "/_sim/messages?offset=-1")).status,
      400,
    );
    const res = await call("GET", "/_sim/messages?limit=0");
    assert.equal(res.status, 400);
    await res.body?.cancel();
  });
});

Deno.test("GET /_sim/stats counts 130429 refusals per number, and reset clears them", async () => {
  await withApp(async (call) => {
    const statuses: number[] = [];
    for (let n = 0; n < 5; n++) {
      const res = await call("POST", `/v22.0/${PN}/messages`, text(n));
      statuses.push(res.status);
      await res.body?.cancel();
    }
    const refused = statuses.filter((s) => s !== 200).length;
    assert.ok(refused >= 1, `expected a refusal, got ${statuses}`);
    const stats = await (await call("GET", "/_sim/stats")).json();
    assert.deepEqual(stats, {
      sends: 5 - refused,
      duplicates: 0,
      throttledByNumber: { [PN]: refused },
    });
    await (await call("POST", "/_sim/reset")).body?.cancel();
    assert.deepEqual(await (await call("GET", "/_sim/stats")).json(), {
      sends: 0,
      duplicates: 0,
      throttledByNumber: {},
    });
  });
});
