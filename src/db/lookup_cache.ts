import {
  ColumnNode,
  CompiledQuery,
  FromNode,
  type OperationNode,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  TableNode,
  type UnknownRow,
} from "kysely";
import type { Db } from "./schema.ts";
import type { NodeSqliteDatabase, SyncResultPlugin } from "./sqlite_dialect.ts";

const READ_EPOCH = CompiledQuery.raw(
  "select n from cache_epoch where id = 1",
);

/** Entries kept at most; past it the cache starts over (a bound, not an LRU). */
const MAX_ENTRIES = 10_000;

/** Tables whose rows the cache holds (the triggers of migration 0007 watch the same). */
const CACHED_TABLES = new Set(["api_keys", "agents", "channels", "templates"]);

/**
 * In-memory lookups of the hot path (API key -> principal, channel,
 * template), kept exact by one counter in the database.
 *
 * DESIGN. Triggers (migration 0007) bump `cache_epoch.n` on every change to
 * api_keys (but the once-a-minute last_used_at write), agents, channels and
 * templates, whichever process makes it: this server, the admin CLI,
 * another instance. `refresh()` runs once per HTTP request, before the
 * bearer token is resolved, and reads that counter with one precompiled
 * point select; when it moved, every entry is dropped. With
 * `ttlMs` 0 (embedded SQLite) it reads the counter on every request, so a
 * revoke or a channel change is seen by the very next request, as before
 * the cache; there it reads straight on the connection (`direct`, see
 * sqliteEpoch), so it does not queue behind the group commit's open
 * transaction. On libSQL a read is a network round trip, so it reads at most
 * every `ttlMs` (CACHE_TTL_MS, 1 s): a change made by another process is
 * seen within that time; a change made through this process's Db is seen
 * at once (the plugin below drops the entries as the write runs).
 *
 * An entry is kept only if no refresh moved the counter while it was being
 * loaded, so a load that raced a change cannot put the old row back.
 */
export class LookupCache {
  #db: Db;
  #ttlMs: number;
  #now: () => number;
  #direct: DirectEpoch | undefined;
  #entries = new Map<string, unknown>();
  #epoch: number | undefined;
  #checkedAt = -Infinity;
  /** Bumped on every clear: a load started under another generation is not kept. */
  #generation = 0;

  constructor(
    db: Db,
    options: {
      ttlMs: number;
      now?: () => number;
      /** Reads the epoch synchronously (sqliteEpoch); else through `db`. */
      direct?: DirectEpoch | undefined;
    },
  ) {
    this.#db = db;
    this.#ttlMs = options.ttlMs;
    this.#now = options.now ?? (() => performance.now());
    this.#direct = options.direct;
  }

  /**
   * Reads the epoch (when due) and drops every entry if it moved. With
   * `direct`, an epoch that stood still costs no promise: this returns
   * undefined.
   */
  refresh(): Promise<void> | undefined {
    const now = this.#now();
    if (this.#ttlMs > 0 && now - this.#checkedAt < this.#ttlMs) return;
    if (this.#direct) {
      const epoch = this.#direct.read();
      // #epoch only ever holds a committed value, and committed values only
      // grow: an equal read (even inside a transaction) means no change.
      if (epoch === this.#epoch) {
        this.#checkedAt = now;
        return;
      }
      if (this.#direct.committed()) {
        this.#moveTo(epoch, now);
        return;
      }
      // Moved, but maybe by the open transaction, which may yet roll back:
      // drop everything now and learn the committed value after its commit.
      this.clear();
    }
    return this.#db.executeQuery<{ n: number }>(READ_EPOCH).then((result) =>
      this.#moveTo(Number(result.rows[0]?.n ?? 0), now)
    );
  }

  /**
   * Every refresh reads the epoch (`ttlMs` 0): after a refresh the cache
   * holds no change made before it, by any process. With a TTL it may, for
   * up to `ttlMs`, hold what another process changed.
   */
  get exact(): boolean {
    return this.#ttlMs === 0;
  }

  #moveTo(epoch: number, now: number): void {
    if (epoch !== this.#epoch) {
      this.clear();
      this.#epoch = epoch;
    }
    this.#checkedAt = now;
  }

  /** Drops every entry and makes the next refresh read the epoch. */
  clear(): void {
    this.#entries.clear();
    this.#generation++;
    this.#checkedAt = -Infinity;
  }

  /**
   * The cached value of `key`, else `load()`'s, kept when defined. Keys are
   * namespaced by the caller ("channel:<account>:<id>").
   */
  async get<T>(key: string, load: () => Promise<T | undefined>) {
    if (this.#entries.has(key)) return this.#entries.get(key) as T;
    const generation = this.#generation;
    const value = await load();
    if (value !== undefined && generation === this.#generation) {
      if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
      this.#entries.set(key, value);
    }
    return value;
  }
}

/** The epoch read synchronously on the connection that holds the transactions. */
export interface DirectEpoch {
  read(): number;
  /** No transaction is open: what read() gave is committed. */
  committed(): boolean;
}

/**
 * The epoch read on an embedded SQLite connection itself, bypassing Kysely:
 * a root statement through Kysely waits while the group commit holds a
 * transaction open (most of the time under load), so every request's
 * authentication waited for the commit in flight. Inside that transaction
 * the read also sees its uncommitted changes, so refresh() trusts it only
 * when it shows no change (see there).
 */
export function sqliteEpoch(connection: NodeSqliteDatabase): DirectEpoch {
  return {
    read() {
      const rows = connection.prepare(READ_EPOCH.sql).all([]) as {
        n: number;
      }[];
      return Number(rows[0]?.n ?? 0);
    },
    committed: () => !connection.inTransaction,
  };
}

/**
 * Drops the cache's entries whenever this process writes one of the cached
 * tables through Kysely, so its own changes are seen at once on libSQL too
 * (on SQLite the epoch alone would do). Raw SQL is not inspected; the epoch
 * still catches it.
 */
export class LookupInvalidationHook implements SyncResultPlugin {
  #cache: LookupCache;
  #writes = new WeakSet<PluginTransformQueryArgs["queryId"]>();

  constructor(cache: LookupCache) {
    this.#cache = cache;
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const table = writtenTable(args.node);
    if (table && CACHED_TABLES.has(table) && !onlyLastUsed(args.node)) {
      this.#writes.add(args.queryId);
      this.#cache.clear();
    }
    return args.node;
  }

  /** Again once the write ran: a lookup that ran meanwhile may have read the old row. */
  transformResult(
    args: PluginTransformResultArgs,
  ): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(this.transformResultNow(args));
  }

  /** What transformResult() does, without the promise (see SyncResultPlugin). */
  transformResultNow(args: PluginTransformResultArgs): QueryResult<UnknownRow> {
    if (this.#writes.has(args.queryId)) {
      this.#writes.delete(args.queryId);
      this.#cache.clear();
    }
    return args.result;
  }
}

function writtenTable(node: RootOperationNode): string | undefined {
  if (node.kind === "InsertQueryNode") return node.into?.table.identifier.name;
  let target: OperationNode | undefined;
  if (node.kind === "UpdateQueryNode") target = node.table;
  if (node.kind === "DeleteQueryNode") target = node.from.froms[0];
  if (target && FromNode.is(target)) target = target.froms[0];
  return target && TableNode.is(target)
    ? target.table.identifier.name
    : undefined;
}

/** The once-a-minute credential use write, which changes nothing cached. */
function onlyLastUsed(node: RootOperationNode): boolean {
  return node.kind === "UpdateQueryNode" &&
    (node.updates ?? []).every((u) =>
      ColumnNode.is(u.column) && u.column.column.name === "last_used_at"
    );
}
