import type {
  CompiledQuery,
  InsertQueryNode,
  OperationNode,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
  ValuesNode,
} from "kysely";
import type { SyncResultPlugin } from "./sqlite_dialect.ts";

type QueryId = PluginTransformQueryArgs["queryId"];

/** Precompiled job inserts (announceJobInsert), by query id, with their lanes. */
const announced = new WeakMap<QueryId, Set<number>>();

/**
 * Marks a precompiled `insert into jobs` (CompiledQuery.raw, which no plugin
 * sees before it runs) so the JobInsertHook of the database that runs it
 * fires for its lanes as for a built insert. Returns the query.
 */
export function announceJobInsert<R>(
  query: CompiledQuery<R>,
  lanes: Set<number>,
): CompiledQuery<R> {
  announced.set(query.queryId, lanes);
  return query;
}

/**
 * Calls `onInsert` after every `insert into jobs` statement, wherever it runs
 * (a request, a job handler, the fan-out of an event), with the priorities
 * (lanes) of the inserted jobs when it can read them, so only the pools that
 * serve those lanes wake, at once instead of at their next poll. On embedded
 * SQLite the pool's claim then queues behind the open transaction and runs
 * right after its commit; on libSQL a claim that comes too early finds
 * nothing and the poll picks the job up.
 */
export class JobInsertHook implements SyncResultPlugin {
  #inserts = new WeakMap<QueryId, Set<number> | undefined>();
  #onInsert: (lanes: Set<number> | undefined) => void;

  constructor(onInsert: (lanes: Set<number> | undefined) => void) {
    this.#onInsert = onInsert;
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node;
    if (
      node.kind === "InsertQueryNode" &&
      node.into?.table.identifier.name === "jobs"
    ) {
      this.#inserts.set(args.queryId, prioritiesOf(node));
    }
    return node;
  }

  transformResult(
    args: PluginTransformResultArgs,
  ): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(this.transformResultNow(args));
  }

  /** What transformResult() does, without the promise (see SyncResultPlugin). */
  transformResultNow(args: PluginTransformResultArgs): QueryResult<UnknownRow> {
    const lanes = announced.get(args.queryId);
    if (lanes !== undefined) this.#onInsert(lanes);
    else if (this.#inserts.has(args.queryId)) {
      const lanes = this.#inserts.get(args.queryId);
      this.#inserts.delete(args.queryId);
      this.#onInsert(lanes);
    }
    return args.result;
  }
}

/** The `priority` values of an insert's rows, or undefined when they cannot be read. */
function prioritiesOf(node: InsertQueryNode): Set<number> | undefined {
  const at = node.columns?.findIndex((c) => c.column.name === "priority");
  if (at === undefined || at < 0 || node.values?.kind !== "ValuesNode") {
    return undefined;
  }
  const out = new Set<number>();
  for (const row of (node.values as ValuesNode).values) {
    const value: unknown = row.kind === "PrimitiveValueListNode"
      ? row.values[at]
      : valueOf(row.values[at]);
    if (typeof value !== "number") return undefined;
    out.add(value);
  }
  return out;
}

function valueOf(node: OperationNode | undefined): unknown {
  return node?.kind === "ValueNode"
    ? (node as { value?: unknown }).value
    : undefined;
}
