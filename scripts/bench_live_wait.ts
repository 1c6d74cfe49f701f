// deno-lint-ignore-file no-console
/**
 * How many campaign batches a live POST /messages waits through, in one
 * process: `deno run -A scripts/bench_live_wait.ts [--sends 15] [--batch-ms 20]`.
 *
 * The real app (tests/_harness.ts: a SQLite file, a seeded tenant and
 * template) serves on 127.0.0.1; four feeders keep one bulk group-commit
 * unit each queued, each unit --batch-ms of synchronous work (what a batch of
 * 100 costs on node:sqlite), as the four enqueuers of bench_pipeline.ts do; a
 * client on its own thread (a Worker) sends --sends live POST /messages, one
 * every 100 ms. Printed: per send, the bulk units that committed between its
 * request and its answer, and the answers' time p50/max. The count, not the
 * milliseconds, is the figure to compare on a shared machine: the least a
 * send can wait is the unit running when it arrives plus, at most, one more.
 */
import { createHarness } from "../tests/_harness.ts";
import { seedTemplate, templateTo } from "../tests/messaging/_helpers.ts";
import { numberFlags } from "./_bench.ts";

const flags = numberFlags({ sends: 15, "batch-ms": 20 });
const FEEDERS = 4;

const CLIENT = `self.onmessage = async (e) => {
  const { url, key, bodies } = e.data;
  const out = [];
  for (const body of bodies) {
    const t = Date.now();
    const res = await fetch(url, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "content-type": "application/json", authorization: "Bearer " + key },
    });
    await res.text();
    out.push({ t, done: Date.now(), status: res.status });
    await new Promise((r) => setTimeout(r, 100));
  }
  self.postMessage(out);
};`;

interface Sent {
  t: number;
  done: number;
  status: number;
}

await using h = await createHarness();
await seedTemplate(h);
const server = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen() {} },
  h.app.fetch,
);
const unitsDone: number[] = [];
let stop = false;
const batchWork = () => {
  const until = performance.now() + flags["batch-ms"];
  while (performance.now() < until) { /* a batch's synchronous work */ }
  unitsDone.push(Date.now());
  return Promise.resolve();
};
const feeders = Array.from({ length: FEEDERS }, async () => {
  while (!stop) await h.container.commits.run(batchWork, { lane: "bulk" });
});
const client = new Worker(
  `data:application/javascript,${encodeURIComponent(CLIENT)}`,
  { type: "module" },
);
const bodies = Array.from({ length: flags.sends }, (_, i) => ({
  phoneNumberId: h.tenant.channel.id,
  ...templateTo(`+549115555${String(i).padStart(4, "0")}`),
}));
const sent = await new Promise<Sent[]>((resolve) => {
  client.onmessage = (e) => resolve(e.data);
  client.postMessage({
    url: `http://127.0.0.1:${server.addr.port}/api/v2/messages`,
    key: h.tenant.key,
    bodies,
  });
});
stop = true;
await Promise.all(feeders);
client.terminate();
await server.shutdown();

const waited = sent.map((s) =>
  unitsDone.filter((at) => at > s.t && at <= s.done).length
);
const ms = sent.map((s) => s.done - s.t).sort((a, b) => a - b);
const statuses = [...new Set(sent.map((s) => s.status))].join(", ");
console.log(
  `bench_live_wait: ${flags.sends} live sends while ${FEEDERS} feeders keep a ${
    flags["batch-ms"]
  } ms batch unit queued each\n  answers: ${statuses}\n  batch units committed while a send waited: ${
    waited.join(" ")
  } (mean ${
    (waited.reduce((a, b) => a + b, 0) / waited.length).toFixed(1)
  })\n  request -> answer: p50 ${ms[Math.floor(ms.length / 2)]} ms, max ${
    ms.at(-1)
  } ms`,
);
