/** One row of `pragma wal_checkpoint`: WAL frames, and how many are copied back. */
export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
  /** A RESTART checkpoint copied every frame: the next write restarts the WAL. */
  forced?: boolean;
  /** The pause the thread takes before its next pass (see WORKER_SOURCE). */
  pauseMs?: number;
}

/** The thread's cadence and RESTART threshold (see WORKER_SOURCE); defaults below. */
export interface CheckpointerOptions {
  everyMs?: number;
  maxMs?: number;
  minFrames?: number;
  restartFrames?: number;
  /** Called with each pass's result, after `stats` took it in. */
  onPass?: (result: CheckpointResult) => void;
}

/**
 * The thread: its own connection to the file and a PASSIVE checkpoint on a
 * timer (it never waits for the writer; a busy checkpoint lock, the main
 * connection's safety net, returns SQLITE_BUSY at once and the next pass
 * retries). The pause between passes adapts to the writes: a pass that
 * found fewer than `minFrames` frames committed since the one before
 * doubles it, up to `maxMs`; one that found as many halves it, down to
 * `everyMs`. A page written again and again (an index's last page, the
 * jobs being claimed) is then copied once per pass, not once per commit,
 * and a server with little to write neither fsyncs twice every `everyMs`
 * nor has its next commit restart the WAL (and fsync the new WAL header on
 * the event loop) that often. When the WAL had `restartFrames` or more, a
 * RESTART checkpoint right after the PASSIVE: it waits up to busy_timeout
 * (10 ms, in this thread) for the write lock between two of the writer's
 * transactions (else it is one more PASSIVE), copies under it the few
 * frames committed since, and the next write starts the WAL from its start.
 * A PASSIVE result's `log` is the WAL when it began, so "all copied" there
 * says nothing of the frames committed meanwhile. Each result is posted
 * back, `forced` when a RESTART copied all, with the pause before the next.
 * Source text, not a module file: `deno bundle` and `deno compile` carry no
 * file a Worker URL could point to.
 */
const WORKER_SOURCE = `
import { DatabaseSync } from "node:sqlite";
let db, timer, stopped = false;
self.onmessage = (e) => {
  if (e.data === "stop") {
    stopped = true;
    clearTimeout(timer);
    db?.close();
    self.postMessage("stopped");
    return;
  }
  const { path, everyMs, maxMs, minFrames, restartFrames } = e.data;
  db = new DatabaseSync(path);
  db.exec("pragma busy_timeout = 10");
  const passive = db.prepare("pragma wal_checkpoint(passive)");
  const restart = db.prepare("pragma wal_checkpoint(restart)");
  let pause = everyMs, lastLog = 0;
  const pass = () => {
    if (stopped) return;
    try {
      let done = passive.get();
      // Frames committed since the last pass (all of them if the WAL restarted).
      const grown = done.log >= lastLog ? done.log - lastLog : done.log;
      lastLog = done.log;
      if (done.log >= restartFrames) {
        done = restart.get();
        done.forced = done.busy === 0 && done.checkpointed === done.log;
        if (done.forced) lastLog = 0;
      }
      pause = grown >= minFrames
        ? Math.max(everyMs, pause / 2)
        : Math.min(maxMs, pause * 2);
      done.pauseMs = pause;
      self.postMessage(done);
    } catch {}
    timer = setTimeout(pass, pause);
  };
  timer = setTimeout(pass, pause);
};
`;

/** The shortest pause between two of the thread's PASSIVE checkpoints (steady writes). */
export const CHECKPOINT_EVERY_MS = 50;
/** The longest pause, when little is written. */
export const CHECKPOINT_MAX_PAUSE_MS = 1000;
/**
 * WAL frames (4 KB pages) a pass must find committed since the last one
 * for the pause to halve; with fewer, it doubles. A writer of N frames a
 * second is checkpointed about every 512 / N seconds, within
 * CHECKPOINT_EVERY_MS and CHECKPOINT_MAX_PAUSE_MS: the send benchmark's
 * 3,400 frames a second every 100-200 ms, 80 messages a second with their
 * status callbacks (about 2,000) every 200-400 ms, an idle server once a
 * second (at 50 ms, twenty times a second, each pass with two fsyncs and
 * the WAL restarted by the next commit).
 */
export const CHECKPOINT_MIN_FRAMES = 512;
/**
 * WAL frames (4 KB pages) from which the thread no longer waits for a
 * PASSIVE checkpoint to catch up but takes the write lock for a moment:
 * a fifth of the main connection's WAL_AUTOCHECKPOINT_PAGES.
 */
export const RESTART_AFTER_FRAMES = 2000;

/**
 * Copies the WAL back into the database file from a Worker thread with its
 * own connection, so the copy and its two fsyncs do not run inside a COMMIT
 * on the event loop. Under the send benchmark the automatic checkpoint at
 * WAL_AUTOCHECKPOINT_PAGES blocked the loop for 50-68 ms about once a second
 * (a cause of its p99). A PASSIVE checkpoint copies what was committed
 * since the last one, every 50 ms to every second depending on how much
 * that is (see WORKER_SOURCE); when it has copied everything, the next
 * write transaction restarts the WAL from its start. Under steady writes it
 * rarely has: the writer commits while it copies and fsyncs, so it trails
 * by a few hundred frames, the WAL never restarted and reached the safety
 * net's 10,000 pages every 2-3 s, and that checkpoint ran inside a COMMIT
 * again (16 of 29 WAL restarts in a send benchmark). So from
 * RESTART_AFTER_FRAMES on, the thread copies the rest under the write lock
 * (see WORKER_SOURCE): the WAL restarts there, not at the safety net. The
 * main connection's automatic checkpoint stays as the safety net: if the
 * thread falls behind, it copies only the frames the thread has not.
 * Durability is SQLite's own either way: a commit is durable in the WAL
 * before any checkpoint copies it.
 */
export class Checkpointer {
  #worker: Worker;
  #url: string;
  #stopped: Promise<void> | undefined;
  /** The thread failed (its connection could not open) and was ended. */
  #failed = false;
  /**
   * Checkpoints the thread has run, the last one's WAL frames and frames
   * copied, how often it found the WAL restarted, the most frames seen, and
   * the RESTART checkpoints that copied everything, and the pause the
   * thread took after the last one.
   */
  readonly stats = {
    runs: 0,
    log: 0,
    checkpointed: 0,
    restarts: 0,
    largest: 0,
    forced: 0,
    pauseMs: 0,
  };

  constructor(path: string, options: CheckpointerOptions = {}) {
    const cadence = {
      everyMs: options.everyMs ?? CHECKPOINT_EVERY_MS,
      maxMs: options.maxMs ?? CHECKPOINT_MAX_PAUSE_MS,
      minFrames: options.minFrames ?? CHECKPOINT_MIN_FRAMES,
      restartFrames: options.restartFrames ?? RESTART_AFTER_FRAMES,
    };
    const source = new Blob([WORKER_SOURCE], { type: "text/javascript" });
    this.#url = URL.createObjectURL(source);
    this.#worker = new Worker(this.#url, { type: "module" });
    this.#worker.onmessage = (e: MessageEvent<CheckpointResult | string>) => {
      if (typeof e.data === "string") return;
      this.stats.runs++;
      if (e.data.log < this.stats.log) this.stats.restarts++;
      this.stats.largest = Math.max(this.stats.largest, e.data.log);
      this.stats.log = e.data.log;
      this.stats.checkpointed = e.data.checkpointed;
      if (e.data.forced) this.stats.forced++;
      this.stats.pauseMs = e.data.pauseMs ?? 0;
      options.onPass?.(e.data);
    };
    // An error thrown in the thread would otherwise end the whole process;
    // the automatic checkpoint inside a COMMIT carries on alone instead.
    this.#worker.onerror = (e) => {
      e.preventDefault();
      this.#failed = true;
      this.#worker.terminate();
    };
    this.#worker.postMessage({ path, ...cadence });
  }

  /** The thread failed and was ended: checkpoints run inside COMMITs again. */
  get failed(): boolean {
    return this.#failed;
  }

  /** Closes the thread's connection, then the thread. */
  stop(): Promise<void> {
    if (this.#failed) return Promise.resolve();
    this.#stopped ??= new Promise<void>((resolve) => {
      this.#worker.onmessage = (e) => {
        if (e.data === "stopped") resolve();
      };
      this.#worker.postMessage("stop");
    }).then(() => {
      this.#worker.terminate();
      URL.revokeObjectURL(this.#url);
    });
    return this.#stopped;
  }
}
