// deno-lint-ignore-file no-console
/**
 * The front proxy of the scale-out harness (bench/scaleout.ts): a
 * small HTTP reverse proxy, round-robin over the instances whose /readyz
 * answered 200 in their last health check (one every 500 ms; a check that
 * gets no answer within 2 s counts as a refusal, and the instance keeps its
 * last result while its check runs). It never retries: a request whose instance refuses the
 * connection, drops it or does not answer within 15 s fails (502 or 504 with
 * `x-lb-failure`), and one that finds no ready instance is 503. It opens a
 * new connection per request (no keep-alive towards the instances), so a
 * failure means the instance refused or dropped that request, not that a
 * pooled connection raced the instance closing it.
 *
 * Control: POST /_lb/targets {targets: ["http://127.0.0.1:P", ...]} sets
 * the instances (all unready until their first check); GET /_lb/stats.
 *
 * Run as a process: `deno run -A bench/_lb.ts --port P`; it prints one JSON
 * line with its URL when it listens.
 */
import { parseArgs } from "node:util";

const CHECK_EVERY_MS = 500;
const CHECK_TIMEOUT_MS = 2_000;
const REQUEST_TIMEOUT_MS = 15_000;
/** Hop-by-hop headers a proxy does not forward (RFC 9110 §7.6.1), and Host. */
const HOP_HEADERS = [
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
];

interface Target {
  url: string;
  ready: boolean;
  checking: boolean;
  forwarded: number;
  failed: number;
}

export interface LbStats {
  forwarded: number;
  failed: Record<string, number>;
  targets: { url: string; ready: boolean; forwarded: number; failed: number }[];
}

/** The proxy; `handle` is a Deno.serve handler, `close()` stops its checks. */
export class RoundRobinProxy {
  #targets: Target[] = [];
  #next = 0;
  #forwarded = 0;
  #failed: Record<string, number> = {};
  #client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor() {
    this.#timer = setInterval(() => this.#check(), CHECK_EVERY_MS);
  }

  close(): void {
    clearInterval(this.#timer);
    this.#client.close();
  }

  setTargets(urls: string[]): void {
    this.#targets = urls.map((url) => ({
      url: url.replace(/\/+$/, ""),
      ready: false,
      checking: false,
      forwarded: 0,
      failed: 0,
    }));
    this.#check();
  }

  stats(): LbStats {
    return {
      forwarded: this.#forwarded,
      failed: { ...this.#failed },
      targets: this.#targets.map(({ url, ready, forwarded, failed }) => ({
        url,
        ready,
        forwarded,
        failed,
      })),
    };
  }

  /** Starts a check of every target whose previous check has ended; each keeps its last answer meanwhile. */
  #check(): void {
    for (const target of this.#targets) {
      if (target.checking) continue;
      target.checking = true;
      fetch(`${target.url}/readyz`, {
        client: this.#client,
        signal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
      }).then(async (res) => {
        await res.body?.cancel();
        target.ready = res.status === 200;
      }, () => {
        target.ready = false;
      }).finally(() => target.checking = false);
    }
  }

  #pick(): Target | undefined {
    const n = this.#targets.length;
    for (let i = 0; i < n; i++) {
      const target = this.#targets[(this.#next + i) % n]!;
      if (target.ready) {
        this.#next = (this.#next + i + 1) % n;
        return target;
      }
    }
    return undefined;
  }

  #fail(reason: string, status: number, target?: Target): Response {
    this.#failed[reason] = (this.#failed[reason] ?? 0) + 1;
    if (target) target.failed++;
    return Response.json(
      { error: { code: "LB_" + reason.toUpperCase(), message: reason } },
      { status, headers: { "x-lb-failure": reason } },
    );
  }

  handle = async (req: Request): Promise<Response> => {
    const url = new URL(req.url);
    if (url.pathname.startsWith("/_lb/")) return await this.#control(req, url);
    const target = this.#pick();
    if (!target) return this.#fail("no_ready_instance", 503);
    const headers = new Headers(req.headers);
    for (const name of HOP_HEADERS) headers.delete(name);
    const body = req.method === "GET" || req.method === "HEAD"
      ? undefined
      : await req.arrayBuffer();
    const signal = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
    let res: Response;
    try {
      res = await fetch(`${target.url}${url.pathname}${url.search}`, {
        method: req.method,
        headers,
        body,
        redirect: "manual",
        client: this.#client,
        signal,
      });
    } catch (err) {
      return signal.aborted
        ? this.#fail("timeout", 504, target)
        : this.#fail(connectReason(err), 502, target);
    }
    // The body is read here, so a connection dropped mid-answer is counted too.
    let payload: ArrayBuffer;
    try {
      payload = await res.arrayBuffer();
    } catch {
      return this.#fail(signal.aborted ? "timeout" : "dropped", 502, target);
    }
    this.#forwarded++;
    target.forwarded++;
    const out = new Headers(res.headers);
    for (const name of HOP_HEADERS) out.delete(name);
    out.delete("content-length");
    return new Response(payload, { status: res.status, headers: out });
  };

  async #control(req: Request, url: URL): Promise<Response> {
    if (url.pathname === "/_lb/targets" && req.method === "POST") {
      const { targets } = await req.json();
      this.setTargets(targets);
      return Response.json({ ok: true });
    }
    if (url.pathname === "/_lb/stats") return Response.json(this.stats());
    return new Response("Not found", { status: 404 });
  }
}

/** The proxy's stats, from another process. */
export async function proxyStats(lbUrl: string): Promise<LbStats> {
  const res = await fetch(`${lbUrl}/_lb/stats`);
  return await res.json();
}

/** Sets the proxy's instances and, unless there are none, waits (up to 10 s) until its checks found every one ready. */
export async function setProxyTargets(
  lbUrl: string,
  targets: string[],
): Promise<void> {
  const res = await fetch(`${lbUrl}/_lb/targets`, {
    method: "POST",
    body: JSON.stringify({ targets }),
  });
  await res.body?.cancel();
  if (!targets.length) return;
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if ((await proxyStats(lbUrl)).targets.every((t) => t.ready)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("The proxy did not see every instance ready within 10 s");
}

function connectReason(err: unknown): string {
  const e = err as Error & { cause?: Error };
  const text = `${e?.message ?? err} ${e?.cause?.message ?? ""}`;
  if (/refused/i.test(text)) return "connection_refused";
  if (/reset|closed|broken pipe|incomplete/i.test(text)) return "dropped";
  return "connect_error";
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: { port: { type: "string", default: "0" } },
  });
  const proxy = new RoundRobinProxy();
  const server = Deno.serve({
    port: Number(values.port),
    hostname: "127.0.0.1",
    onListen: ({ port }) =>
      console.log(JSON.stringify({ url: `http://127.0.0.1:${port}` })),
  }, proxy.handle);
  const stop = () => {
    proxy.close();
    server.shutdown().then(() => Deno.exit(0));
  };
  Deno.addSignalListener("SIGTERM", stop);
  Deno.addSignalListener("SIGINT", stop);
}
