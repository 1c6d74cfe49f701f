import { verifyMetaSignature } from "../upstream/meta_signature.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

export interface ReceivedWebhook {
  raw: string;
  body: Json;
  signature: string | null;
}

export interface WebhookReceiver {
  url: string;
  /** Every request that passed the signature check and was answered 200. */
  received: ReceivedWebhook[];
  /** Every request, including rejected ones. */
  attempts: number;
  /** Answers the next n requests with 500 (to exercise the simulator's retries). */
  failNext(n: number): void;
  /** All value.statuses[] of the accepted webhooks, in arrival order. */
  statuses(): Json[];
  /** All value.messages[] of the accepted webhooks, in arrival order. */
  messages(): Json[];
  stop(): Promise<void>;
}

function values(received: ReceivedWebhook[]): Json[] {
  return received.flatMap((w) =>
    (w.body?.entry ?? []).flatMap((e: Json) =>
      (e.changes ?? []).map((c: Json) => c.value ?? {})
    )
  );
}

/**
 * A small loopback receiver for Meta-style webhooks: verifies
 * X-Hub-Signature-256 (401 when wrong) and records what it accepted. Tests and
 * scripts use it to observe what the simulator sends.
 */
export function startWebhookReceiver(
  opts: { appSecret: string; port?: number },
): WebhookReceiver {
  const received: ReceivedWebhook[] = [];
  let failures = 0;
  let attempts = 0;
  const server = Deno.serve(
    { port: opts.port ?? 0, hostname: "127.0.0.1", onListen: () => {} },
    async (req) => {
      attempts++;
      const bytes = new Uint8Array(await req.arrayBuffer());
      if (failures > 0) {
        failures--;
        return new Response("Temporarily failing", { status: 500 });
      }
      const signature = req.headers.get("x-hub-signature-256");
      const valid = await verifyMetaSignature(opts.appSecret, bytes, signature);
      if (!valid) return new Response("Bad signature", { status: 401 });
      const raw = new TextDecoder().decode(bytes);
      received.push({ raw, body: JSON.parse(raw), signature });
      return new Response("ok");
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/webhook`,
    received,
    get attempts() {
      return attempts;
    },
    failNext(n) {
      failures = n;
    },
    statuses: () => values(received).flatMap((v) => v.statuses ?? []),
    messages: () => values(received).flatMap((v) => v.messages ?? []),
    stop: () => server.shutdown(),
  };
}
