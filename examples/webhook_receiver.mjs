// deno-lint-ignore-file no-console
// The webhook receiver of README's tour: `node examples/webhook_receiver.mjs`.
// Listens on 127.0.0.1:$HOOKS_PORT (4000), checks every delivery's signature
// with $WEBHOOK_SECRET (docs/webhooks.md), answers 200 or 400, and prints one
// line per delivery.
import { Buffer } from "node:buffer";
import { createServer } from "node:http";
import process from "node:process";
import { verifyWebhook } from "./verify_webhook.mjs";

const secret = process.env.WEBHOOK_SECRET ?? "";
const port = Number(process.env.HOOKS_PORT || 4000);

createServer((req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    const raw = Buffer.concat(chunks);
    const header = req.headers["x-service-signature"] ?? "";
    if (!verifyWebhook(secret, String(header), raw)) {
      console.log(`REJECTED ${req.method} ${req.url}: bad signature`);
      res.writeHead(400).end();
      return;
    }
    const { event, eventId, data } = JSON.parse(raw.toString("utf8"));
    const what = data.content?.body ?? data.newStatus ?? data.status ?? "";
    console.log(`verified ${event} ${eventId} ${what}`);
    res.writeHead(200).end();
  });
}).listen(port, "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${port}/hooks`);
});
