// Resolving and connecting, always inside the exchange's deadline. Sockets go
// to checked IPs only; TLS still verifies the URL's host name (SNI + cert).
import { type AddressVerdict, checkAddress } from "./address.ts";
import { Connection } from "./connection.ts";
import type { Deadline } from "./deadline.ts";
import { EgressError, reasonOf } from "./errors.ts";
import type { Resolver } from "./resolver.ts";
import { addressBlocked, type Target } from "./target.ts";

/** The pool key of a connection to `ip` for this target. */
export function poolKey(target: Target, ip: string): string {
  return `${target.tls}|${ip}|${target.port}|${target.host}`;
}

/** Every address of the target that passes checkAddress, in resolver order; throws "blocked" or "dns" when none does. */
export async function allowedAddresses(
  target: Target,
  options: { resolver: Resolver; allowPrivate: boolean; deadline: Deadline },
): Promise<string[]> {
  if (target.literalIp !== null) return [target.literalIp];
  const d = options.deadline;
  let answers: string[];
  try {
    answers = await options.resolver(target.host);
  } catch (err) {
    throw d.error ?? new EgressError(
      "dns",
      `Cannot resolve "${target.host}": ${reasonOf(err)}`,
      { cause: err },
    );
  }
  if (d.error !== null) throw d.error;
  const allowed: string[] = [];
  let blocked: Extract<AddressVerdict, { allowed: false }> | undefined;
  for (const ip of new Set(answers)) {
    const verdict = checkAddress(ip, options);
    if (verdict.allowed) allowed.push(ip);
    else blocked ??= verdict;
  }
  if (allowed.length > 0) return allowed;
  if (blocked !== undefined) {
    throw addressBlocked(target.url.href, blocked, {
      resolvedFrom: target.host,
    });
  }
  throw new EgressError("dns", `Cannot resolve "${target.host}": no addresses`);
}

/** Connects to the first address that accepts (then TLS when https); throws "connect" or "tls". */
export async function dial(
  target: Target,
  addresses: string[],
  options: { deadline: Deadline; caCerts?: string[] },
): Promise<Connection> {
  const d = options.deadline;
  let failure: EgressError | undefined;
  for (const ip of addresses) {
    if (d.error !== null) throw d.error;
    let tcp: Deno.TcpConn;
    try {
      tcp = await Deno.connect({
        hostname: ip,
        port: target.port,
        signal: d.signal,
        autoSelectFamily: false,
      });
    } catch (err) {
      if (d.error !== null) throw d.error;
      failure = connectError(err, hostPort(ip, target.port));
      continue;
    }
    d.hold(tcp);
    tcp.setNoDelay(true);
    const identity = { key: poolKey(target, ip), address: ip };
    if (!target.tls) return new Connection(tcp, identity);
    let tls: Deno.TlsConn | undefined;
    try {
      tls = await Deno.startTls(tcp, {
        hostname: target.host,
        caCerts: options.caCerts,
      });
      d.hold(tls);
      await tls.handshake();
      return new Connection(tls, identity);
    } catch (err) {
      closeQuietly(tls ?? tcp);
      throw d.error ?? new EgressError(
        "tls",
        `TLS handshake with "${target.host}" at "${
          hostPort(ip, target.port)
        }" failed: ${reasonOf(err)}`,
        { cause: err },
      );
    }
  }
  throw failure ?? new EgressError("connect", "No address to connect to");
}

function hostPort(ip: string, port: number): string {
  return ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`;
}

function connectError(err: unknown, where: string): EgressError {
  const why = err instanceof Deno.errors.ConnectionRefused
    ? "connection refused"
    : reasonOf(err);
  return new EgressError(
    "connect",
    `Cannot connect to "${where}": ${why}`,
    { cause: err },
  );
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Already closed, or consumed by startTls.
  }
}
