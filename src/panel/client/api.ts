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
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: "same-origin",
      headers: {
        accept: "application/json",
        ...(options.body !== undefined
          ? { "content-type": "application/json" }
          : {}),
        ...options.headers,
      },
      ...(options.body !== undefined
        ? { body: JSON.stringify(options.body) }
        : {}),
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
