/**
 * A Graph API client for JSON objects and edges, with the usage headers of
 * §8.5: the Instagram and Facebook Page reads, and the WhatsApp management
 * calls (meta_management.ts: templates, numbers, subscriptions).
 */
import { UpstreamError } from "./graph_api.ts";
import { classifyGraphError, parseJson } from "./graph_errors.ts";
import { parseJsonExact } from "../text.ts";

export interface SocialClientOptions {
  /** META_GRAPH_URL, e.g. https://graph.facebook.com/v22.0. */
  baseUrl: string;
  fetch?: typeof fetch;
  /** Per-call deadline; default 15 s. */
  timeoutMs?: number;
  /** Read integers past 2^53 as strings (parseJsonExact): Meta's ids. */
  exactIntegers?: boolean;
}

/** How close the upstream says this caller is to its limits. */
export interface GraphUsage {
  /** Highest `call_count`, `total_cputime` or `total_time` percentage of the usage headers; null without them. */
  percent: number | null;
  /** `estimated_time_to_regain_access` in ms (0 when not blocked). */
  regainMs: number;
}

export interface SocialResponse {
  body: Record<string, unknown>;
  usage: GraphUsage;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Told the usage headers of every answer, an error's included. */
  onUsage?: (usage: GraphUsage) => void;
}

/** Calls on Graph objects and edges: `path` without the version, `query` without the token. */
export interface SocialClient {
  /** One GET. */
  get(
    accessToken: string,
    path: string,
    query: Record<string, string>,
    opts?: CallOptions,
  ): Promise<SocialResponse>;
  /** One POST with a JSON body (Graph takes JSON as it takes form fields). */
  post(
    accessToken: string,
    path: string,
    body: Record<string, unknown>,
    opts?: CallOptions,
  ): Promise<SocialResponse>;
}

const DEFAULT_TIMEOUT_MS = 15_000;

/** The real client (also used against the simulator); every failure is an UpstreamError. */
export function createSocialClient(options: SocialClientOptions): SocialClient {
  const base = options.baseUrl.replace(/\/+$/, "");
  const doFetch = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const parse = options.exactIntegers ? parseExact : parseJson;
  async function call(
    accessToken: string,
    path: string,
    request: {
      method: "GET" | "POST";
      query?: Record<string, string>;
      body?: Record<string, unknown>;
    },
    opts: CallOptions,
  ): Promise<SocialResponse> {
    const query = request.query && Object.keys(request.query).length
      ? `?${new URLSearchParams(request.query)}`
      : "";
    const url = `${base}/${path.replace(/^\/+/, "")}${query}`;
    const timeout = AbortSignal.timeout(timeoutMs);
    let res: Response;
    let text: string;
    try {
      const headers: Record<string, string> = {
        Authorization: `Bearer ${accessToken}`,
      };
      if (request.body) headers["Content-Type"] = "application/json";
      res = await doFetch(url, {
        method: request.method,
        headers,
        body: request.body ? JSON.stringify(request.body) : undefined,
        signal: opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout,
      });
      text = await res.text();
    } catch (err) {
      throw new UpstreamError(
        timeout.aborted
          ? `Graph API did not answer within ${timeoutMs} ms`
          : `Cannot reach the Graph API: ${(err as Error)?.message ?? err}`,
        { category: "network", retryable: true, cause: err },
      );
    }
    const usage = readUsage(res.headers);
    opts.onUsage?.(usage);
    const body = parse(text);
    const what = request.method === "GET"
      ? `the read of "${path}"`
      : `the call to "${path}"`;
    if (!res.ok) {
      const error = classifyGraphError(res.status, body, res.headers, {
        subject: what,
      });
      throw usage.regainMs > 0 && error.throttled
        ? withRetryAfter(error, usage.regainMs)
        : error;
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw new UpstreamError(
        `Graph API answered ${what} with no JSON object`,
        { category: "invalid_response", retryable: false },
      );
    }
    return { body: body as Record<string, unknown>, usage };
  }
  return {
    get: (accessToken, path, query, opts = {}) =>
      call(accessToken, path, { method: "GET", query }, opts),
    post: (accessToken, path, body, opts = {}) =>
      call(accessToken, path, { method: "POST", body }, opts),
  };
}

/** parseJsonExact(), undefined when the text is not JSON (as parseJson). */
function parseExact(text: string): unknown {
  try {
    return parseJsonExact(text);
  } catch {
    return undefined;
  }
}

/** The same error, told to wait what the usage header says. */
function withRetryAfter(error: UpstreamError, ms: number): UpstreamError {
  return new UpstreamError(error.message, {
    category: error.category,
    upstreamCode: error.upstreamCode,
    httpStatus: error.httpStatus,
    throttled: true,
    retryable: true,
    retryAfterMs: ms,
    details: error.details,
  });
}

/** Reads X-App-Usage and X-Business-Use-Case-Usage; malformed headers count as absent. */
export function readUsage(headers: Headers): GraphUsage {
  const entries: Record<string, unknown>[] = [];
  const app = parseJson(headers.get("x-app-usage") ?? "");
  if (isObject(app)) entries.push(app);
  const buc = parseJson(headers.get("x-business-use-case-usage") ?? "");
  if (isObject(buc)) {
    for (const list of Object.values(buc)) {
      if (Array.isArray(list)) entries.push(...list.filter(isObject));
    }
  }
  let percent: number | null = null;
  let regainMinutes = 0;
  for (const e of entries) {
    for (const key of ["call_count", "total_cputime", "total_time"]) {
      const v = e[key];
      if (typeof v === "number" && Number.isFinite(v)) {
        percent = Math.max(percent ?? 0, v);
      }
    }
    const regain = e.estimated_time_to_regain_access;
    if (typeof regain === "number" && regain > regainMinutes) {
      regainMinutes = regain;
    }
  }
  return { percent, regainMs: regainMinutes * 60_000 };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
