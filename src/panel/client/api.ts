// Every panel action is a call to the public API (/api/v2, /api/v1), with
// the session cookie; state-changing calls are same-origin fetches, so the
// browser sends Sec-Fetch-Site: same-origin.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Thrown when the network (or the server) is unreachable: the call may be retried. */
export class NetworkError extends Error {}

export interface Page<T> {
  data: T[];
  cursor: string | null;
  hasMore: boolean;
}

export async function api<T>(
  method: string,
  path: string,
  options: {
    body?: unknown;
    /** A file as the body (an upload), sent with its own type. */
    file?: File;
    headers?: Record<string, string>;
  } = {},
): Promise<T> {
  let res: Response;
  const json = options.body !== undefined;
  try {
    res = await fetch(path, {
      method,
      credentials: "same-origin",
      headers: {
        accept: "application/json",
        ...(json ? { "content-type": "application/json" } : {}),
        ...(options.file
          ? { "content-type": options.file.type || "application/octet-stream" }
          : {}),
        ...options.headers,
      },
      ...(json ? { body: JSON.stringify(options.body) } : {}),
      ...(options.file ? { body: options.file } : {}),
    });
  } catch (err) {
    throw new NetworkError(String(err));
  }
  if (res.status === 401) {
    // The session ended (signed out elsewhere, revoked, expired).
    location.assign("/panel");
    throw new ApiError(401, "UNAUTHORIZED", "Signed out");
  }
  const type = res.headers.get("content-type") ?? "";
  const body = type.includes("json") ? await res.json() : undefined;
  if (res.status >= 500 && !body?.error) {
    throw new NetworkError(`HTTP ${res.status}`);
  }
  if (!res.ok) {
    const error = body?.error ?? {};
    if (res.status >= 500) throw new NetworkError(`HTTP ${res.status}`);
    throw new ApiError(
      res.status,
      error.code ?? "ERROR",
      error.message ?? `HTTP ${res.status}`,
    );
  }
  return body as T;
}
