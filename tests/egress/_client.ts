// Shared set-up for the EgressClient tests: a fault server, a client, and
// helpers to await an EgressError and time it.
import assert from "node:assert/strict";
import {
  EgressClient,
  type EgressClientOptions,
  EgressError,
  type EgressRequest,
} from "../../src/egress/http_client.ts";
import {
  type FaultServer,
  startFaultServer,
  testTls,
} from "../_support/fault_server.ts";

export const TLS = testTls();

export interface Rig extends AsyncDisposable {
  server: FaultServer;
  client: EgressClient;
}

/** A fault server and a client allowed to reach it (loopback, http). */
export async function rig(
  options: { tls?: boolean; client?: Partial<EgressClientOptions> } = {},
): Promise<Rig> {
  const server = await startFaultServer(
    options.tls ? { tls: { cert: TLS.cert, key: TLS.key } } : {},
  );
  const client = new EgressClient({
    allowPrivate: true,
    allowHttp: true,
    ...options.client,
  });
  return {
    server,
    client,
    async [Symbol.asyncDispose]() {
      client.close();
      await server.close();
    },
  };
}

/** The EgressError a promise rejects with. */
export async function failure(p: Promise<unknown>): Promise<EgressError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof EgressError, `not an EgressError: ${err}`);
    assert.notEqual(err.message, "");
    return err;
  }
  assert.fail("expected the request to fail");
}

/** The EgressError and how long it took, in ms. */
export async function timedFailure(
  p: () => Promise<unknown>,
): Promise<{ err: EgressError; ms: number }> {
  const started = performance.now();
  const err = await failure(p());
  return { err, ms: performance.now() - started };
}

/** Asserts a deadline fired on time: not early, and within a generous margin. */
export function assertOnTime(ms: number, timeoutMs: number): void {
  assert.ok(ms >= timeoutMs - 5, `ended after ${ms} ms, before ${timeoutMs}`);
  assert.ok(ms < timeoutMs + 1500, `ended after ${ms} ms`);
}

export const text = (s: string): Uint8Array => new TextEncoder().encode(s);
export const decode = (b: Uint8Array): string => new TextDecoder().decode(b);

/** A bodiless POST to the rig's server with a 2 s deadline. */
export function post(t: Rig): EgressRequest {
  return { method: "POST", url: t.server.url(), headers: [], timeoutMs: 2000 };
}
