/**
 * The live sends' HTTP client of pipeline.ts, on its own thread (a
 * Worker): the benchmark's main thread also receives every webhook and polls
 * the simulator, and a send stamped there and written out only when that
 * loop got round to it measured the client's lag as the server's. Here the
 * accept time is taken and the request written by an otherwise idle loop.
 *
 * In: { k, url, key, body }. Out: { k, acceptAt, httpMs, status, id }.
 * Before the first send, bench_pipeline may ask it to open connections
 * ({ warm, connections }, see startLiveClient there).
 */
/// <reference lib="deno.worker" />

self.onmessage = async (e: MessageEvent) => {
  if (e.data.warm) {
    // In: { warm: url, connections }: that many GETs at once, so the pool
    // keeps that many connections open. Out: { warmed: true }.
    await Promise.all(
      Array.from({ length: e.data.connections }, async () => {
        const res = await fetch(e.data.warm);
        await res.body?.cancel();
      }),
    );
    self.postMessage({ warmed: true });
    return;
  }
  const { k, url, key, body } = e.data;
  const acceptAt = Date.now();
  let status = 0;
  let id: string | null = null;
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
      },
      body: JSON.stringify(body),
    });
    status = res.status;
    const parsed = await res.json().catch(() => null);
    if (status === 201) id = parsed?.data?.id ?? null;
  } catch { /* status 0: the request failed */ }
  self.postMessage({ k, acceptAt, httpMs: Date.now() - acceptAt, status, id });
};
