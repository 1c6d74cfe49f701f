/**
 * In-process worker pool over the job table: claims due jobs into free slots, runs their handlers
 * concurrently, heartbeats long leases (one timer and one statement for all its running jobs) and
 * settles every job it claimed.
 *
 * Lanes: claims are ordered by priority (lower first), so a live send queued behind 10,000 batch
 * jobs is the next one claimed. On top of that, one slot is reserved: when all but one slot are
 * busy, the last free slot only claims jobs with priority <= PRIORITY.inbound. So at most
 * `concurrency - 1` slots ever run webhook, media, batch or maintenance work. Live and inbound
 * jobs also have `urgentSlots` more beyond `concurrency`: a batch send holds its slot while it
 * waits on the upstream (hundreds of milliseconds while a campaign is enqueued), so with the
 * reserved slot taken by one live send, the next one used to wait until a batch job ended. A
 * backlog of slow batch jobs thus never makes a live send or inbound processing wait for a slot
 * (with `concurrency: 1` there is no reserve and no urgent slot).
 */
import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import type { Db } from "../db/schema.ts";
import { addMs } from "../db/time.ts";
import { GroupCap } from "./queue_groups.ts";
import { type JobContext, type JobHandler, JobRun } from "./job_context.ts";
import {
  claim,
  extendLeases,
  type JobRow,
  PRIORITY,
  releaseMany,
  rescueExpiredLeases,
} from "./queue.ts";
import {
  classify,
  type Outcome,
  type PlanRunner,
  Settler,
  Snooze,
} from "./settle.ts";

export type { JobContext, JobHandler };
export { Snooze };

export interface WorkerPoolOptions {
  db: Db;
  clock: Clock;
  /** libSQL: settles several kinds of outcome in one write batch (SettleDeps.plans). */
  plans?: PlanRunner | undefined;
  log: Logger;
  handlers: Record<string, JobHandler>;
  concurrency: number;
  /** @default 60_000 */
  leaseMs?: number;
  /** How long an idle pool waits before looking again (notify() wakes it sooner). @default 50 */
  pollMs?: number;
  /** @default a random "worker-xxxxxxxx" */
  workerId?: string;
  /**
   * How often the running pool hands back jobs whose lease expired (a dead
   * worker's), so a crashed instance's work resumes within a lease, not at
   * the next maintenance tick. @default 5_000
   */
  rescueEveryMs?: number;
  /**
   * Keep the last free slot for live and inbound work (see the top of this
   * file). A pool that runs only one lane turns it off. @default true
   */
  reserveUrgentSlot?: boolean;
  /**
   * Slots beyond `concurrency` that only live and inbound jobs take (see the
   * top of this file); only with the reserved slot. @default 4
   */
  urgentSlots?: number;
  /**
   * At most this many running jobs per job group (a webhook subscription). A
   * group held at the cap by slow jobs has its due backlog parked a little
   * later (see GroupCap), so other groups' claims never wade through it.
   * @default no cap
   */
  maxPerGroup?: number;
  /**
   * With maxPerGroup, at most this many running jobs per owner of groups
   * (the part of a group key before "/": a webhook subscription's account),
   * and free slots go round-robin by owner, then by group (see planClaim).
   * @default no cap
   */
  maxPerOwner?: number;
  /** Only jobs of these priorities (PRIORITY values). @default every lane */
  lanes?: readonly number[];
}

const MAX_ERROR_BACKOFF_MS = 5_000;
/** runOnce() stops here even if handlers keep re-queueing themselves. */
const RUN_ONCE_LIMIT = 10_000;

export class WorkerPool {
  readonly workerId: string;
  #db: Db;
  #clock: Clock;
  #log: Logger;
  #handlers: Record<string, JobHandler>;
  #concurrency: number;
  #leaseMs: number;
  #pollMs: number;
  #rescueEveryMs: number;
  #reserveUrgentSlot: boolean;
  /** Slots only live and inbound jobs take: the reserved one and the urgent ones beyond `concurrency`. */
  #reserved: number;
  #groups: GroupCap | undefined;
  #lanes: readonly number[] | undefined;
  #settler: Settler;
  #nextRescueAt = 0;
  /** The last claim came back full: the next one skips the probe for a due job. */
  #lastFull = false;
  #running = new Map<string, JobRun>();
  /** The pool's heartbeat timer, armed while jobs run (see #armHeartbeat). */
  #heartbeat: ReturnType<typeof setTimeout> | undefined;
  /** The heartbeat's write in flight. */
  #beat: Promise<void> | undefined;
  #loop: Promise<void> | undefined;
  #stopping = false;
  #notified = false;
  #waiter: { finish: () => void; onNotify: boolean } | undefined;
  #ran = 0;
  #failed = 0;

  constructor(opts: WorkerPoolOptions) {
    if (!Number.isInteger(opts.concurrency) || opts.concurrency < 1) {
      throw new RangeError(
        `Cannot create worker pool: concurrency "${opts.concurrency}" is not a positive integer`,
      );
    }
    this.#db = opts.db;
    this.#clock = opts.clock;
    this.#handlers = opts.handlers;
    this.#concurrency = opts.concurrency;
    this.#leaseMs = opts.leaseMs ?? 60_000;
    this.#rescueEveryMs = opts.rescueEveryMs ?? 5_000;
    this.#pollMs = opts.pollMs ?? 50;
    this.#reserveUrgentSlot = opts.reserveUrgentSlot ?? true;
    this.#reserved = this.#concurrency > 1 && this.#reserveUrgentSlot
      ? 1 + (opts.urgentSlots ?? 4)
      : 0;

    this.#lanes = opts.lanes;
    this.workerId = opts.workerId ??
      `worker-${crypto.randomUUID().slice(0, 8)}`;
    this.#log = opts.log.child({ workerId: this.workerId });
    this.#settler = new Settler({
      db: opts.db,
      clock: opts.clock,
      plans: opts.plans,
    });
    this.#groups = opts.maxPerGroup === undefined ? undefined : new GroupCap(
      { cap: opts.maxPerGroup, ownerCap: opts.maxPerOwner },
      { db: opts.db, log: this.#log },
    );
  }

  /** Starts claiming in the background until drain(); a drained pool stays stopped. */
  start(): void {
    if (this.#loop || this.#stopping) return;
    this.#loop = this.#run();
  }

  /** Hints that new jobs exist, so an idle pool looks now instead of after pollMs. */
  notify(): void {
    this.#notified = true;
    if (this.#waiter?.onNotify) this.#waiter.finish();
  }

  /** Claims and runs every due job until none is left (or `maxJobs`, or drain()); returns how many ran. */
  async runOnce(opts: { maxJobs?: number } = {}): Promise<number> {
    const max = opts.maxJobs ?? RUN_ONCE_LIMIT;
    let ran = 0;
    while (ran < max && !this.#stopping) {
      const jobs = await claim(this.#db, {
        workerId: this.workerId,
        kinds: Object.keys(this.#handlers),
        leaseMs: this.#leaseMs,
        now: this.#clock.now(),
        limit: Math.min(this.#concurrency, max - ran),
        ...(this.#lanes ? { lanes: this.#lanes } : {}),
        ...this.#groupCap(),
      });
      if (jobs.length === 0) break;
      this.#groups?.claimed(jobs);
      ran += jobs.length;
      await Promise.all(jobs.map((job) => this.#start(job)));
    }
    return ran;
  }

  /**
   * Stops claiming and waits up to `timeoutMs` for running jobs; jobs still running then are
   * released (available again, now, attempt not counted), their signals aborted, and it returns false;
   * a job whose handler already returned is not given back: drain waits for its settlement.
   */
  async drain(timeoutMs: number): Promise<boolean> {
    this.#stopping = true;
    this.#waiter?.finish();
    await this.#loop;
    for (const entry of this.#running.values()) entry.stop();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const all = Promise.all([...this.#running.values()].map((r) => r.done));
    const finished = await Promise.race([
      all.then(() => true),
      new Promise<boolean>((r) =>
        timer = setTimeout(() => r(false), timeoutMs)
      ),
    ]);
    clearTimeout(timer);
    if (finished) {
      clearTimeout(this.#heartbeat);
      this.#heartbeat = undefined;
      return true;
    }
    const now = this.#clock.now();
    const given: JobRun[] = [];
    // A job whose handler already ran is only waiting for its settlement
    // (retried while the database struggles): giving it back would run its
    // work, a send included, a second time. Wait for that settlement instead.
    const settling: Promise<void>[] = [];
    for (const entry of this.#running.values()) {
      if (entry.released) continue;
      if (entry.handlerDone) {
        settling.push(entry.done);
        continue;
      }
      entry.released = true;
      entry.abort(new Error("Worker pool is shutting down"));
      given.push(entry);
    }
    // Nothing left to keep alive: the released handlers are aborted.
    clearTimeout(this.#heartbeat);
    this.#heartbeat = undefined;
    try {
      await releaseMany(
        this.#db,
        given.map((e) => ({
          job: e.job,
          runAt: now,
          note: "Released at shutdown",
        })),
        now,
      );
    } catch (err) {
      this.#log.error("Cannot release jobs at shutdown", {
        jobIds: given.map((e) => e.job.id),
        err,
      });
    }
    await Promise.all(settling);
    return false;
  }

  stats(): { running: number; ran: number; failed: number } {
    return {
      running: this.#running.size,
      ran: this.#ran,
      failed: this.#failed,
    };
  }

  async #run(): Promise<void> {
    let errors = 0;
    while (!this.#stopping) {
      try {
        const more = await this.#fill();
        errors = 0;
        if (more) {
          // node:sqlite answers synchronously, so a busy claim loop would run
          // on microtasks alone and starve timers and the HTTP server: let
          // the event loop turn (I/O included) before claiming again.
          // setImmediate, not setTimeout(0): timers are clamped to ~2 ms.
          await new Promise((resolve) => setImmediate(resolve));
          continue;
        }
        const full = this.#running.size >= this.#capacity();
        await this.#sleep(full ? Infinity : this.#pollMs, true);
      } catch (err) {
        errors++;
        const wait = Math.min(this.#pollMs * 2 ** errors, MAX_ERROR_BACKOFF_MS);
        this.#log.error("Cannot claim jobs", { err, retryInMs: wait });
        await this.#sleep(wait, false);
      }
    }
  }

  /** Slots in all: `concurrency`, and the urgent ones beyond it. */
  #capacity(): number {
    return this.#concurrency + Math.max(0, this.#reserved - 1);
  }

  /** Claims into the free slots, keeping the reserved ones for live and inbound work; true if all filled. */
  async #fill(): Promise<boolean> {
    this.#notified = false;
    const free = this.#capacity() - this.#running.size;
    if (free <= 0) return false;
    const now = this.#clock.now();
    if (now.getTime() >= this.#nextRescueAt) {
      this.#nextRescueAt = now.getTime() + this.#rescueEveryMs;
      const rescued = await rescueExpiredLeases(this.#db, now);
      if (rescued > 0) {
        this.#log.warn("Rescued jobs with expired leases", { rescued });
      }
    }
    // Only kinds this build knows: during a rolling deploy an older instance
    // leaves a newer kind to the instances that can run it.
    const base = {
      workerId: this.workerId,
      kinds: Object.keys(this.#handlers),
      leaseMs: this.#leaseMs,
      now,
      ...(this.#lanes ? { lanes: this.#lanes } : {}),
      ...this.#groupCap(),
    };
    const open = Math.max(0, free - this.#reserved);
    // The reserved slots take only live or inbound work: claimed in the same
    // statement, they are filled only by jobs that are urgent enough; with
    // no other slot free, only urgent jobs are looked for.
    const reserve = open === 0
      ? { maxPriority: PRIORITY.inbound }
      : open < free
      ? { reserve: { slots: free - open, maxPriority: PRIORITY.inbound } }
      : {};
    const probe = !this.#lastFull;
    if (!this.#groups) {
      const jobs = await claim(this.#db, {
        ...base,
        limit: free,
        probe,
        ...reserve,
      });
      this.#lastFull = jobs.length === free;
      for (const job of jobs) this.#start(job);
      return this.#lastFull;
    }
    // A capped claim visits every group with room, so one that comes back
    // short of the slots means nothing more is claimable now.
    let jobs = open > 0 ? await claim(this.#db, { ...base, limit: open }) : [];
    this.#groups.claimed(jobs);
    this.#lastFull = jobs.length === open && open > 0;
    if (jobs.length === open && open < free) {
      const urgent = await claim(this.#db, {
        ...base,
        ...this.#groupCap(jobs), // the jobs just claimed count too
        limit: free - open,
        maxPriority: PRIORITY.inbound,
      });
      this.#groups.claimed(urgent);
      jobs = jobs.concat(urgent);
    }
    for (const job of jobs) this.#start(job);
    if (this.#groups) {
      await this.#groups.tend([...this.#running.values()], now);
    }
    return jobs.length === free;
  }

  /** The claim option that keeps each group under maxPerGroup and each owner under maxPerOwner (none without a cap). */
  #groupCap(
    claimed: readonly JobRow[] = [],
  ): { groups?: ReturnType<GroupCap["limits"]> } {
    if (!this.#groups) return {};
    return {
      groups: this.#groups.limits(
        [...this.#running.values()].map((r) => r.job).concat(claimed),
      ),
    };
  }

  #sleep(ms: number, onNotify: boolean): Promise<void> {
    if (this.#stopping || (onNotify && this.#notified)) {
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const finish = () => {
        clearTimeout(timer);
        this.#waiter = undefined;
        resolve();
      };
      if (Number.isFinite(ms)) timer = setTimeout(finish, ms);
      this.#waiter = { finish, onNotify };
    });
  }

  #start(job: JobRow): Promise<void> {
    const entry = new JobRun(
      job,
      this.#log,
      this.#clock,
      this.#groups ? this.#clock.now().getTime() : 0,
    );
    this.#running.set(job.leaseToken, entry);
    this.#armHeartbeat();
    entry.done = this.#execute(entry).finally(() => {
      this.#running.delete(job.leaseToken);
      // A running pool keeps its heartbeat armed between batches (re-arming
      // it for each would cost a timer per claim); a beat that finds no job
      // lets it lapse, and drain() clears it.
      if (this.#running.size === 0 && !this.#loop) {
        clearTimeout(this.#heartbeat);
        this.#heartbeat = undefined;
      }
      if (job.groupKey !== null && this.#groups) {
        this.#groups.finished(
          job.groupKey,
          this.#clock.now().getTime() - entry.startedAt,
        );
      }
      this.notify();
    });
    return entry.done;
  }

  /**
   * Runs one claimed job and settles it.
   *
   * **Invariant: every job claim() returned MUST end in complete(), fail() or release() (batched
   * by the Settler), whatever the handler throws.** The handler runs inside try/catch and settling retries on database
   * errors; if the database stays down, the lease expires and rescueExpiredLeases() hands the job back.
   */
  async #execute(entry: JobRun): Promise<void> {
    const { job, log } = entry;
    let outcome: Outcome;
    try {
      const handler = Object.hasOwn(this.#handlers, job.kind)
        ? this.#handlers[job.kind]
        : undefined;
      if (handler) {
        await handler(job.payload, entry);
        outcome = { type: "complete" };
      } else {
        outcome = {
          type: "fail",
          error: `Cannot run job: no handler for kind "${job.kind}"`,
          retryable: false,
        };
      }
    } catch (err) {
      outcome = classify(err);
    }
    entry.handlerDone = true;
    if (this.#beat) await this.#beat;
    this.#ran++;
    if (outcome.type === "fail") this.#failed++;
    // A handler that completed the job in its transaction and then returned
    // has nothing left to settle; one that threw afterwards is settled as
    // failed, which finds the job no longer running and changes nothing.
    if (
      !entry.released && !(entry.completedIn && outcome.type === "complete")
    ) {
      await this.#settler.settle(job, outcome, log);
    }
  }

  /**
   * One heartbeat for the whole pool: leaseMs/2 after the first job starts,
   * and again after each beat while jobs run (or ran since the last beat), the leases of every job whose
   * handler still runs are extended by leaseMs in one statement. A job starts
   * with a full lease, so it is extended before that runs out.
   */
  #armHeartbeat(): void {
    if (this.#heartbeat !== undefined || this.#beat !== undefined) return;
    this.#heartbeat = setTimeout(() => {
      this.#heartbeat = undefined;
      this.#beat = this.#beatAll().then((more) => {
        this.#beat = undefined;
        if (more) this.#armHeartbeat();
      });
    }, this.#leaseMs / 2);
  }

  /**
   * Extends the running handlers' leases; aborts each handler whose lease was
   * lost. False when no handler runs (released ones do not count): no next beat.
   */
  async #beatAll(): Promise<boolean> {
    const beating = [...this.#running.values()].filter((e) =>
      !e.handlerDone && !e.released
    );
    if (beating.length === 0) return false;
    try {
      const now = this.#clock.now();
      const until = addMs(now, this.#leaseMs);
      const kept = await extendLeases(
        this.#db,
        beating.map((e) => e.job),
        { until, now },
      );
      for (const e of beating) {
        if (kept.has(e.job.id) || e.handlerDone || e.released) continue;
        e.log.warn("Job lease was lost while running");
        e.abort(new Error("Job lease was lost"));
      }
    } catch (err) {
      this.#log.warn("Cannot extend job leases", { err, jobs: beating.length });
    }
    return true;
  }
}
