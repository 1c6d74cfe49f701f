// deno-lint-ignore-file no-console
// Job queue throughput of the real WorkerPool on a temp SQLite file (concurrency 16 = WORKERS default):
// `deno run -A bench/queue.ts [jobs] [concurrency] [runs]`. The measurement runs `runs` times
// (default 3, as the BullMQ side of ../shared/bench/queue_vs_bullmq.sh), each on a fresh database file;
// each run is printed, and the headline "processing:" and "cpu:" lines are the medians (never the best).
import { systemClock } from "../src/clock.ts";
import { openDatabase } from "../src/db/database.ts";
import { migrateToLatest } from "../src/db/migrator.ts";
import { createLogger } from "../src/log.ts";
import {
  countByState,
  enqueueManyUnchecked,
  PRIORITY,
} from "../src/jobs/queue.ts";
import { WorkerPool } from "../src/jobs/worker_pool.ts";
import { jobHandler } from "../src/jobs/registry.ts";
import { z } from "zod";
import { cpuUsage } from "node:process";

const JOBS = Number(Deno.args[0] ?? 20_000);
const CONCURRENCY = Number(Deno.args[1] ?? 16);
const RUNS = Number(Deno.args[2] ?? 3);
const PER_TRANSACTION = 1_000;

interface Run {
  enqueueMs: number;
  processMs: number;
  /** Process CPU (user + system) while processing, ms. */
  cpuMs: number;
  counts: Record<string, number>;
}

function perSecond(n: number, ms: number): number {
  return n / (ms / 1_000);
}

function rate(n: number, ms: number): string {
  return `${Math.round(perSecond(n, ms)).toLocaleString("en-US")} jobs/s`;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** One measurement: enqueue JOBS no-op jobs into a fresh database file, then process them all. */
async function measure(): Promise<Run> {
  const dir = await Deno.makeTempDir({ prefix: "bench-queue-" });
  const { db } = openDatabase(`file:${dir}/bench.db`);
  try {
    await migrateToLatest(db);
    const jobs = Array.from({ length: JOBS }, (_, i) => ({
      kind: "bench.noop",
      payload: { i },
      priority: PRIORITY.live,
    }));

    const t0 = performance.now();
    for (let i = 0; i < jobs.length; i += PER_TRANSACTION) {
      const chunk = jobs.slice(i, i + PER_TRANSACTION);
      await db.transaction().execute((trx) =>
        enqueueManyUnchecked(trx, chunk, systemClock.now())
      );
    }
    const enqueueMs = performance.now() - t0;

    let ran = 0;
    let allRan!: () => void;
    const done = new Promise<void>((resolve) => allRan = resolve);
    const pool = new WorkerPool({
      db,
      clock: systemClock,
      log: createLogger("warn"),
      concurrency: CONCURRENCY,
      // Wrapped as every registry handler is (payload schema, final-failure rule).
      handlers: {
        "bench.noop": jobHandler("bench.noop", z.object({ i: z.number() }), {
          run: () => {
            if (++ran === JOBS) allRan();
            return Promise.resolve();
          },
        }),
      },
    });
    const t1 = performance.now();
    const cpu0 = cpuUsage();
    pool.start();
    await done;
    await pool.drain(10_000);
    const processMs = performance.now() - t1;
    // Process CPU (user + system) while processing: what a job costs, whatever else shares the machine.
    const cpu = cpuUsage(cpu0);
    const cpuMs = (cpu.user + cpu.system) / 1_000;
    return { enqueueMs, processMs, cpuMs, counts: await countByState(db) };
  } finally {
    await db.destroy();
    await Deno.remove(dir, { recursive: true });
  }
}

function usPerJob(cpuMs: number): string {
  return `${(cpuMs * 1_000 / JOBS).toFixed(1)} us per job`;
}

const runs: Run[] = [];
for (let i = 0; i < RUNS; i++) {
  const r = await measure();
  runs.push(r);
  console.log(
    `run ${i + 1}/${RUNS}:     ${rate(JOBS, r.processMs)} (${
      r.processMs.toFixed(0)
    } ms), ${usPerJob(r.cpuMs)}; enqueue ${rate(JOBS, r.enqueueMs)}; ` +
      `final state ${JSON.stringify(r.counts)}`,
  );
}

// Medians of each figure on its own: the processing rate's median run need not be the CPU's.
const processMs = JOBS / median(runs.map((r) => perSecond(JOBS, r.processMs))) *
  1_000;
const enqueueMs = JOBS / median(runs.map((r) => perSecond(JOBS, r.enqueueMs))) *
  1_000;
const cpuMs = median(runs.map((r) => r.cpuMs));
const last = runs[runs.length - 1]!;

console.log(
  `jobs:        ${JOBS} (concurrency ${CONCURRENCY}, SQLite file, ` +
    `median of ${RUNS} runs, each on a fresh database)`,
);
console.log(
  `enqueue:     ${rate(JOBS, enqueueMs)} (${enqueueMs.toFixed(0)} ms, ` +
    `enqueueMany in transactions of ${PER_TRANSACTION})`,
);
console.log(
  `processing:  ${rate(JOBS, processMs)} (${processMs.toFixed(0)} ms, ` +
    `claim + no-op registry-wrapped handler + batched settle)`,
);
console.log(
  `cpu:         ${usPerJob(cpuMs)} ` +
    `(${cpuMs.toFixed(0)} ms process CPU while processing)`,
);
console.log(`final state: ${JSON.stringify(last.counts)}`);
