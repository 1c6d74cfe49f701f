// Inbound media is stored or failed without an interactive transaction on
// libSQL (issue 30): the media row, its message and the message.updated
// event in one batch after the reads, guarded on the message as read.
import assert from "node:assert/strict";
import { ENGINES } from "../_harness.ts";
import { createMessagingHarness } from "../_support/messaging.ts";
import {
  downloadInboundMedia,
  failInboundMedia,
} from "../../src/domain/media/media_service.ts";
import { racing } from "../_support/race.ts";
import { customerWrites, getMessage, type Mh, newPhone } from "./_helpers.ts";

/** An inbound image whose download finished; its media row set pending again, transactions then forbidden. */
async function pendingImage(h: Mh) {
  const { message } = await customerWrites(h, newPhone(), {
    type: "image",
    image: { mimeType: "image/jpeg", dataBase64: btoa("jpeg bytes") },
  });
  const stored = await h.until(async () => {
    const m = await getMessage(h, message.id);
    return m.mediaId ? m : null;
  }, "the media to be stored");
  await h.settle();
  const db = h.container.db;
  await db.updateTable("media").set({ status: "pending" })
    .where("id", "=", stored.mediaId).execute();
  await db.updateTable("messages").set({ media_id: null, media_key: null })
    .where("id", "=", message.id).execute();
  if (h.container.dbBatch) h.container.dbBatch.forbidTransactions = true;
  return { messageId: message.id as string, mediaId: stored.mediaId as string };
}

async function updatedEvents(h: Mh, messageId: string) {
  const rows = await h.container.db.selectFrom("events")
    .select(["data"]).where("type", "=", "message.updated")
    .orderBy("seq").execute();
  return rows.map((r) => JSON.parse(r.data)).filter((d) => d.id === messageId);
}

function details(h: Mh, messageId: string) {
  return h.container.db.selectFrom("messages").select("details")
    .where("id", "=", messageId).executeTakeFirstOrThrow()
    .then((r) => JSON.parse(r.details ?? "{}"));
}

for (const engine of ENGINES) {
  Deno.test({
    name:
      `[${engine}] a media stored and a media failed write with no transaction on libSQL, each with its message.updated event`,
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async () => {
      await using h = await createMessagingHarness({ engine });
      const { messageId, mediaId } = await pendingImage(h);
      const before = (await updatedEvents(h, messageId)).length;
      await downloadInboundMedia(h.container, mediaId);
      const message = await getMessage(h, messageId);
      assert.equal(message.mediaId, mediaId);
      let events = await updatedEvents(h, messageId);
      assert.equal(events.length, before + 1);
      assert.equal(events.at(-1).mediaId, mediaId);

      await failInboundMedia(h.container, mediaId, new Error("gone"));
      assert.equal((await details(h, messageId)).mediaError, "gone");
      events = await updatedEvents(h, messageId);
      assert.equal(events.length, before + 2);
      assert.equal(events.at(-1).mediaError, "gone");
    },
  });

  Deno.test({
    name:
      `[${engine}] a message rewritten between a media failure's read and its batch keeps that change: the failure is planned again`,
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async () => {
      await using h = await createMessagingHarness({ engine });
      const { messageId, mediaId } = await pendingImage(h);
      const deletedAt = "2026-11-29T10:00:00.000Z";
      // The customer deletes the message while the failure is being planned.
      const race = racing(h.container, async () => {
        await h.container.db.updateTable("messages").set({
          details: JSON.stringify({ deletedAt }),
          updated_at: "2099-01-01T00:00:00.000Z",
        }).where("id", "=", messageId).execute();
      });
      await failInboundMedia({ ...h.container, ...race }, mediaId, "gone");
      const after = await details(h, messageId);
      assert.equal(after.mediaError, "gone");
      if (engine === "libsql") {
        assert.equal(race.plans, 2);
        assert.equal(after.deletedAt, deletedAt, "the deletion is kept");
        const [event] = (await updatedEvents(h, messageId)).slice(-1);
        assert.equal(event.deletedAt, deletedAt, "the event shows it too");
      }
    },
  });
}
