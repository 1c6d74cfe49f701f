// deno-lint-ignore-file no-explicit-any
// JSON calls to the API and to the simulator's control API.

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
}

/** One JSON request to the API with a bearer key. */
export async function api(
  baseUrl: string,
  key: string,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const res = await fetch(`${baseUrl}/api/v2${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(options.body !== undefined
        ? { "content-type": "application/json" }
        : {}),
      ...options.headers,
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, body };
}

/** POST /_sim/<path> on a simulator; throws on a non-2xx answer. */
export async function simPost(
  simulatorUrl: string,
  path: string,
  body: unknown,
): Promise<any> {
  const res = await fetch(`${simulatorUrl}/_sim/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) {
    throw new Error(
      `Simulator ${path} failed: ${res.status} ${JSON.stringify(json)}`,
    );
  }
  return json;
}

/** GET /_sim/<path> on a simulator. */
export async function simGet(simulatorUrl: string, path: string): Promise<any> {
  const res = await fetch(`${simulatorUrl}/_sim/${path}`);
  return await res.json();
}
