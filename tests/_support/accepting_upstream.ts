// An upstream (the Graph API client's interface) that accepts every send at
// once, for tests and benchmarks that drive deliverMessage without Meta.
import type { GraphApi } from "../../src/upstream/graph_api.ts";

/** What one send was given. */
export interface SentCall {
  phoneNumberId: string;
  accessToken: string;
  /** The body's recipient. */
  to: unknown;
}

/**
 * Accepts every send, the n-th (from 1) answered with `wamid(n)`, and keeps
 * what each was given in `calls`; the other Graph calls are not expected.
 */
export function acceptingUpstream(
  wamid: (n: number) => string = (n) => `wamid.S${n}`,
): { graph: GraphApi; calls: SentCall[] } {
  const calls: SentCall[] = [];
  const graph: GraphApi = {
    sendMessage: (auth, body) => {
      calls.push({ ...auth, to: (body as { to?: unknown }).to });
      return Promise.resolve({
        wamid: wamid(calls.length),
        waId: null,
        messageStatus: null,
      });
    },
    markRead: () => Promise.reject(new Error("unused")),
    getMediaInfo: () => Promise.reject(new Error("unused")),
    downloadMedia: () => Promise.reject(new Error("unused")),
    uploadMedia: () => Promise.reject(new Error("unused")),
  };
  return { graph, calls };
}
