import type { MiddlewareHandler } from "hono";
import { type IpRanges, normalizeIp } from "../net/ip_range.ts";
import type { AppEnv, ClientAddress } from "./env.ts";

/**
 * The client address of a request: the peer's, or, when the peer is a
 * trusted proxy, the right-most `X-Forwarded-For` hop that is not one.
 * Hops are read from the right (each proxy appends the address it saw, so
 * only the hops our proxies wrote can be believed); a hop that is not an
 * address ends the walk at the last good one; when every hop is trusted the
 * left-most is the client. Forwarding headers from any other peer are
 * ignored: anyone can write them.
 */
export function resolveClientAddress(
  peer: string | undefined,
  forwardedFor: string | null | undefined,
  trusted: IpRanges,
): ClientAddress {
  const direct = peer === undefined ? null : normalizeIp(peer);
  if (direct === null) {
    return { address: peer || "unknown", distinct: false };
  }
  if (!trusted.has(direct)) {
    return { address: direct, distinct: trusted.size > 0 };
  }
  let last = direct;
  const hops = forwardedFor ? forwardedFor.split(",") : [];
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = normalizeIp(hops[i]!);
    if (hop === null) break;
    if (!trusted.has(hop)) return { address: hop, distinct: true };
    last = hop;
  }
  return { address: last, distinct: false };
}

/** Sets `client` on the context: the address every per-client rule and log line uses. */
export function clientAddress(trusted: IpRanges): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const info = c.env as { remoteAddr?: { hostname?: string } } | undefined;
    c.set(
      "client",
      resolveClientAddress(
        info?.remoteAddr?.hostname,
        // Headers.get joins every occurrence in order with ", ".
        trusted.size > 0 ? c.req.header("x-forwarded-for") : undefined,
        trusted,
      ),
    );
    await next();
  };
}
