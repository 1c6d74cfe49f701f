// A 100 MB media file goes from the upstream simulator (its own process, so
// its copy of the file is not counted) through the download into the disk
// store and back out through the signed-URL route over real HTTP, while this
// process samples its own memory: streaming must keep it far below 100 MB.
import assert from "node:assert/strict";
import { createHarness } from "../_harness.ts";
import { simPost, startSimulatorProcess } from "../e2e/_process.ts";
import { downloadInboundMedia } from "../../src/domain/media/media_service.ts";
import { insertMedia } from "../../src/domain/media/media_repo.ts";
import { mediaStorageKey } from "../../src/domain/media/media.ts";
import { newId } from "../../src/ids.ts";
import { toDbTime } from "../../src/db/time.ts";
import { systemClock } from "../../src/clock.ts";

// This file runs alone, after the rest of the suite (deno.json's test task):
// RSS is the whole process's, and `deno test --parallel` runs other files in
// workers of this same process, whose allocations showed up here as 80+ MiB.
const SIZE = 100 * 1000 * 1000;
const MAX_GROWTH = 40 * 1024 * 1024;

/** Peak growth of RSS and of V8 heap + external (ArrayBuffer) memory while `fn` runs. */
async function peakGrowth<T>(
  fn: () => Promise<T>,
): Promise<{ result: T; rss: number; heap: number }> {
  const heapOf = (m: Deno.MemoryUsage) => m.heapUsed + m.external;
  const base = Deno.memoryUsage();
  let rss = 0;
  let heap = 0;
  const sample = () => {
    const m = Deno.memoryUsage();
    rss = Math.max(rss, m.rss - base.rss);
    heap = Math.max(heap, heapOf(m) - heapOf(base));
  };
  const timer = setInterval(sample, 5);
  try {
    const result = await fn();
    sample();
    return { result, rss, heap };
  } finally {
    clearInterval(timer);
  }
}

/** GETs the URL from a child process; its status, Content-Length, size and sha256. */
async function fetchInChild(url: string) {
  const script = `
    import { createHash } from "node:crypto";
        const res = await fetch(Deno.args[0]);
    const hash = createHash("sha256");
    let size = 0;
    for await (const chunk of res.body) { hash.update(chunk); size += chunk.byteLength; }
    console.log(JSON.stringify({ status: res.status, length: res.headers.get("content-length"), size, sha256: hash.digest("hex") }));
  `;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--ext=ts", script, url],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  assert.equal(out.code, 0, "the client process failed");
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

Deno.test({
  name:
    "a 100 MB media file is downloaded and served as a stream, never held in memory",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using sim = await startSimulatorProcess({ appSecret: "mem-secret" });
    await using h = await createHarness({
      clock: systemClock,
      env: {
        META_GRAPH_URL: sim.graphUrl,
        MEDIA_DOWNLOAD_HOSTS: "127.0.0.1",
        MEDIA_DOWNLOAD_ALLOW_PRIVATE_NETWORKS: "true",
      },
    });
    const upstream = await simPost(sim.url, "media", {
      sizeBytes: SIZE,
      mimeType: "video/mp4",
    });
    const id = newId();
    const now = new Date();
    await insertMedia(h.container.db, {
      id,
      account_id: h.tenant.account.id,
      message_id: null,
      channel_id: h.tenant.channel.id,
      upstream_media_id: upstream.id,
      kind: "video",
      mime_type: "video/mp4",
      file_name: "big.mp4",
      sha256: null,
      size_bytes: null,
      storage_key: mediaStorageKey(h.tenant.account.id, id, now),
      status: "pending",
      error: null,
      created_at: toDbTime(now),
      updated_at: toDbTime(now),
    });

    const download = await peakGrowth(() =>
      downloadInboundMedia(h.container, id)
    );
    const row = await h.container.db.selectFrom("media").selectAll()
      .where("id", "=", id).executeTakeFirstOrThrow();
    assert.equal(row.status, "stored", String(row.error));
    assert.equal(row.size_bytes, SIZE);
    assert.equal(row.sha256, upstream.sha256);

    const described = await h.request("GET", `/api/v2/media/${id}`);
    assert.equal(described.status, 200, JSON.stringify(described.body));
    const signed = new URL(described.body.data.url);
    await using server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      h.app.fetch,
    );
    // The client is its own process, so only the server's side is measured here.
    const served = await peakGrowth(() =>
      fetchInChild(
        `http://127.0.0.1:${server.addr.port}${signed.pathname}${signed.search}`,
      )
    );
    assert.deepEqual(served.result, {
      status: 200,
      length: String(SIZE),
      size: SIZE,
      sha256: upstream.sha256,
    });

    const peaks = { download, serve: served };
    for (const [what, m] of Object.entries(peaks)) {
      const figures = `${what}: RSS +${mb(m.rss)}, heap+external +${
        mb(m.heap)
      }`;
      assert.ok(m.rss < MAX_GROWTH, figures);
      assert.ok(m.heap < MAX_GROWTH, figures);
    }
  },
});
