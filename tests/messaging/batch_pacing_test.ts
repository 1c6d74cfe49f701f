import assert from "node:assert/strict";
import { createHarness } from "../_harness.ts";
import { createTemplate } from "../../src/domain/templates/template_service.ts";
import { createChannel } from "../../src/domain/channels/channel_service.ts";

function templateItem(to: string, phoneNumberId: string) {
  return {
    phoneNumberId,
    to,
    type: "template",
    template: {
      name: "promo",
      language: { code: "en" },
      components: [{ type: "body", parameters: [{ type: "text", text: "x" }] }],
    },
  };
}

Deno.test("batch send jobs are paced per channel so channels interleave", async () => {
  await using h = await createHarness({ env: { SEND_RATE_PER_SECOND: "10" } });
  const { account, channel: a } = h.tenant;
  const b = await createChannel(h.container, {
    accountId: account.id,
    phoneNumber: "+15550209999",
    displayName: "second",
    upstreamPhoneNumberId: "999000111",
    wabaId: "999000222",
    accessToken: "t",
  });
  await createTemplate(h.container, {
    accountId: account.id,
    name: "promo",
    language: "en",
    category: "MARKETING",
    status: "approved",
    components: [{ type: "BODY", text: "Hi {{1}}" }],
  });
  const send = (channelId: string, from: number) =>
    h.request("POST", "/api/v2/messages/batch", {
      body: {
        messages: Array.from(
          { length: 20 },
          (_, i) =>
            templateItem(
              `+549113${String(from + i).padStart(7, "0")}`,
              channelId,
            ),
        ),
      },
    });
  assert.equal((await send(a.id, 0)).body.data.accepted, 20);
  assert.equal((await send(a.id, 100)).body.data.accepted, 20);
  assert.equal((await send(b.id, 200)).body.data.accepted, 20);

  const jobs = await h.container.db.selectFrom("jobs")
    .innerJoin(
      "messages",
      (j) =>
        j.onRef(
          "messages.id",
          "=",
          (eb) =>
            eb.fn("json_extract", ["jobs.payload", eb.val("$.messageId")]),
        ),
    )
    .select(["jobs.run_at", "messages.channel_id"]).orderBy("jobs.run_at")
    .execute();
  const now = h.clock.now().getTime();
  const offsets = (channelId: string) =>
    jobs.filter((j) => j.channel_id === channelId).map((j) =>
      Date.parse(j.run_at) - now
    );
  // 10 per second: channel A's 40 sends are due 0, 100, ..., 3900 ms; the second batch queues behind the first.
  assert.deepEqual(
    offsets(a.id),
    Array.from({ length: 40 }, (_, i) => i * 100),
  );
  // Channel B has no backlog: its sends start now, interleaved with A's.
  assert.deepEqual(
    offsets(b.id),
    Array.from({ length: 20 }, (_, i) => i * 100),
  );
});
