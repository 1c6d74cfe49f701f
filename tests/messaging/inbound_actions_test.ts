// What a customer does to a conversation, stored as it happened: replies,
// forwards, ads, edits, deletions, and the business writing from its app.
import assert from "node:assert/strict";
import {
  countRows,
  customerWrites,
  events,
  getConversation,
  getMessage,
  messagingTest,
  metaChange,
  newPhone,
  postSigned,
  sendOk,
  sim,
  textTo,
  waitInbound,
  waitPayloadsProcessed,
} from "./_helpers.ts";

messagingTest(
  "a reply keeps its quoted message: context.messageId is our id, on GET and in message.received",
  async (h) => {
    const phone = newPhone();
    await customerWrites(h, phone);
    const ours = await sendOk(h, textTo(phone, "¿Cuál talle?"));
    const sent = await h.waitForStatus(ours, ["sent", "delivered", "read"]);
    // Meta's reply context is { from: <business number>, id: <quoted wamid> } (reference §4.4).
    const { message } = await customerWrites(h, phone, {
      type: "text",
      text: { body: "El M" },
      context: {
        from: h.tenant.channel.phoneNumber.slice(1),
        id: sent.waMessageId,
      },
    });
    assert.deepEqual(message.context, {
      waMessageId: sent.waMessageId,
      messageId: ours,
    });
    const received = (await events(h)).filter((e) =>
      e.type === "message.received"
    ).at(-1)!;
    assert.deepEqual(received.data.context, message.context);
    // A quote of a message we never had keeps the wamid, with no id of ours.
    const { message: orphan } = await customerWrites(h, phone, {
      type: "text",
      text: { body: "?" },
      context: { from: "15550000000", id: "wamid.unknown-to-us" },
    });
    assert.deepEqual(orphan.context, {
      waMessageId: "wamid.unknown-to-us",
      messageId: null,
    });
  },
);

messagingTest(
  "forwarded and frequently forwarded flags are kept on the message",
  async (h) => {
    const phone = newPhone();
    const { message: plain } = await customerWrites(h, phone);
    assert.equal(plain.forwarded, false);
    assert.equal(plain.frequentlyForwarded, false);
    assert.equal(plain.context, null);
    const { message: once } = await customerWrites(h, phone, {
      type: "text",
      text: { body: "mirá esto" },
      forwarded: true,
    });
    assert.equal(once.forwarded, true);
    assert.equal(once.frequentlyForwarded, false);
    assert.equal(once.context, null, "a forward quotes nothing");
    const { message: many } = await customerWrites(h, phone, {
      type: "text",
      text: { body: "cadena" },
      frequentlyForwarded: true,
    });
    assert.equal(many.forwarded, true);
    assert.equal(many.frequentlyForwarded, true);
  },
);

messagingTest(
  "a click-to-WhatsApp ad referral is kept on the message and its conversation",
  async (h) => {
    // Field names of Meta's referral object on an inbound message (reference §4.4,
    // Meta "Click to WhatsApp ads" webhook: source_url, source_id, source_type,
    // headline, body, media_type, image_url, ctwa_clid).
    const referral = {
      source_url: "https://fb.me/3cr4Wqqkv",
      source_id: "120212345678900123",
      source_type: "ad",
      headline: "Zapatillas 2x1",
      body: "Solo esta semana",
      media_type: "image",
      image_url: "https://scontent.xx.fbcdn.net/v/ad.jpg",
      ctwa_clid:
        "ARAkLkA8rmlFeiCktEJQ-QTwRiyYHAFDLMNDBH0CD3qpjd0HR4irJ6LEkR7JwFF4XvnO2E4Nx0-eM-GABDLOPaOdRMv-_zfUQ2a",
    };
    const { message } = await customerWrites(h, newPhone(), {
      type: "text",
      text: { body: "Hola, vi el anuncio" },
      referral,
    });
    const expected = {
      sourceUrl: referral.source_url,
      sourceId: referral.source_id,
      sourceType: "ad",
      headline: referral.headline,
      body: referral.body,
      mediaType: "image",
      ctwaClid: referral.ctwa_clid,
    };
    assert.deepEqual(message.referral, expected);
    const conversation = await getConversation(h, message.conversationId);
    assert.deepEqual(conversation.referral, expected);
    const received = (await events(h)).find((e) =>
      e.type === "message.received"
    )!;
    assert.deepEqual(received.data.referral, expected);
  },
);

messagingTest(
  "an edit changes the original message and keeps the previous text; a revoke marks it deleted",
  async (h) => {
    const phone = newPhone();
    const { wamid, message: original } = await customerWrites(h, phone, {
      type: "text",
      text: { body: "Nos vemos a las 5" },
    });
    const before = await countRows(h, "messages");
    const eventsBefore = (await events(h)).length;
    const edit = await h.inbound({
      from: phone,
      type: "edit",
      edit: { originalId: wamid, text: "Nos vemos a las 6" },
    });
    await waitPayloadsProcessed(h);
    let shown = await getMessage(h, original.id);
    assert.deepEqual(shown.content, { text: "Nos vemos a las 6" });
    assert.equal(shown.edits.length, 1);
    assert.deepEqual(shown.edits[0].previousContent, {
      text: "Nos vemos a las 5",
    });
    assert.equal(shown.status, "delivered", "no fake status change");
    const conversation = await getConversation(h, original.conversationId);
    assert.equal(conversation.lastMessagePreview, "Nos vemos a las 6");
    // Meta delivers the same edit again: applied once.
    await h.inbound({
      from: phone,
      type: "edit",
      edit: { originalId: wamid, text: "Nos vemos a las 6" },
      id: edit.wamid,
    });
    await waitPayloadsProcessed(h);
    assert.equal((await getMessage(h, original.id)).edits.length, 1);

    await h.inbound({
      from: phone,
      type: "revoke",
      revoke: { originalId: wamid },
    });
    await waitPayloadsProcessed(h);
    shown = await getMessage(h, original.id);
    assert.match(shown.deletedAt, /^\d{4}-\d\d-\d\dT/);
    assert.equal(await countRows(h, "messages"), before, "no new message");
    // No event of the spec's; the panel's stream hears of both changes.
    const after = (await events(h)).slice(eventsBefore);
    assert.deepEqual(
      after.map((e) => [e.type, (e.data as { id: string }).id]),
      [["message.updated", original.id], ["message.updated", original.id]],
    );
    const unsupported = await countRows(h, "messages", {
      column: "type",
      value: "unsupported",
    });
    assert.equal(unsupported, 0);
  },
);

messagingTest(
  "an edit or revoke by anyone but the message's author changes nothing and is recorded",
  async (h) => {
    const phone = newPhone();
    const { wamid, message: original } = await customerWrites(h, phone, {
      type: "text",
      text: { body: "Mine" },
    });
    const ours = await sendOk(h, textTo(phone, "Ours"));
    const sent = await h.waitForStatus(ours, ["sent", "delivered", "read"]);
    // The customer cannot edit what the business wrote.
    await h.inbound({
      from: phone,
      type: "edit",
      edit: { originalId: sent.waMessageId, text: "Changed" },
    });
    // Another customer cannot delete what this one wrote.
    await h.inbound({
      from: newPhone(),
      type: "revoke",
      revoke: { originalId: wamid },
    });
    await waitPayloadsProcessed(h);
    const kept = await getMessage(h, ours);
    assert.deepEqual(kept.content, { text: "Ours" });
    assert.deepEqual(kept.edits, []);
    assert.equal((await getMessage(h, original.id)).deletedAt, null);
    const errors = (await h.container.db.selectFrom("inbound_payloads")
      .select("error").execute()).map((r) => r.error ?? "").join("\n");
    assert.match(
      errors,
      new RegExp(
        `edit of message "${sent.waMessageId}", which this sender did not write`,
      ),
    );
    assert.match(
      errors,
      new RegExp(
        `revoke of message "${wamid}", which this sender did not write`,
      ),
    );
  },
);

messagingTest(
  "an edited caption changes the caption and keeps the media",
  async (h) => {
    const phone = newPhone();
    const { wamid, message } = await customerWrites(h, phone, {
      type: "image",
      image: {
        mimeType: "image/jpeg",
        dataBase64: btoa("jpeg"),
        caption: "rojo",
      },
    });
    // An edit names the original and carries the new message (type + object).
    const edit = {
      from: phone.slice(1),
      id: `wamid.edit-${crypto.randomUUID()}`,
      timestamp: String(Math.floor(Date.now() / 1000)),
      type: "edit",
      edit: {
        original_message_id: wamid,
        message: { type: "image", image: { caption: "azul" } },
      },
    };
    await postSigned(
      h,
      metaChange(h, {
        contacts: [{ profile: { name: "Ana" }, wa_id: phone.slice(1) }],
        messages: [edit],
      }),
    );
    await waitPayloadsProcessed(h);
    const shown = await getMessage(h, message.id);
    assert.equal(shown.type, "image");
    assert.equal(shown.content.caption, "azul");
    assert.equal(shown.content.mimeType, "image/jpeg");
    assert.equal(shown.edits[0].previousContent.caption, "rojo");
  },
);

messagingTest(
  "a message sent from the WhatsApp Business app appears as outbound without being sent",
  async (h) => {
    const phone = newPhone();
    const { message: inbound } = await customerWrites(h, phone);
    const { wamid } = await h.inbound({
      from: phone,
      type: "text",
      text: { body: "Te lo mando hoy" },
      echo: true,
    });
    const echo = await waitInbound(h, wamid);
    assert.equal(echo.direction, "outbound");
    assert.equal(echo.origin, "business_app");
    assert.equal(echo.status, "sent");
    assert.equal(echo.conversationId, inbound.conversationId);
    assert.deepEqual(echo.content, { text: "Te lo mando hoy" });
    assert.equal(
      await countRows(h, "jobs", { column: "kind", value: "message.send" }),
      0,
      "no send job",
    );
    assert.equal((await sim(h, "/messages")).messages.length, 0);
    const conversation = await getConversation(h, inbound.conversationId);
    assert.equal(conversation.lastMessageDirection, "outbound");
    assert.equal(conversation.lastMessagePreview, "Te lo mando hoy");
  },
);

messagingTest(
  "an image sent from the WhatsApp Business app is copied into our store like a customer's",
  async (h) => {
    const bytes = crypto.getRandomValues(new Uint8Array(2048));
    const { wamid } = await h.inbound({
      from: newPhone(),
      type: "image",
      image: {
        mimeType: "image/jpeg",
        dataBase64: btoa(String.fromCharCode(...bytes)),
        caption: "El catálogo",
      },
      echo: true,
    });
    const echo = await waitInbound(h, wamid);
    assert.equal(echo.direction, "outbound");
    assert.equal(echo.origin, "business_app");
    const ready = await h.until(async () => {
      const m = await getMessage(h, echo.id);
      return m.mediaId ? m : null;
    }, "the echo's media to be copied");
    const media = await h.request("GET", `/api/v2/media/${ready.mediaId}`);
    assert.equal(media.status, 200);
    const file = await h.app.fetch(new Request(media.body.data.url));
    assert.deepEqual(new Uint8Array(await file.arrayBuffer()), bytes);
  },
);

messagingTest(
  "a system message for a changed number moves the contact to the new number",
  async (h) => {
    const oldPhone = "+5491155550101";
    const { message } = await customerWrites(h, oldPhone);
    // Shape of Meta's customer_changed_number system message (reference §4.4).
    const system = {
      from: "5491155550101",
      id: `wamid.sys-${crypto.randomUUID()}`,
      timestamp: String(Math.floor(Date.now() / 1000)),
      type: "system",
      system: {
        body: "User A changed from 5491155550101 to 5491155550102",
        new_wa_id: "5491155550102",
        type: "customer_changed_number",
      },
    };
    await postSigned(
      h,
      metaChange(h, {
        contacts: [{ profile: { name: "Ana" }, wa_id: "5491155550101" }],
        messages: [system],
      }),
    );
    const line = await waitInbound(h, system.id);
    assert.equal(line.type, "system");
    assert.equal(line.contactId, message.contactId);
    const contact = (await h.request(
      "GET",
      `/api/v2/contacts/${message.contactId}`,
    )).body.data;
    assert.equal(contact.phoneNumber, "+5491155550102");
    const next = await customerWrites(h, "+5491155550102");
    assert.equal(next.message.contactId, message.contactId);
  },
);

messagingTest(
  "a system message for a changed user id gives the contact its new BSUID",
  async (h) => {
    const first = await h.inbound({
      userId: "US.1111208655302741918",
      type: "text",
      text: { body: "hola" },
    });
    const message = await waitInbound(h, first.wamid);
    const system = {
      from_user_id: "US.1111208655302741918",
      id: `wamid.sys-${crypto.randomUUID()}`,
      timestamp: String(Math.floor(Date.now() / 1000)),
      type: "system",
      system: {
        body: "User changed their user id",
        type: "user_changed_user_id",
        new_user_id: "US.2222208655302741918",
      },
    };
    await postSigned(
      h,
      metaChange(h, {
        contacts: [{
          profile: { name: "Ana" },
          user_id: "US.1111208655302741918",
        }],
        messages: [system],
      }),
    );
    await waitInbound(h, system.id);
    const contact = (await h.request(
      "GET",
      `/api/v2/contacts/${message.contactId}`,
    )).body.data;
    assert.equal(contact.userId, "US.2222208655302741918");
  },
);
