import assert from "node:assert/strict";
import { engineTest } from "../_harness.ts";
import { seedTemplate, templateTo } from "./_helpers.ts";

engineTest(
  "a batch leaves each conversation's last message on its last item, and the contact's time",
  async (h) => {
    await seedTemplate(h);
    const [a, b] = ["+5491155550401", "+5491155550402"];
    const res = await h.request("POST", "/api/v2/messages/batch", {
      body: {
        defaultPhoneNumberId: h.tenant.channel.id,
        messages: [
          { ...templateTo(a, "greeting", ["uno"]), clientRef: "a1" },
          { ...templateTo(b, "greeting", ["dos"]), clientRef: "b1" },
          { ...templateTo(a, "greeting", ["tres"]), clientRef: "a2" },
        ],
      },
    });
    assert.equal(res.status, 202);
    assert.equal(res.body.data.accepted, 3);
    const ids = res.body.data.items.map((i: { message: { id: string } }) =>
      i.message.id
    );
    const rows = await h.container.db.selectFrom("conversations as cv")
      .innerJoin("contacts as ct", "ct.id", "cv.contact_id")
      .select([
        "ct.phone_number",
        "ct.last_message_at as contact_last",
        "cv.last_message_id",
        "cv.last_message_status",
        "cv.last_message_direction",
        "cv.last_message_at",
      ])
      .orderBy("ct.phone_number").execute();
    const createdAt = res.body.data.items[0].message.createdAt;
    assert.deepEqual(rows.map((r) => ({ ...r })), [
      {
        phone_number: a,
        contact_last: createdAt,
        last_message_id: ids[2],
        last_message_status: "queued",
        last_message_direction: "outbound",
        last_message_at: createdAt,
      },
      {
        phone_number: b,
        contact_last: createdAt,
        last_message_id: ids[1],
        last_message_status: "queued",
        last_message_direction: "outbound",
        last_message_at: createdAt,
      },
    ]);
  },
);
