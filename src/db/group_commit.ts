import { CompiledQuery, type Transaction } from "kysely";
import type { Database, Db } from "./schema.ts";
import { type AtomicDeps, type AtomicUnit, runIn } from "./atomic.ts";
import { BatchCommit } from "./batch_commit.ts";
import { type Plan, plannedUnit } from "./planned_writes.ts";

/** One piece of work that must commit (or roll back) as a whole. */
export type WriteUnit<T> = (trx: Transaction<Database>) => Promise<T>;

interface Queued {
  unit: WriteUnit<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** Units gathered into one transaction at most. */
const MAX_UNITS = 128;
/**
 * Groups with live units a waiting bulk unit sits out at most: campaign
 * priority never displaces live sends, yet a steady stream of them cannot
 * hold a batch back forever.
 */
const MAX_BULK_PASSES = 4;
/** Groups run back to back at most this long before the sockets are read (see #schedule). */
const IO_TURN_MS = 10;

// Units run one after another, so one savepoint name serves them all; the
// statements are compiled once, not per unit.
const SAVEPOINT = CompiledQuery.raw("savepoint group_unit");
const RELEASE = CompiledQuery.raw("release group_unit");
const ROLLBACK_TO = CompiledQuery.raw("rollback to group_unit");

/** What a unit that can wait lets the writer do: gather for `gatherMs` first. */
export interface RunOptions {
  /**
   * Wait up to this long for other units before starting a transaction when
   * the writer is idle (a unit that cannot wait, or a running writer, takes
   * it along sooner). For work nobody waits on by the millisecond (webhook
   * attempt records, Meta's status callbacks): node:sqlite runs a
   * transaction within one turn of the event loop, so units that arrive one
   * per I/O callback would otherwise commit one by one.
   */
  gatherMs?: number;
  /**
   * "live": a unit someone waits on by the millisecond (POST /messages):
   * it joins the next group ahead of every other unit, and a group holding
   * one takes no bulk unit. "bulk": a large unit (a batch of up to 100
   * sends, tens of milliseconds of synchronous work on node:sqlite): at most
   * one per group, so the writer hands the event loop back after each one
   * and a live request that arrived meanwhile is read and committed before
   * the next. Without a lane, units go in arrival order.
   */
  lane?: "live" | "bulk";
}

/** Runs `fn` after `ms`; a test passes its own to decide when a gathering window closes. */
export type Defer = (fn: () => void, ms: number) => void;

/**
 * Group commit: the first unit that finds the writer idle starts a
 * transaction on the next task (see #schedule); units that arrive before it
 * begins or while a transaction runs (the sends and webhook attempt records
 * of that moment) wait and are committed together in the next one, each
 * inside its own savepoint, so one unit's failure (an AppError thrown by a
 * rule, a constraint violation) rolls back that unit alone and rejects only
 * its promise. No delay unless a unit asks to gather (RunOptions.gatherMs):
 * under load a group is whatever arrived during the previous commit, idle a
 * unit waits one turn of the event loop. Lanes (RunOptions.lane) order the
 * queue: live units join the next group first, and a group takes at most
 * one bulk unit (none beside live units), so a campaign batch never keeps a
 * live send waiting for more than the bulk unit already running. A unit's
 * promise settles only after its transaction committed (or
 * failed), so nothing is acknowledged before it is durable. On SQLite the
 * commit is the largest cost of a small write; this pays it once per group.
 * On libSQL the group is one interactive transaction, savepoints included.
 *
 * A unit must use only the `trx` it is given: on embedded SQLite the one
 * connection is held by the group, so a query on the Db would wait forever.
 */
export class GroupCommit {
  #db: Db;
  #defer: Defer;
  #queue: Queued[] = [];
  #live: Queued[] = [];
  #bulk: Queued[] = [];
  /** Groups in a row that left the oldest bulk unit waiting for live units. */
  #bulkPasses = 0;
  #running = false;
  /** When the writer last let the runtime poll its sockets (performance.now()). */
  #ioAt = 0;
  /** A gathering window is open (RunOptions.gatherMs). */
  #gathering = false;
  /** Transactions run, units committed or failed in them, and the largest group. */
  readonly stats = { groups: 0, units: 0, largest: 0 };
  /** libSQL: atomic units go in batches, never in an interactive transaction. */
  readonly #batches: BatchCommit | undefined;

  constructor(
    db: Db,
    options: { defer?: Defer; atomic?: AtomicDeps } = {},
  ) {
    this.#db = db;
    this.#defer = options.defer ?? ((fn, ms) => setTimeout(fn, ms));
    this.#batches = options.atomic?.engine === "libsql"
      ? new BatchCommit(options.atomic)
      : undefined;
  }

  /** libSQL: the batches of atomic units written (BatchCommit's stats); undefined on SQLite. */
  get batchStats(): BatchCommit["stats"] | undefined {
    return this.#batches?.stats;
  }

  /**
   * Runs an atomic unit (reads, then writes: src/db/atomic.ts) with the
   * others of this moment: on embedded SQLite in the next group transaction
   * (see run), on libSQL in the next write batch (src/db/batch_commit.ts).
   */
  runAtomic<P, T>(
    unit: AtomicUnit<P, T>,
    options: RunOptions = {},
  ): Promise<T> {
    if (this.#batches) {
      return this.#batches.run(unit, { live: options.lane === "live" });
    }
    return this.run((trx) => runIn(trx, unit), options);
  }

  /**
   * runAtomic() of a plan that reads, decides and records its writes in one
   * function (src/db/planned_writes.ts): what services use, since they
   * build no statements themselves.
   */
  runPlanned<T>(plan: Plan<T>, options: RunOptions = {}): Promise<T> {
    return this.runAtomic(plannedUnit(plan), options);
  }

  /** Runs `unit` in the next group transaction; resolves once that transaction committed. */
  run<T>(unit: WriteUnit<T>, options: RunOptions = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const queue = options.lane === "live"
        ? this.#live
        : options.lane === "bulk"
        ? this.#bulk
        : this.#queue;
      queue.push({
        unit: unit as WriteUnit<unknown>,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      if (this.#running) return;
      if (options.gatherMs && options.gatherMs > 0) {
        if (this.#gathering) return;
        this.#gathering = true;
        this.#defer(() => {
          this.#gathering = false;
          if (!this.#running && this.#waiting()) {
            this.#running = true;
            this.#ioAt = performance.now();
            this.#drain();
          }
        }, options.gatherMs);
        return;
      }
      this.#running = true;
      this.#ioAt = performance.now();
      this.#schedule();
    });
  }

  /**
   * The next group starts on a macrotask, not a microtask: on embedded
   * SQLite a group runs synchronously to its commit, so while it runs no
   * request is read; in the turn before it starts, every request whose
   * bytes arrived meanwhile runs up to its unit and joins. A microtask here
   * made every group under HTTP load a group of one. setImmediate, not
   * setTimeout(0): nested timeouts are clamped to milliseconds each, which
   * left the core idle between groups (4,000 requests at c32 in one
   * process: 750 ms with setTimeout, 490 ms with setImmediate).
   *
   * But Deno runs setImmediate callbacks back to back before it polls the
   * sockets (tokio looks at its I/O driver once per 61 ready tasks), so a
   * chain of long groups (campaign batches) left requests unread for
   * hundreds of milliseconds: once groups have run IO_TURN_MS in a row, the
   * next starts on setTimeout(0), which lets the runtime read the sockets
   * first.
   *
   * So does every group that takes a bulk unit: after a short group (a live
   * send, status callbacks) a setImmediate started the next batch's tens of
   * milliseconds before the runtime wrote the answers just committed or
   * read the requests that came meanwhile, so a live send waited for the
   * batch running when it arrived and then for the next one.
   */
  #schedule(): void {
    if (performance.now() - this.#ioAt < IO_TURN_MS && !this.#bulkNext()) {
      setImmediate(() => this.#drain());
      return;
    }
    setTimeout(() => {
      this.#ioAt = performance.now();
      this.#drain();
    }, 0);
  }

  async #drain(): Promise<void> {
    try {
      await this.#commit();
    } finally {
      if (this.#waiting()) this.#schedule();
      else this.#running = false;
    }
  }

  #waiting(): boolean {
    return this.#live.length + this.#queue.length + this.#bulk.length > 0;
  }

  /**
   * The next group: live units first, then the others in arrival order, then
   * one bulk unit, unless the group holds live units (it then commits
   * without waiting for the bulk unit's work) and the bulk unit has not sat
   * out MAX_BULK_PASSES groups already.
   */
  #take(): Queued[] {
    const bulk = this.#bulkNext();
    const group = this.#live.splice(0, MAX_UNITS);
    const live = group.length > 0;
    group.push(...this.#queue.splice(0, MAX_UNITS - group.length));
    if (bulk) {
      this.#bulkPasses = 0;
      group.push(this.#bulk.shift()!);
    } else if (live && this.#bulk.length > 0 && group.length < MAX_UNITS) {
      this.#bulkPasses++;
    }
    return group;
  }

  /** Whether the next group takes a bulk unit (see #take). */
  #bulkNext(): boolean {
    if (this.#bulk.length === 0) return false;
    if (this.#live.length + this.#queue.length >= MAX_UNITS) return false;
    return this.#live.length === 0 || this.#bulkPasses >= MAX_BULK_PASSES;
  }

  async #commit(): Promise<void> {
    let group: Queued[] = [];
    const results:
      ({ ok: true; value: unknown } | { ok: false; err: unknown })[] = [];
    // A unit error after which SQLite rolled back the whole transaction
    // (disk full, I/O error): the cause every unit of the group fails with,
    // not the "no transaction is active" of the rollbacks that follow.
    let fatal: { err: unknown } | undefined;
    try {
      await this.#db.transaction().execute(async (trx) => {
        // Taken once the transaction has begun: the units that arrived while
        // it waited for the connection join this group too.
        group = this.#take();
        this.stats.groups++;
        this.stats.units += group.length;
        this.stats.largest = Math.max(this.stats.largest, group.length);
        for (const item of group) {
          await trx.executeQuery(SAVEPOINT);
          try {
            const value = await item.unit(trx);
            await trx.executeQuery(RELEASE);
            results.push({ ok: true, value });
          } catch (err) {
            try {
              await trx.executeQuery(ROLLBACK_TO);
            } catch (lost) {
              fatal = { err };
              throw lost;
            }
            await trx.executeQuery(RELEASE);
            results.push({ ok: false, err });
          }
        }
      });
    } catch (err) {
      // The transaction could not begin or commit: nothing of it is stored.
      if (group.length === 0) group = this.#take();
      for (const item of group) item.reject(fatal ? fatal.err : err);
      return;
    }
    group.forEach((item, i) => {
      const r = results[i]!;
      if (r.ok) item.resolve(r.value);
      else item.reject(r.err);
    });
  }
}
