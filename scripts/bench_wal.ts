// deno-lint-ignore-file no-console
/**
 * How SQLite checkpoints its WAL, compared in one process, back to back:
 * `deno run -A scripts/bench_wal.ts [--tx 20000] [--rounds 2]`.
 *
 * Each variant writes --tx small transactions shaped like a send (a message
 * row with four indexes, a job row inserted and one settled (deleted) a few
 * sends later, an event row, the conversation row updated) to a fresh file
 * in a temp dir next to the repository (a real disk, not tmpfs), in WAL mode
 * with synchronous = normal, as src/db/sqlite_dialect.ts opens it. Variants:
 *
 * - `auto-1000`: SQLite's default automatic checkpoint (1000 pages);
 * - `auto-N`: a larger wal_autocheckpoint (option A), journal_size_limit
 *   at the same size;
 * - `worker`: automatic checkpoints at 10000 pages as a safety net only,
 *   PASSIVE checkpoints every 100 ms from a Worker with its own connection
 *   (option B).
 *
 * Printed per variant: process CPU (process.cpuUsage(), worker thread
 * included) per transaction, the COMMIT's wall time (p50, p99, max: node:sqlite
 * is synchronous, so the max is the longest event-loop stall), the largest WAL
 * file seen and the WAL at the end, the bytes the process wrote (/proc/self/io
 * wchar: the WAL frames, the same in every variant, plus what the checkpoints
 * copied back, the one figure the disk's noise does not move), and for
 * `worker` the RSS the Worker added.
 * The rounds alternate the variants' order on a shared machine; compare the
 * variants within one run, not across runs.
 */
import { DatabaseSync } from "node:sqlite";
import process from "node:process";
import { numberFlags, percentile } from "./_bench.ts";

const { tx, rounds } = numberFlags({ tx: 20000, rounds: 2 });
const ROOT = new URL("../", import.meta.url).pathname;

const SCHEMA = `
create table conversations (id integer primary key, last_message_id text, last_at text, count integer not null default 0);
create table messages (id text primary key, account_id text not null, conversation_id integer not null,
  wamid text, status text not null, body text not null, created_at text not null, updated_at text not null);
create index messages_conv on messages (conversation_id, created_at);
create index messages_account on messages (account_id, created_at);
create unique index messages_wamid on messages (wamid);
create index messages_status on messages (status, updated_at);
create table jobs (id integer primary key, kind text not null, lane text not null, run_at text not null,
  payload text not null, lease_until text);
create index jobs_due on jobs (lane, run_at);
create table events (id integer primary key, account_id text not null, type text not null, payload text not null, created_at text not null);
create index events_account on events (account_id, id);
`;

/** The connection as src/db/sqlite_dialect.ts opens it, plus the variant's pragmas. */
function open(path: string, pragmas: string[]): DatabaseSync {
  const db = new DatabaseSync(path);
  db.exec("pragma busy_timeout = 10000");
  db.exec("pragma journal_mode = wal");
  db.exec("pragma synchronous = normal");
  db.exec("pragma cache_size = -8000");
  for (const p of pragmas) db.exec(p);
  return db;
}

const WORKER_SOURCE = `
import { DatabaseSync } from "node:sqlite";
let db, timer;
self.onmessage = (e) => {
  if (e.data.stop) { clearInterval(timer); db.close(); self.postMessage("stopped"); return; }
  db = new DatabaseSync(e.data.path);
  db.exec("pragma busy_timeout = 10000");
  const stmt = db.prepare("pragma wal_checkpoint(passive)");
  timer = setInterval(() => stmt.all(), e.data.everyMs);
  self.postMessage("ready");
};
`;

function startWorker(path: string): Promise<Worker> {
  const url = URL.createObjectURL(
    new Blob([WORKER_SOURCE], { type: "text/javascript" }),
  );
  const worker = new Worker(url, { type: "module" });
  return new Promise((resolve) => {
    worker.onmessage = () => resolve(worker);
    worker.postMessage({ path, everyMs: 100 });
  });
}

function stopWorker(worker: Worker): Promise<void> {
  return new Promise((resolve) => {
    worker.onmessage = () => {
      worker.terminate();
      resolve();
    };
    worker.postMessage({ stop: true });
  });
}

interface Variant {
  name: string;
  pragmas: string[];
  worker?: boolean;
}

const VARIANTS: Variant[] = [
  { name: "auto-1000", pragmas: [] },
  {
    name: "auto-2000",
    pragmas: [
      "pragma wal_autocheckpoint = 2000",
      "pragma journal_size_limit = 8388608",
    ],
  },
  {
    name: "auto-4000",
    pragmas: [
      "pragma wal_autocheckpoint = 4000",
      "pragma journal_size_limit = 16777216",
    ],
  },
  {
    name: "auto-10000",
    pragmas: [
      "pragma wal_autocheckpoint = 10000",
      "pragma journal_size_limit = 41943040",
    ],
  },
  {
    name: "worker",
    pragmas: [
      "pragma wal_autocheckpoint = 10000",
      "pragma journal_size_limit = 41943040",
    ],
    worker: true,
  },
];

/** Bytes this process wrote through write(2)/pwrite(2): the WAL frames plus the checkpoints' copies. */
function bytesWritten(): number {
  const io = Deno.readTextFileSync("/proc/self/io");
  return Number(/^wchar: (\d+)/m.exec(io)?.[1]);
}

function walSize(path: string): number {
  try {
    return Deno.statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}

async function runVariant(v: Variant, dir: string, round: number) {
  const path = `${dir}/${v.name}-${round}.db`;
  const db = open(path, v.pragmas);
  db.exec(SCHEMA);
  const conversations = 500;
  const insertConv = db.prepare("insert into conversations (id) values (?)");
  for (let i = 0; i < conversations; i++) insertConv.run(i);
  const rssBefore = process.memoryUsage().rss;
  const worker = v.worker ? await startWorker(path) : undefined;
  const rssWorker = process.memoryUsage().rss - rssBefore;

  const begin = db.prepare("begin immediate");
  const commit = db.prepare("commit");
  const insMsg = db.prepare(
    "insert into messages values (?, 'acc_1', ?, ?, 'accepted', ?, ?, ?)",
  );
  const insJob = db.prepare(
    "insert into jobs (kind, lane, run_at, payload) values ('send', 'send', ?, ?)",
  );
  const delJob = db.prepare("delete from jobs where id = ?");
  const insEvent = db.prepare(
    "insert into events (account_id, type, payload, created_at) values ('acc_1', 'message.created', ?, ?)",
  );
  const updConv = db.prepare(
    "update conversations set last_message_id = ?, last_at = ?, count = count + 1 where id = ?",
  );
  const body = JSON.stringify({
    template: {
      name: "order_update",
      language: "en",
      params: ["x".repeat(120)],
    },
  });

  const commitUs: number[] = [];
  let walMax = 0;
  const written0 = bytesWritten();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < tx; i++) {
    const now = new Date(1_800_000_000_000 + i).toISOString();
    const id = crypto.randomUUID();
    begin.run();
    insMsg.run(id, i % conversations, `wamid.${id}`, body, now, now);
    const job = insJob.run(now, body).lastInsertRowid;
    if (i >= 8) delJob.run(Number(job) - 8);
    insEvent.run(body, now);
    updConv.run(id, now, i % conversations);
    const c0 = performance.now();
    commit.run();
    commitUs.push((performance.now() - c0) * 1000);
    if (i % 100 === 0) {
      walMax = Math.max(walMax, walSize(path));
      // Let the event loop turn now and then, as a server's does.
      if (i % 1000 === 0) await new Promise((r) => setTimeout(r, 0));
    }
  }
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const written = bytesWritten() - written0;
  if (worker) await stopWorker(worker);
  walMax = Math.max(walMax, walSize(path));
  const walEnd = walSize(path);
  db.close();
  commitUs.sort((a, b) => a - b);
  const mean = commitUs.reduce((a, b) => a + b, 0) / commitUs.length;
  return {
    variant: v.name,
    round,
    "cpu us/tx": +((cpu.user + cpu.system) / tx).toFixed(1),
    "wall us/tx": +((wallMs * 1000) / tx).toFixed(1),
    "commit mean us": +mean.toFixed(1),
    "commit p50 us": +percentile(commitUs, 50).toFixed(1),
    "commit p99 us": +percentile(commitUs, 99).toFixed(1),
    "commit max ms": +(commitUs[commitUs.length - 1] / 1000).toFixed(2),
    "commits > 2 ms": commitUs.filter((us) => us > 2000).length,
    "in them ms":
      +(commitUs.filter((us) => us > 2000).reduce((a, b) => a + b, 0) / 1000)
        .toFixed(0),
    "written MB": +(written / 1048576).toFixed(0),
    "wal max MB": +(walMax / 1048576).toFixed(1),
    "wal end MB": +(walEnd / 1048576).toFixed(1),
    ...(worker ? { "worker rss MB": +(rssWorker / 1048576).toFixed(1) } : {}),
  };
}

const dir = await Deno.makeTempDir({ dir: ROOT, prefix: ".bench_wal_" });
try {
  const rows = [];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
    for (const v of order) rows.push(await runVariant(v, dir, round));
  }
  console.log(`${tx} send-shaped transactions per variant, ${rounds} rounds`);
  console.table(rows);
} finally {
  await Deno.remove(dir, { recursive: true });
}
