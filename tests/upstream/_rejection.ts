import assert from "node:assert/strict";
import { UpstreamError } from "../../src/upstream/graph_api.ts";

/** The UpstreamError a call rejects with; fails the test if it resolves or throws anything else. */
export async function rejection(p: Promise<unknown>): Promise<UpstreamError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof UpstreamError, `not an UpstreamError: ${err}`);
    return err;
  }
  assert.fail("expected the call to fail");
}
