import assert from "node:assert/strict";
import {
  customerWrites,
  getMessage,
  type Json,
  messagingTest,
  newPhone,
  seedTemplate,
  send,
  sendOk,
  simSendsOf,
  templateTo,
} from "./_helpers.ts";

const BUTTONS = {
  type: "button",
  body: { text: "¿Confirmás el turno?" },
  action: {
    buttons: [
      { type: "reply", reply: { id: "yes", title: "Sí" } },
      { type: "reply", reply: { id: "no", title: "No" } },
    ],
  },
};

const LIST = {
  type: "list",
  body: { text: "Elegí una sucursal" },
  action: {
    button: "Sucursales",
    sections: [{
      title: "Centro",
      rows: [
        { id: "s1", title: "Florida", description: "Florida 100" },
        { id: "s2", title: "Corrientes" },
      ],
    }],
  },
};

messagingTest(
  "every outbound type reaches read and reaches the upstream once with its Cloud API body",
  async (h) => {
    const phone = newPhone();
    const { wamid } = await customerWrites(h, phone);
    await seedTemplate(h);
    const bodies: Record<string, unknown>[] = [
      { type: "text", text: { body: "Hola, ¿cómo estás?" } },
      {
        type: "image",
        image: { link: "https://cdn.example.com/a.jpg", caption: "Foto" },
      },
      { type: "video", video: { link: "https://cdn.example.com/v.mp4" } },
      { type: "audio", audio: { link: "https://cdn.example.com/a.ogg" } },
      {
        type: "document",
        document: { id: "1234567890123", filename: "factura.pdf" },
      },
      templateTo(phone),
      { type: "interactive", interactive: BUTTONS },
      { type: "interactive", interactive: LIST },
      { type: "reaction", reaction: { message_id: wamid, emoji: "👍" } },
    ];
    const sent: { id: string; body: Json }[] = [];
    for (const body of bodies) {
      sent.push({ id: await sendOk(h, { to: phone, ...body }), body });
    }
    for (const { id, body } of sent) {
      const message = await h.waitForStatus(id, ["read", "failed"]);
      assert.equal(message.status, "read", `${body.type} reached read`);
      assert.match(String(message.waMessageId), /^wamid\./);
      assert.equal(message.errorCode, null);
      const upstream = await simSendsOf(h, id);
      assert.equal(upstream.length, 1, `${body.type} sent exactly once`);
      const { phoneNumberId: _p, to: _t, ...rest } = body;
      assert.deepEqual(upstream[0].body, {
        messaging_product: "whatsapp",
        recipient_type: "individual",
        to: phone.slice(1),
        ...rest,
        biz_opaque_callback_data: id,
      });
      assert.equal(upstream[0].wamid, message.waMessageId);
    }
  },
);

messagingTest(
  "GET /messages/:id shows text as { text } and other types as sent",
  async (h) => {
    const phone = newPhone();
    await customerWrites(h, phone);
    const textId = await sendOk(h, {
      to: phone,
      type: "text",
      text: { body: "Hola" },
      clientRef: "order-7",
    });
    const image = { link: "https://cdn.example.com/a.jpg", caption: "Foto" };
    const imageId = await sendOk(h, { to: phone, type: "image", image });
    const text = await getMessage(h, textId);
    assert.deepEqual(text.content, { text: "Hola" });
    assert.equal(text.direction, "outbound");
    assert.equal(text.type, "text");
    assert.equal(text.clientRef, "order-7");
    assert.equal(text.origin, "external_api");
    assert.equal(text.phoneNumberId, h.tenant.channel.id);
    assert.deepEqual((await getMessage(h, imageId)).content, image);
  },
);

messagingTest(
  "POST /messages answers 201 with exactly the accepted message",
  async (h) => {
    const phone = newPhone();
    const { message: inbound } = await customerWrites(h, phone);
    const res = await send(h, {
      to: phone,
      type: "text",
      text: { body: "Hi" },
      clientRef: "ref-1",
    });
    assert.equal(res.status, 201);
    const data = res.body.data;
    assert.deepEqual(Object.keys(data).sort(), [
      "conversationId",
      "createdAt",
      "direction",
      "id",
      "status",
      "type",
      "waMessageId",
    ]);
    assert.equal(data.conversationId, inbound.conversationId);
    assert.equal(data.direction, "outbound");
    assert.equal(data.type, "text");
    assert.equal(data.status, "queued");
    assert.equal(data.waMessageId, null);
    assert.match(data.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(typeof res.body.meta.requestId, "string");
  },
);
