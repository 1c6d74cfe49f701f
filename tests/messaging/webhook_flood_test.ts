import assert from "node:assert/strict";
import {
  MAX_WEBHOOK_BYTES,
  WEBHOOK_GATE_LIMITS,
} from "../../src/http/webhook_gate.ts";
import {
  countRows,
  inboundEnvelope,
  messagingTest,
  type Mh,
  newPhone,
  signedBody,
  waitInbound,
} from "./_helpers.ts";

const CHUNK = 64 * 1024;
/** One 3 MB body of JSON-looking bytes, shared by every forged post. */
const FORGED = new Uint8Array(MAX_WEBHOOK_BYTES).fill(0x20);
FORGED[0] = 0x7b;

/** A well-formed signature that matches nothing. */
function forgedSignature(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `sha256=${
    Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")
  }`;
}

/** Posts `body` as Deno.serve would hand it over from `address`, in 64 KiB chunks; counts chunks pulled. */
async function postFrom(
  h: Mh,
  address: string,
  body: Uint8Array,
  signature: string,
): Promise<{ status: number; chunksPulled: number }> {
  let chunksPulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const at = chunksPulled++ * CHUNK;
      if (at >= body.length) controller.close();
      else controller.enqueue(body.subarray(at, at + CHUNK));
    },
  }, { highWaterMark: 0 });
  const res = await h.app.fetch(
    new Request("http://localhost/meta/webhook", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-hub-signature-256": signature,
      },
      body: stream,
    }),
    { remoteAddr: { hostname: address, port: 40_000, transport: "tcp" } },
  );
  await res.body?.cancel();
  return { status: res.status, chunksPulled };
}

messagingTest(
  "with TRUSTED_PROXIES, a flood of forged 3 MB posts from a few addresses costs a bounded number of reads before each is refused unread, while Meta's posts and GET /account are answered",
  async (h) => {
    const attackers = ["198.51.100.7", "198.51.100.8", "2001:db8:1:2::bad"];
    const perAttacker = 32;
    const flood = attackers.flatMap((address) =>
      Array.from(
        { length: perAttacker },
        () => postFrom(h, address, FORGED, forgedSignature()),
      )
    );
    const { raw, signature } = await signedBody(inboundEnvelope(h, {
      id: "wamid.during-flood",
      type: "text",
      text: { body: "hola" },
    }, newPhone()));
    const signed = postFrom(
      h,
      "173.252.127.1",
      new TextEncoder().encode(raw),
      signature,
    );
    const account = h.request("GET", "/api/v2/account");

    assert.equal((await signed).status, 200);
    assert.equal((await account).status, 200);
    const results = await Promise.all(flood);
    const read = results.filter((r) => r.status === 401);
    const refused = results.filter((r) => r.status !== 401);
    assert.ok(
      refused.every((r) => r.status === 429 || r.status === 503),
      `refused with ${[...new Set(refused.map((r) => r.status))]}`,
    );
    assert.ok(
      refused.every((r) => r.chunksPulled <= 1),
      "a refused post is not read",
    );
    // Reads of one address: its failures until it is blocked, plus those
    // admitted meanwhile (at most what the byte bound holds at once).
    const { blockAfter, maxBufferedBytes } = WEBHOOK_GATE_LIMITS;
    const atOnce = Math.floor(maxBufferedBytes / MAX_WEBHOOK_BYTES);
    assert.ok(
      read.length <= attackers.length * (blockAfter + atOnce),
      `${read.length} of ${results.length} forged posts were read`,
    );
    assert.ok(read.length >= attackers.length, "each attacker was heard once");
    await waitInbound(h, "wamid.during-flood");
    assert.equal(await countRows(h, "inbound_payloads"), 1);

    // A burst from Meta's address is answered whole.
    const burst = await Promise.all(
      Array.from(
        { length: 12 },
        () =>
          postFrom(
            h,
            "173.252.127.1",
            new TextEncoder().encode(raw),
            signature,
          ),
      ),
    );
    assert.deepEqual(new Set(burst.map((r) => r.status)), new Set([200]));

    // Posting on, each attacker is refused unread; a new sender is still heard.
    for (const address of attackers) {
      const again = await postFrom(h, address, FORGED, forgedSignature());
      assert.equal(again.status, 429, address);
      assert.ok(again.chunksPulled <= 1, address);
    }
    const fresh = await postFrom(
      h,
      "203.0.113.9",
      FORGED,
      forgedSignature(),
    );
    assert.equal(fresh.status, 401);
    assert.equal(fresh.chunksPulled, MAX_WEBHOOK_BYTES / CHUNK + 1);
  },
  // Direct peers that are not the proxy are clients told apart.
  { env: { TRUSTED_PROXIES: "10.255.255.1" } },
);

messagingTest(
  "a Content-Length over 3 MB is answered 413 before any of the body is sent",
  async (h) => {
    const conn = await Deno.connect({
      hostname: "127.0.0.1",
      port: Number(new URL(h.baseUrl).port),
    });
    try {
      await conn.write(new TextEncoder().encode(
        "POST /meta/webhook HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
          "Content-Type: application/json\r\n" +
          `X-Hub-Signature-256: ${forgedSignature()}\r\n` +
          `Content-Length: ${MAX_WEBHOOK_BYTES + 1}\r\n\r\n`,
      ));
      // No body follows: a server that waited for it would never answer.
      let text = "";
      const buf = new Uint8Array(4096);
      while (!text.includes("PAYLOAD_TOO_LARGE")) {
        const n = await conn.read(buf);
        if (n === null) break;
        text += new TextDecoder().decode(buf.subarray(0, n));
      }
      assert.match(text, /^HTTP\/1\.1 413 /);
      assert.match(text, /"code":"PAYLOAD_TOO_LARGE"/);
    } finally {
      conn.close();
    }
    assert.equal(await countRows(h, "inbound_payloads"), 0);
  },
);

messagingTest(
  "a forged body of exactly 3 MB is read and refused 401 over real HTTP, and nothing is stored",
  async (h) => {
    const res = await fetch(`${h.baseUrl}/meta/webhook`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-hub-signature-256": forgedSignature(),
      },
      body: FORGED,
    });
    assert.equal(res.status, 401);
    assert.equal((await res.json()).error.code, "UNAUTHORIZED");
    assert.equal(await countRows(h, "inbound_payloads"), 0);
  },
);
