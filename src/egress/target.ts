import {
  type AddressVerdict,
  checkAddress,
  isIpLiteral,
  isPrivateNetworkReason,
} from "./address.ts";
import { EgressError } from "./errors.ts";
import { type Resolver, systemResolver } from "./resolver.ts";

/** A webhook URL that passed every check possible without DNS. */
export interface Target {
  url: URL;
  /** lower case, no brackets, no trailing dot */
  host: string;
  /** 443/80 when the URL has none */
  port: number;
  tls: boolean;
  /** the host when it is an IP literal, else null */
  literalIp: string | null;
}

export interface TargetRules {
  allowHttp: boolean;
  allowPrivate: boolean;
}

const MAX_URL_LENGTH = 2048;
const MAX_SHOWN_LENGTH = 200;
const CHECK_DNS_TIMEOUT_MS = 2000;
const PRIVATE_HINT =
  " (set WEBHOOK_ALLOW_PRIVATE_NETWORKS=true to allow private networks in development)";

/** Names of cloud metadata services; they resolve to blocked addresses anyway, this fails faster and clearer. */
const METADATA_NAMES: ReadonlySet<string> = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "metadata.azure.internal",
  "metadata.azure.com",
  "instance-data",
  "instance-data.ec2.internal",
  "metadata.tencentyun.com",
  "metadata.oraclecloud.com",
]);

/** Parses and checks everything that can be checked without DNS; throws EgressError("invalid_url" | "blocked"). */
export function parseTarget(raw: string, rules: TargetRules): Target {
  if (raw.length > MAX_URL_LENGTH) {
    throw new EgressError(
      "invalid_url",
      `Cannot use a URL of ${raw.length} characters: the limit is ${MAX_URL_LENGTH}`,
    );
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(raw, "it is not a valid absolute URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw invalid(
      raw,
      `scheme "${url.protocol.slice(0, -1)}" is not supported (use https)`,
    );
  }
  if (url.username !== "" || url.password !== "") {
    const safe = new URL(url.href);
    safe.username = "";
    safe.password = "";
    throw invalid(
      safe.href,
      "a user name or password in the URL is not allowed",
    );
  }
  const tls = url.protocol === "https:";
  if (!tls && !rules.allowHttp) {
    throw new EgressError(
      "blocked",
      `Cannot use "${
        shown(raw)
      }": plain http is not allowed (use https, or set WEBHOOK_ALLOW_HTTP=true in development)`,
    );
  }
  let host = url.hostname.toLowerCase();
  if (host.startsWith("[")) host = host.slice(1, -1);
  if (host.endsWith(".")) host = host.slice(0, -1);
  if (host === "" || host.endsWith(".")) {
    throw invalid(raw, "the host is empty");
  }
  const port = url.port === "" ? (tls ? 443 : 80) : Number(url.port);
  if (port === 0) throw invalid(raw, "port 0 is not allowed");
  if (METADATA_NAMES.has(host)) {
    throw blocked(raw, `"${host}" is a cloud metadata service name`);
  }
  // RFC 6761: localhost names are loopback without asking DNS.
  if (
    !rules.allowPrivate && (host === "localhost" || host.endsWith(".localhost"))
  ) {
    throw blocked(raw, `"${host}" is a loopback name${PRIVATE_HINT}`);
  }
  const literalIp = isIpLiteral(host) ? host : null;
  if (literalIp !== null) {
    const verdict = checkAddress(literalIp, rules);
    if (!verdict.allowed) throw addressBlocked(raw, verdict);
  }
  return { url, host, port, tls, literalIp };
}

/** parseTarget, then resolves a name (2 s cap) and throws EgressError("blocked") if any address is blocked; a name that does not resolve passes. */
export async function checkUrl(
  raw: string,
  rules: TargetRules & { resolver?: Resolver },
): Promise<Target> {
  const target = parseTarget(raw, rules);
  if (target.literalIp !== null) return target;
  const resolver = rules.resolver ?? systemResolver;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let addresses: string[];
  try {
    addresses = await Promise.race([
      resolver(target.host),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error("DNS timed out")),
          CHECK_DNS_TIMEOUT_MS,
        );
      }),
    ]);
  } catch {
    // Unresolvable now is not an error: send time resolves and checks again.
    return target;
  } finally {
    clearTimeout(timer);
  }
  for (const ip of addresses) {
    const verdict = checkAddress(ip, rules);
    if (!verdict.allowed) {
      throw addressBlocked(raw, verdict, { resolvedFrom: target.host });
    }
  }
  return target;
}

/** The "blocked" error for a URL whose host is, or resolves to, a blocked address. */
export function addressBlocked(
  raw: string,
  verdict: Extract<AddressVerdict, { allowed: false }>,
  options: { resolvedFrom?: string } = {},
): EgressError {
  const hint = isPrivateNetworkReason(verdict.reason) ? PRIVATE_HINT : "";
  const host = options.resolvedFrom;
  const via = host === undefined
    ? ""
    : `"${host}" resolves to a blocked address: `;
  return blocked(raw, `${via}${verdict.message}${hint}`);
}

function invalid(raw: string, why: string): EgressError {
  return new EgressError("invalid_url", `Cannot use "${shown(raw)}": ${why}`);
}

function blocked(raw: string, why: string): EgressError {
  return new EgressError("blocked", `Cannot use "${shown(raw)}": ${why}`);
}

/** The URL as messages quote it: the query (often a token) and fragment hidden, long ones cut. */
function shown(raw: string): string {
  const cut = raw.search(/[?#]/);
  const text = cut === -1 ? raw : `${raw.slice(0, cut + 1)}…`;
  return text.length <= MAX_SHOWN_LENGTH
    ? text
    : `${text.slice(0, MAX_SHOWN_LENGTH)}…`;
}
