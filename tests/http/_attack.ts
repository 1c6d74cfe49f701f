// Senders for /meta/webhook over real sockets: Meta's signed posts, forged
// ones, and bodies held open or trickled, as an attacker sends them (no
// server code: tests/http/_attacker.ts runs these in a process of its own).
import { signMetaBody } from "../../src/upstream/meta_signature.ts";

export const APP_SECRET = "test-app-secret";
const encoder = new TextEncoder();

const META_BODY = JSON.stringify({
  object: "whatsapp_business_account",
  entry: [],
});
const META_SIGNATURE = signMetaBody(APP_SECRET, META_BODY);

/** One signed post from Meta (optionally through a proxy that names it); its status and latency. */
export async function metaPost(
  port: number,
  forwardedFor?: string,
): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const res = await fetch(`http://127.0.0.1:${port}/meta/webhook`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-hub-signature-256": META_SIGNATURE,
      ...(forwardedFor ? { "x-forwarded-for": forwardedFor } : {}),
    },
    body: META_BODY,
  });
  await res.body?.cancel();
  return { status: res.status, ms: performance.now() - started };
}

/** A well-formed signature that matches nothing. */
export function forgedSignature(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `sha256=${
    Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")
  }`;
}

/** A forged post sent whole; its status. */
export async function forgedPost(
  port: number,
  forwardedFor?: string,
): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/meta/webhook`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-hub-signature-256": forgedSignature(),
      ...(forwardedFor ? { "x-forwarded-for": forwardedFor } : {}),
    },
    body: `{"object":"whatsapp_business_account","entry":[${
      " ".repeat(1024)
    }]}`,
  });
  await res.body?.cancel();
  return res.status;
}

/** A post over a raw socket that announces `length` bytes and sends only `sent`, then holds. */
export interface HeldPost {
  /** The status the server answered with, or null when it closed without one. */
  answered: Promise<number | null>;
  close(): void;
}

export async function holdOpen(
  port: number,
  options: { length: number; sent: number; forwardedFor?: string },
): Promise<HeldPost> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const head = "POST /meta/webhook HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
    "Content-Type: application/json\r\n" +
    `X-Hub-Signature-256: ${forgedSignature()}\r\n` +
    (options.forwardedFor
      ? `X-Forwarded-For: ${options.forwardedFor}\r\n`
      : "") +
    `Content-Length: ${options.length}\r\n\r\n`;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    try {
      conn.close();
    } catch { /* already closed */ }
  };
  // Read while writing: a server that answers before taking the body stops reading it.
  const writing = (async () => {
    await conn.write(encoder.encode(head));
    if (options.sent) {
      await conn.write(new Uint8Array(options.sent).fill(0x20));
    }
  })().catch(() => {});
  const answered = (async () => {
    try {
      const buf = new Uint8Array(1024);
      const n = await conn.read(buf);
      if (n === null) return null;
      const status = /^HTTP\/1\.1 (\d{3})/.exec(
        new TextDecoder().decode(buf.subarray(0, n)),
      );
      return status ? Number(status[1]) : null;
    } catch {
      return null;
    } finally {
      close();
      await writing;
    }
  })();
  return { answered, close };
}

/** Keeps `count` posts held open, opening a new one whenever the server ends one, until stopped. */
export function keepHeld(
  port: number,
  count: number,
  options: { length: number; sent: number; forwardedFor?: () => string },
): { answers: number[]; stop(): Promise<void> } {
  const answers: number[] = [];
  const open = new Set<HeldPost>();
  let stopped = false;
  const loops = Array.from({ length: count }, async () => {
    while (!stopped) {
      const post = await holdOpen(port, {
        length: options.length,
        sent: options.sent,
        forwardedFor: options.forwardedFor?.(),
      });
      open.add(post);
      const status = await post.answered;
      open.delete(post);
      if (status !== null) answers.push(status);
    }
  });
  return {
    answers,
    async stop() {
      stopped = true;
      for (const post of open) post.close();
      await Promise.all(loops);
    },
  };
}

/** The sample of `values` at quantile q (nearest rank). */
export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}
