import assert from "node:assert/strict";
import {
  customerWrites,
  type Json,
  messagingTest,
  newPhone,
} from "./_helpers.ts";

function base64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

const IMAGE = crypto.getRandomValues(new Uint8Array(3000));
const PDF = new TextEncoder().encode("%PDF-1.4 factura ".repeat(100));

messagingTest(
  "each inbound type is stored with its type and content",
  async (h) => {
    const phone = newPhone();
    const { wamid: firstWamid } = await customerWrites(h, phone, {
      type: "text",
      text: { body: "Hola, ¿tienen stock?" },
    });
    const cases: [Record<string, unknown>, string, (c: Json) => void][] = [
      [{ type: "text", text: { body: "Hola 👋" } }, "text", (c) => {
        assert.deepEqual(c, { text: "Hola 👋" });
      }],
      [
        {
          type: "image",
          image: {
            mimeType: "image/png",
            dataBase64: base64(IMAGE),
            caption: "mi foto",
          },
        },
        "image",
        (c) => {
          assert.equal(c.mimeType, "image/png");
          assert.equal(c.caption, "mi foto");
          assert.match(c.fileName, /^image-\d+\.png$/);
        },
      ],
      [
        {
          type: "document",
          document: {
            mimeType: "application/pdf",
            dataBase64: base64(PDF),
            filename: "factura.pdf",
          },
        },
        "document",
        (c) => {
          assert.deepEqual(c, {
            mimeType: "application/pdf",
            fileName: "factura.pdf",
          });
        },
      ],
      [
        {
          type: "sticker",
          sticker: { mimeType: "image/webp", dataBase64: base64(IMAGE) },
        },
        "sticker",
        (c) => {
          assert.equal(c.mimeType, "image/webp");
          assert.equal(c.animated, false);
        },
      ],
      [
        {
          type: "location",
          location: {
            latitude: -34.6037,
            longitude: -58.3816,
            name: "Obelisco",
          },
        },
        "location",
        (c) => {
          assert.deepEqual(c, {
            latitude: -34.6037,
            longitude: -58.3816,
            name: "Obelisco",
          });
        },
      ],
      [
        {
          type: "interactive",
          interactive: {
            type: "button_reply",
            button_reply: { id: "yes", title: "Sí" },
          },
        },
        "interactive",
        (c) => {
          assert.deepEqual(c, {
            type: "button_reply",
            button_reply: { id: "yes", title: "Sí" },
          });
        },
      ],
      [
        {
          type: "reaction",
          reaction: { message_id: firstWamid, emoji: "❤️" },
        },
        "reaction",
        (c) => {
          assert.deepEqual(c, { message_id: firstWamid, emoji: "❤️" });
        },
      ],
      [
        {
          type: "contacts",
          contacts: [{
            name: { formatted_name: "Juan Pérez", first_name: "Juan" },
            phones: [{ phone: "+54 9 11 5555 0000", type: "CELL" }],
          }],
        },
        "contacts",
        (c) => {
          assert.equal(c.contacts.length, 1);
          assert.equal(c.contacts[0].name.formatted_name, "Juan Pérez");
          assert.equal(c.contacts[0].phones[0].phone, "+54 9 11 5555 0000");
        },
      ],
    ];
    for (const [input, type, check] of cases) {
      const { wamid, message } = await customerWrites(h, phone, input);
      assert.equal(message.type, type);
      assert.equal(message.direction, "inbound");
      assert.equal(message.waMessageId, wamid);
      assert.equal(message.origin, "inbound");
      assert.equal(message.status, "delivered");
      check(message.content);
    }
  },
);

messagingTest("an unsupported inbound is kept as unsupported", async (h) => {
  const { message } = await customerWrites(h, newPhone(), {
    type: "unsupported",
  });
  assert.equal(message.type, "unsupported");
  assert.equal(message.content.originalType, "unsupported");
  assert.equal(message.errorCode, "131051");
});
