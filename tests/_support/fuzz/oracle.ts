// The fuzzer's oracle: no 5xx, and every error is the spec's envelope
// `{ error: { code, message } }` with a documented code and its status.
import { DOCUMENTED_STATUS, OUTSIDE_API_STATUS } from "./codes.ts";
import type { FuzzRequest } from "./requests.ts";

export interface Reply {
  status: number;
  contentType: string;
  text: string;
}

export interface Finding {
  /** One line that groups equal findings: `GET /contacts/{id} -> 500 INTERNAL_ERROR`. */
  kind: string;
  problem: string;
  request: FuzzRequest;
  status: number;
  /** The start of the response body. */
  response: string;
  /** fast-check seed and path that regenerate the request (`--seed S --path P`). */
  seed?: number;
  path?: string;
}

/** What is wrong with a reply, or undefined when it passes. */
export function judge(req: FuzzRequest, reply: Reply): string | undefined {
  if (reply.status >= 500) return "server error";
  if (reply.status < 400 || req.method === "HEAD") return undefined;
  // GET /meta/webhook answers the handshake as text; errors everywhere are JSON.
  let body: { error?: { code?: unknown; message?: unknown } } | undefined;
  try {
    body = JSON.parse(reply.text);
  } catch {
    return `error body is not JSON (${reply.contentType || "no content type"})`;
  }
  const code = body?.error?.code;
  if (typeof code !== "string" || typeof body?.error?.message !== "string") {
    return "error body is not { error: { code, message } }";
  }
  const documented = DOCUMENTED_STATUS[code] ??
    (req.url.startsWith("/api/") ? undefined : OUTSIDE_API_STATUS[code]);
  if (documented === undefined) return `undocumented code ${code}`;
  if (documented !== reply.status) {
    return `code ${code} is documented as ${documented}`;
  }
  return undefined;
}

/** The `error.code` of a reply, or "" when it has none. */
export function errorCode(reply: Reply): string {
  if (reply.status < 400) return "";
  try {
    const code = JSON.parse(reply.text)?.error?.code;
    return typeof code === "string" ? code : "";
  } catch {
    return "";
  }
}

/** `METHOD /route -> status code: problem`, the grouping key of a finding. */
export function findingKind(
  req: FuzzRequest,
  reply: Reply,
  problem: string,
): string {
  return `${req.method} ${req.label} -> ${reply.status} ${
    errorCode(reply)
  }: ${problem}`.replace(
    /\s+/g,
    " ",
  );
}

/** Findings grouped by kind, each with its first example, for a failure message or a report. */
export function summarize(findings: Finding[], examples = 1): string {
  const groups = new Map<string, Finding[]>();
  for (const f of findings) {
    groups.set(f.kind, [...(groups.get(f.kind) ?? []), f]);
  }
  const lines: string[] = [];
  for (
    const [kind, list] of [...groups].sort((a, b) => b[1].length - a[1].length)
  ) {
    lines.push(`${list.length} x ${kind}`);
    for (const f of list.slice(0, examples)) {
      const body = f.request.body === undefined
        ? ""
        : ` body=${JSON.stringify(f.request.body.slice(0, 300))}${
          f.request.body.length > 300
            ? `...(${f.request.body.length} chars)`
            : ""
        }`;
      const where = f.seed === undefined
        ? ""
        : ` [seed ${f.seed} path ${f.path}]`;
      lines.push(
        `    ${f.request.method} ${f.request.url.slice(0, 300)}${body}` +
          ` headers=${JSON.stringify(f.request.headers).slice(0, 200)}${where}`,
        `    <- ${f.status} ${f.response}`,
      );
    }
  }
  return lines.join("\n");
}
