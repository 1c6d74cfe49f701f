// Requests generated from the served OpenAPI document: the operation's own
// method, path, query and body most of the time, then broken in every way
// mutate.ts knows, with any method on any path and missing or bad credentials.
import fc from "fast-check";
import type { Operation } from "../../http/_routes.ts";
import { API_PREFIX } from "../../http/_routes.ts";
import { arbitraryOf, type Schema, type SchemaContext } from "./json_schema.ts";
import {
  anyJson,
  junkBody,
  mutatedText,
  type Mutation,
  mutationsArb,
  oddString,
} from "./mutate.ts";
import type { Pool } from "./pool.ts";

export const METHODS = [
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "PATCH",
  "DELETE",
  "OPTIONS",
] as const;

/** A request ready to send; what a finding prints to reproduce it. */
export interface FuzzRequest {
  /** The route: `/contacts/{id}`, `/meta/webhook`. */
  label: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** How a path parameter is filled: a stored row, another tenant's row, any UUID or odd text. */
type Pick =
  | { kind: "real" | "foreign"; index: number }
  | { kind: "text"; value: string };

type Auth =
  | "valid"
  | "none"
  | "empty"
  | "junk"
  | "lowercase"
  | "basic"
  | "extra"
  | "partial"
  | "foreign";

type Body =
  | { kind: "none" }
  | { kind: "json"; value: unknown; mutations: Mutation[] }
  | { kind: "raw"; text: string };

/** Plain data drawn by fast-check; `realize` turns it into a request against the pool. */
export interface Plan {
  op: number;
  method: string;
  params: Pick[];
  query: [string, string | Pick][];
  body: Body;
  contentType: string | null;
  idempotencyKey: string | null;
  auth: Auth;
}

const CONTENT_TYPES = [
  null,
  "text/plain",
  "application/json; charset=utf-16",
  "application/vnd.api+json",
  "multipart/form-data; boundary=x",
  "application/x-www-form-urlencoded",
];

const AUTHS: Auth[] = [
  "none",
  "empty",
  "junk",
  "lowercase",
  "basic",
  "extra",
  "partial",
  "foreign",
];

const pick: fc.Arbitrary<Pick> = fc.oneof(
  {
    arbitrary: fc.record({ kind: fc.constant("real"), index: fc.nat() }),
    weight: 6,
  },
  fc.record({ kind: fc.constant("foreign"), index: fc.nat() }),
  fc.record({ kind: fc.constant("text"), value: fc.uuid() }),
  fc.record({ kind: fc.constant("text"), value: oddString }),
) as fc.Arbitrary<Pick>;

/** Base64 of the UTF-8 text, the usual cursor encoding. */
function base64(text: string): string {
  return btoa(String.fromCharCode(...new TextEncoder().encode(text)));
}

/** Values for one query parameter: its schema's, odd text, wrong types, boundaries, stored cursors. */
function queryValue(
  p: Schema,
  ctx: SchemaContext,
): fc.Arbitrary<string | Pick> {
  const schema = p.schema ?? {};
  const own = arbitraryOf(schema, ctx).map(String);
  const options: fc.WeightedArbitrary<string | Pick>[] = [
    { arbitrary: own, weight: 8 },
    { arbitrary: oddString, weight: 1 },
  ];
  if (schema.type === "integer") {
    const lo = schema.minimum ?? 0;
    const hi = schema.maximum ?? 1_000_000;
    options.push(
      {
        arbitrary: fc.constantFrom(lo - 1, lo, hi, hi + 1, -1, 0, 2 ** 53, 1e21)
          .map(String),
        weight: 1,
      },
      {
        arbitrary: fc.constantFrom(
          "1.5",
          "abc",
          "",
          " 1",
          "0x10",
          "1e2",
          "Infinity",
        ),
        weight: 1,
      },
    );
  }
  if (p.name === "cursor") {
    const cursors: fc.Arbitrary<string | Pick>[] = [
      fc.record({ kind: fc.constant("real" as const), index: fc.nat() }),
      fc.record({ kind: fc.constant("foreign" as const), index: fc.nat() }),
      anyJson.map((v) => base64(JSON.stringify(v) ?? "")),
      fc.base64String({ maxLength: 64 }),
    ];
    options.push(...cursors.map((arbitrary) => ({ arbitrary, weight: 2 })));
  }
  return fc.oneof(...options);
}

/** The fuzz plan arbitrary for every operation of the document. */
export function planArbitrary(
  ops: Operation[],
  ctx: SchemaContext,
): fc.Arbitrary<Plan> {
  return fc.oneof(...ops.map((op, index) => opPlan(op, index, ctx)));
}

function opPlan(op: Operation, index: number, ctx: SchemaContext) {
  const params = (op.op.parameters ?? []) as Schema[];
  const queryArbs = params.filter((p) => p.in === "query").map((p) =>
    fc.option(fc.tuple(fc.constant(p.name as string), queryValue(p, ctx)), {
      freq: 2,
    })
  );
  const unknownQuery = fc.oneof(
    { arbitrary: fc.constant([]), weight: 9 },
    fc.array(
      fc.tuple(
        fc.oneof(fc.constantFrom("foo", "limit", "cursor"), oddString),
        oddString,
      ),
      { minLength: 1, maxLength: 2 },
    ),
  );
  const schema = op.op.requestBody?.content?.["application/json"]?.schema;
  const json = schema
    ? fc.record({
      kind: fc.constant("json" as const),
      value: arbitraryOf(schema, ctx),
      mutations: mutationsArb(3),
    })
    : fc.record({
      kind: fc.constant("json" as const),
      value: anyJson,
      mutations: fc.constant([] as Mutation[]),
    });
  const body: fc.Arbitrary<Body> = fc.oneof(
    {
      arbitrary: schema ? json : fc.constant({ kind: "none" as const }),
      weight: 12,
    },
    {
      arbitrary: schema ? fc.constant({ kind: "none" as const }) : json,
      weight: 1,
    },
    {
      arbitrary: fc.record({
        kind: fc.constant("raw" as const),
        text: junkBody,
      }),
      weight: 1,
    },
  );
  return fc.record({
    op: fc.constant(index),
    method: fc.oneof(
      { arbitrary: fc.constant(op.method), weight: 12 },
      fc.constantFrom(...METHODS),
    ),
    params: fc.tuple(...op.pathParams.map(() => pick)),
    query: fc.tuple(fc.tuple(...queryArbs), unknownQuery).map(([known, more]) =>
      [...known.filter((q) => q !== null), ...more] as [string, string | Pick][]
    ),
    body,
    contentType: fc.oneof(
      { arbitrary: fc.constant("application/json"), weight: 12 },
      fc.constantFrom(...CONTENT_TYPES),
    ),
    idempotencyKey: op.label.startsWith("POST /messages")
      ? fc.option(fc.oneof(fc.constantFrom("k1", "k2", "k3"), oddString), {
        freq: 2,
      })
      : fc.constant(null),
    auth: fc.oneof(
      { arbitrary: fc.constant("valid" as const), weight: 24 },
      fc.constantFrom(...AUTHS),
    ),
  });
}

/** Header values must be Latin-1 without line breaks; anything else becomes its URI encoding. */
function headerSafe(value: string): string {
  if (/^[\x20-\x7e\x80-\xff]*$/.test(value)) return value;
  return encodeURIComponent(value.replace(/[\uD800-\uDFFF]/g, "?"));
}

/** Path segments keep odd text, including invalid percent escapes. */
function segment(value: string): string {
  if (/^%[0-9a-z]{0,2}$/i.test(value) || value.startsWith("%2e")) return value;
  return encodeURIComponent(value.replace(/[\uD800-\uDFFF]/g, "\uFFFD"));
}

/** Turns a plan into a request against the current pool of stored rows. */
export function realize(plan: Plan, ops: Operation[], pool: Pool): FuzzRequest {
  const op = ops[plan.op]!;
  let i = 0;
  const path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const choice = plan.params[i++]!;
    const value = choice.kind === "text"
      ? choice.value
      : pool.value(op, name, choice.kind === "foreign", choice.index);
    return segment(value);
  });
  const query = new URLSearchParams();
  for (const [name, value] of plan.query) {
    const text = typeof value === "string"
      ? value
      : value.kind === "text"
      ? value.value
      : pool.cursor(value.kind === "foreign", value.index);
    query.append(name, text.replace(/[\uD800-\uDFFF]/g, "\uFFFD"));
  }
  const headers: Record<string, string> = {};
  const auth = pool.authorization(plan.auth, plan.op);
  if (auth !== null) headers.authorization = headerSafe(auth);
  if (plan.idempotencyKey !== null) {
    headers["idempotency-key"] = headerSafe(plan.idempotencyKey);
  }
  let body: string | undefined;
  if (plan.body.kind === "json") {
    body = mutatedText(plan.body.value, plan.body.mutations);
  } else if (plan.body.kind === "raw") body = plan.body.text;
  if (body !== undefined && plan.contentType !== null) {
    headers["content-type"] = plan.contentType;
  }
  const qs = query.size ? `?${query}` : "";
  return {
    label: op.path,
    method: plan.method,
    url: API_PREFIX + path + qs,
    headers,
    ...(body === undefined || plan.method === "GET" || plan.method === "HEAD"
      ? {}
      : { body }),
  };
}
