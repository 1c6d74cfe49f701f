// POST /api/v1/media: a file goes to Meta (the simulator) through the
// channel's number and its media id sends a template with a media header;
// types, sizes, channels and scopes are refused with the API's errors, and
// a body past the limit is cut off while it is read.
import assert from "node:assert/strict";
import { newId } from "../../src/ids.ts";
import { toDbTime } from "../../src/db/time.ts";
import { insertTemplate } from "../../src/domain/templates/template_repo.ts";
import type { TemplateComponent } from "../../src/domain/templates/template.ts";
import { createAgent } from "../../src/domain/accounts/account_service.ts";
import { mediaHeader } from "../_support/template_fixtures.ts";
import { readAtMost } from "../../src/domain/media/upload_service.ts";
import { AppError } from "../../src/errors.ts";
import { waitFor } from "../_support/wait.ts";
import {
  type Json,
  messagingTest,
  type Mh,
  newPhone,
  send,
  simSendsOf,
} from "./_helpers.ts";

/** A 1x1 PNG. */
const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);

/** Over real HTTP (the harness's server), so Content-Length and streaming are the wire's. */
async function upload(
  h: Mh,
  body: BodyInit,
  options: {
    type?: string;
    query?: Record<string, string>;
    key?: string;
  } = {},
): Promise<{ status: number; body: Json; headers: Headers }> {
  const query = new URLSearchParams(
    options.query ?? { phoneNumberId: h.tenant.channel.id },
  );
  const res = await fetch(`${h.baseUrl}/api/v1/media?${query}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${options.key ?? h.tenant.key}`,
      ...(options.type ? { "content-type": options.type } : {}),
    },
    body,
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

/** What a promise rejects with; fails the test if it resolves. */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  assert.fail("expected a rejection");
}

function assertError(
  res: { status: number; body: Json },
  status: number,
  code: string,
) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.error.code, code);
  assert.equal(typeof res.body.error.message, "string");
}

messagingTest(
  "an uploaded image is Meta's media id, and a template header sends it",
  async (h) => {
    const res = await upload(h, PNG, {
      type: "image/png",
      query: { phoneNumberId: h.tenant.channel.id, filename: "../sale.png" },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const data = res.body.data;
    assert.match(data.id, /^[0-9]+$/);
    assert.equal(data.type, "image");
    assert.equal(data.mimeType, "image/png");
    assert.equal(data.sizeBytes, PNG.byteLength);
    assert.equal(data.fileName, "sale.png", "no path reaches Meta");
    assert.equal(
      Date.parse(data.expiresAt) - h.clock.now().getTime(),
      30 * 24 * 3600_000,
    );
    // The simulator holds the very bytes, under the id it answered.
    const stored = h.simulator.state.media.get(data.id)!;
    assert.equal(stored.mimeType, "image/png");
    assert.deepEqual(stored.bytes, PNG);

    const fixture = mediaHeader("IMAGE", {});
    await insertTemplate(h.container.db, {
      id: newId(),
      accountId: h.tenant.account.id,
      channelId: null,
      metaTemplateId: "2000001",
      name: fixture.name,
      language: "en_US",
      category: fixture.category,
      status: "approved",
      components: fixture.components as TemplateComponent[],
      createdAt: toDbTime(h.clock.now()),
    });
    const sent = await send(h, {
      to: newPhone(),
      type: "template",
      template: {
        name: fixture.name,
        language: { code: "en_US" },
        components: [{
          type: "header",
          parameters: [{ type: "image", image: { id: data.id } }],
        }],
      },
    });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const message = await h.waitForStatus(sent.body.data.id, [
      "read",
      "failed",
    ]);
    assert.equal(message.status, "read", JSON.stringify(message));
    const [request] = await simSendsOf(h, sent.body.data.id);
    assert.deepEqual(request.body.template.components, [{
      type: "header",
      parameters: [{ type: "image", image: { id: data.id } }],
    }]);
  },
);

messagingTest(
  "an agent uploads as a key does; a key without messages:write cannot",
  async (h) => {
    const { token } = await createAgent(h.container, {
      accountId: h.tenant.account.id,
      name: "Uploader",
      visibility: "assigned",
    });
    const byAgent = await upload(h, PNG, { type: "image/png", key: token });
    assert.equal(byAgent.status, 201, JSON.stringify(byAgent.body));
    const reader = await h.makeKey(h.tenant.account.id, ["messages:read"]);
    assertError(
      await upload(h, PNG, { type: "image/png", key: reader }),
      403,
      "INSUFFICIENT_SCOPE",
    );
  },
);

messagingTest(
  "a type Meta does not take, a file past its limit, a body past it while read, or no body is refused",
  async (h) => {
    const before = h.simulator.state.media.size;
    assertError(
      await upload(h, PNG, { type: "image/gif" }),
      415,
      "UNSUPPORTED_MEDIA_TYPE",
    );
    assertError(await upload(h, PNG), 415, "UNSUPPORTED_MEDIA_TYPE");
    assertError(
      await upload(h, JSON.stringify({ file: "x" }), {
        type: "application/json",
      }),
      415,
      "UNSUPPORTED_MEDIA_TYPE",
    );
    // Declared: an image of 5 MB + 1 byte (Content-Length) is refused at once.
    const big = new Uint8Array(5 * 1024 * 1024 + 1);
    const declared = await upload(h, big, { type: "image/png" });
    assertError(declared, 413, "PAYLOAD_TOO_LARGE");
    assert.match(declared.body.error.message, /at most 5242880 bytes/);
    // Streamed without a length: cut off once past the limit, not read whole.
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new Uint8Array(256 * 1024));
        if (pulled > 200) controller.close(); // 50 MB, far past 5 MB
      },
    });
    assertError(
      await upload(h, endless, { type: "image/jpeg" }),
      413,
      "PAYLOAD_TOO_LARGE",
    );
    assertError(
      await upload(h, new Uint8Array(), { type: "image/png" }),
      400,
      "VALIDATION_ERROR",
    );
    assert.equal(h.simulator.state.media.size, before, "nothing reached Meta");
  },
);

messagingTest(
  "the channel must be one of the account's; the query takes nothing else",
  async (h) => {
    const other = await h.makeTenant(
      `other-${crypto.randomUUID().slice(0, 8)}`,
    );
    for (const phoneNumberId of [other.channel.id, crypto.randomUUID(), "x"]) {
      assertError(
        await upload(h, PNG, { type: "image/png", query: { phoneNumberId } }),
        422,
        "INVALID_CHANNEL",
      );
    }
    assertError(
      await upload(h, PNG, { type: "image/png", query: {} }),
      400,
      "VALIDATION_ERROR",
    );
    assertError(
      await upload(h, PNG, {
        type: "image/png",
        query: { phoneNumberId: h.tenant.channel.id, caption: "x" },
      }),
      400,
      "VALIDATION_ERROR",
    );
  },
);

messagingTest(
  "one account has at most two uploads in progress; the third is 429 until one ends",
  async (h) => {
    // Two uploads whose bodies stay open until the test ends them.
    const open: ReadableStreamDefaultController<Uint8Array>[] = [];
    const pending = [0, 1].map(() =>
      upload(
        h,
        new ReadableStream<Uint8Array>({
          start(controller) {
            open.push(controller);
            controller.enqueue(PNG.slice(0, 10));
          },
        }),
        { type: "image/png" },
      )
    );
    await waitFor(() => open.length === 2, { what: "both bodies opened" });
    let third: Awaited<ReturnType<typeof upload>> | undefined;
    await waitFor(async () => {
      third = await upload(h, PNG, { type: "image/png" });
      return third.status === 429;
    }, { what: "the third upload refused" });
    assertError(third!, 429, "RATE_LIMITED");
    assert.equal(third!.headers.get("retry-after"), "1");
    for (const controller of open) {
      controller.enqueue(PNG.slice(10));
      controller.close();
    }
    for (const res of await Promise.all(pending)) {
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    const after = await upload(h, PNG, { type: "image/png" });
    assert.equal(after.status, 201, JSON.stringify(after.body));
  },
);

Deno.test("a trickling body is cut off, and one the client abandons is a 400", async () => {
  const limits = { max: 1_000_000, type: "image", mimeType: "image/png" };
  let timer: ReturnType<typeof setInterval> | undefined;
  const trickle = new ReadableStream<Uint8Array>({
    start(controller) {
      timer = setInterval(() => controller.enqueue(new Uint8Array(1)), 20);
    },
    cancel() {
      clearInterval(timer);
    },
  });
  const slow = await rejection(
    readAtMost(trickle, limits, { bytesPerSecond: 1_000, graceMs: 100 }),
  );
  clearInterval(timer);
  assert.ok(slow instanceof AppError);
  assert.equal(slow.code, "VALIDATION_ERROR");
  assert.match(slow.message, /slower than 1000 bytes a second/);

  const abandoned = new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.error(new Error("connection reset"));
    },
  });
  const gone = await rejection(readAtMost(abandoned, limits));
  assert.ok(gone instanceof AppError);
  assert.equal(gone.code, "VALIDATION_ERROR");

  const longer = new Blob([new Uint8Array(20)]).stream();
  const lying = await rejection(
    readAtMost(longer, { ...limits, declared: 10 }),
  );
  assert.ok(lying instanceof AppError);
  assert.match(lying.message, /longer than its Content-Length \(10\)/);

  const fine = await readAtMost(new Blob([PNG]).stream(), limits);
  assert.equal(fine.type, "image/png");
  assert.deepEqual(new Uint8Array(await fine.arrayBuffer()), PNG);
});
