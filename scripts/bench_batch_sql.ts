// deno-lint-ignore-file no-console
/**
 * SQLite's own CPU per batch message, statement by statement:
 *
 *   deno run -A scripts/bench_batch_sql.ts capture DIR [--batches 300] [--known 0]
 *   deno run -A scripts/bench_batch_sql.ts replay DIR [DIR...]
 *
 * `capture` runs the real app in one process (tests/_harness.ts, the body of
 * scripts/bench_batch_cpu.ts: 100 template items to fresh numbers, or with
 * `--known N` to N recipients made first) and writes to DIR the database as
 * it is after a warm-up (`start.db`) and every statement node:sqlite ran for
 * the next batches, with its bound values (`log.json`). `replay` runs the
 * captured statements of each DIR against its own copy of its `start.db`,
 * the DIRs alternated batch by batch, three passes, with the app's pragmas
 * (no automatic checkpoint, so the WAL's size counts the pages written),
 * and prints per DIR the median process CPU (`process.cpuUsage()`, no
 * JavaScript of the app around it) per message by statement, and WAL pages
 * per batch. Capture with each checkout to compare (the script works from
 * any of them), then replay the captures together.
 */
import process from "node:process";
import { parseArgs } from "node:util";
import { DatabaseSync, StatementSync } from "node:sqlite";
import { BATCH_SIZE as SIZE, batchApp } from "./_batch_app.ts";

type Stmt = [method: string, sql: string, args: unknown[]];
const PASSES = 3;
const args = parseArgs({
  args: Deno.args,
  allowPositionals: true,
  options: {
    batches: { type: "string", default: "300" },
    known: { type: "string", default: "0" },
  },
});
const [command, ...dirs] = args.positionals;
const batches = Number(args.values.batches);
const known = Number(args.values.known);

if (
  command === "capture" && dirs.length === 1 && batches > 0 &&
  known % SIZE === 0
) {
  await capture(dirs[0]!, batches, known / SIZE);
} else if (command === "replay" && dirs.length > 0) {
  replay(dirs);
} else {
  console.error(
    "usage: bench_batch_sql.ts capture DIR [--batches 300] [--known 0 (a multiple of 100)] | replay DIR [DIR...]",
  );
  Deno.exit(2);
}

async function capture(dir: string, batches: number, known: number) {
  let log: Stmt[] | null = null;
  const proto = StatementSync.prototype as unknown as Record<
    string,
    (...a: unknown[]) => unknown
  >;
  for (const m of ["run", "all", "get", "iterate"]) {
    const original = proto[m]!;
    proto[m] = function (this: StatementSync, ...args: unknown[]) {
      log?.push([m, this.sourceSQL, args]);
      return original.apply(this, args);
    };
  }
  await using app = await batchApp(known * SIZE);
  for (let i = 0; i < Math.max(20, known); i++) await app.send();
  const raw = new DatabaseSync(`${app.h.dir}/app.db`);
  raw.exec("pragma wal_checkpoint(truncate)");
  raw.close();
  await Deno.mkdir(dir, { recursive: true });
  await Deno.copyFile(`${app.h.dir}/app.db`, `${dir}/start.db`);
  log = [];
  for (let i = 0; i < batches; i++) await app.send();
  const captured = log;
  log = null;
  await Deno.writeTextFile(
    `${dir}/log.json`,
    JSON.stringify(
      captured,
      (_k, v) => typeof v === "bigint" ? Number(v) : v,
    ),
  );
  console.log(`captured ${captured.length} statements of ${batches} batches`);
}

function batchesOf(dir: string): Stmt[][] {
  const log = JSON.parse(Deno.readTextFileSync(`${dir}/log.json`)) as Stmt[];
  const out: Stmt[][] = [];
  let current: Stmt[] = [];
  for (const s of log) {
    current.push(s);
    if (s[1] === "commit") {
      out.push(current);
      current = [];
    }
  }
  return out;
}

/** A statement's label: its verb and table. */
function labelOf(sql: string): string {
  const m =
    /^(?:with shared as \(select \?\d+\) )?(insert into|select .*? from|update|delete from)\s+"?(\w+)/s
      .exec(sql);
  return m ? `${m[1]!.split(" ")[0]} ${m[2]}` : sql.slice(0, 30);
}

function cpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

function replay(dirs: string[]) {
  const logs = dirs.map(batchesOf);
  const batches = Math.min(...logs.map((l) => l.length));
  const runs = dirs.map(() => new Map<string, number[]>());
  for (let pass = 0; pass < PASSES; pass++) {
    const dbs = dirs.map((dir, i) => {
      const path = `${dir}/replay.db`;
      for (const ext of ["", "-wal", "-shm"]) {
        try {
          Deno.removeSync(path + ext);
        } catch { /* not there */ }
      }
      Deno.copyFileSync(`${dir}/start.db`, path);
      const db = new DatabaseSync(path);
      for (
        const p of [
          "busy_timeout = 10000",
          "journal_mode = wal",
          "synchronous = normal",
          "foreign_keys = on",
          "temp_store = memory",
          "cache_size = -8000",
          "wal_autocheckpoint = 0",
        ]
      ) db.exec(`pragma ${p}`);
      return {
        db,
        path,
        log: logs[i]!,
        statements: new Map<string, StatementSync>(),
        us: new Map<string, number>(),
      };
    });
    for (let b = 0; b < batches; b++) {
      for (const d of dbs) {
        for (const [method, sql, args] of d.log[b]!) {
          let st = d.statements.get(sql);
          if (!st) {
            st = d.db.prepare(sql);
            d.statements.set(sql, st);
          }
          const t0 = cpuUs();
          if (method === "run") st.run(...args as never[]);
          else st.all(...args as never[]);
          const label = labelOf(sql);
          d.us.set(label, (d.us.get(label) ?? 0) + cpuUs() - t0);
        }
      }
    }
    for (const [i, d] of dbs.entries()) {
      // Before closing: the last connection's close checkpoints the WAL away.
      const walPages = Deno.statSync(`${d.path}-wal`).size / (4096 + 24);
      d.db.close();
      const total = [...d.us.values()].reduce((a, b) => a + b, 0);
      const perMessage = new Map(
        [...d.us].map(([k, us]) => [k, us / (batches * SIZE)]),
      );
      perMessage.set("TOTAL", total / (batches * SIZE));
      // Shown per message like the rest: pages per batch * SIZE / SIZE.
      perMessage.set("WAL pages per batch", walPages / batches);
      for (const [k, v] of perMessage) {
        runs[i]!.set(k, [...runs[i]!.get(k) ?? [], v]);
      }
    }
  }
  const median = (a: number[] = [0]) =>
    [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
  const labels = [...new Set(runs.flatMap((r) => [...r.keys()]))]
    .sort((a, b) => median(runs[0]!.get(b)) - median(runs[0]!.get(a)));
  console.log(
    `SQLite CPU per message (us), median of ${PASSES} passes, ${batches} batches of ${SIZE}`,
  );
  dirs.forEach((d, i) => console.log(`  [${i}] ${d}`));
  console.log(
    ["".padEnd(32), ...dirs.map((_, i) => `[${i}]`.padStart(10))].join(""),
  );
  for (const label of labels) {
    console.log(
      [
        label.padEnd(32),
        ...runs.map((r) => median(r.get(label)).toFixed(2).padStart(10)),
      ].join(""),
    );
  }
}
