// Valid-looking values for a JSON Schema of the served OpenAPI document:
// the fuzzer starts from these and mutates them (mutate.ts), so most
// requests get past the first validation and reach the handlers.
import fc from "fast-check";

// deno-lint-ignore no-explicit-any
export type Schema = any;
type Arb = fc.Arbitrary<unknown>;

/** Values to prefer for a property name (real ids, numbers, names of the seeded rows). */
export type Hints = Record<string, readonly unknown[]>;

export interface SchemaContext {
  /** `components.schemas` of the document, for `$ref`. */
  components: Record<string, Schema>;
  hints: Hints;
}

const MAX_DEPTH = 6;

/** An arbitrary of values that mostly satisfy `schema` (hinted properties take real values). */
export function arbitraryOf(
  schema: Schema,
  ctx: SchemaContext,
  depth = 0,
): Arb {
  if (!schema || typeof schema !== "object" || depth > MAX_DEPTH) {
    return fc.jsonValue({ maxDepth: 2 });
  }
  if (schema.$ref) {
    const name = String(schema.$ref).split("/").pop()!;
    return arbitraryOf(ctx.components[name], ctx, depth + 1);
  }
  const choices = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(choices)) {
    return fc.oneof(
      ...choices.map((s: Schema) => arbitraryOf(s, ctx, depth + 1)),
    );
  }
  if (Array.isArray(schema.allOf)) {
    return arbitraryOf(Object.assign({}, ...schema.allOf), ctx, depth + 1);
  }
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const types: string[] = Array.isArray(schema.type)
    ? schema.type
    : schema.type
    ? [schema.type]
    : schema.properties
    ? ["object"]
    : [];
  if (types.length === 0) return fc.jsonValue({ maxDepth: 2 });
  return fc.oneof(...types.map((t) => typed(t, schema, ctx, depth)));
}

function typed(
  type: string,
  schema: Schema,
  ctx: SchemaContext,
  depth: number,
): Arb {
  switch (type) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "integer":
      return fc.integer({
        min: schema.minimum ?? -1_000,
        max: schema.maximum ?? 1_000_000,
      });
    case "number":
      return fc.double({
        min: schema.minimum ?? -1e6,
        max: schema.maximum ?? 1e6,
        noNaN: true,
      });
    case "string":
      return stringOf(schema);
    case "array":
      return fc.array(arbitraryOf(schema.items, ctx, depth + 1), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.min(schema.maxItems ?? 4, 4),
      });
    case "object":
      return objectOf(schema, ctx, depth);
    default:
      return fc.jsonValue({ maxDepth: 1 });
  }
}

function stringOf(schema: Schema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.min(schema.maxLength ?? 40, 40);
  switch (schema.format) {
    case "uuid":
      return fc.uuid();
    case "date-time":
      return fc.date({
        min: new Date("2020-01-01"),
        max: new Date("2030-01-01"),
        noInvalidDate: true,
      }).map((d) => d.toISOString());
    case "uri":
      return fc.webUrl();
    case "email":
      return fc.emailAddress();
  }
  if (schema.pattern) {
    return fc.stringMatching(new RegExp(schema.pattern)).filter((s) =>
      s.length >= minLength && s.length <= (schema.maxLength ?? Infinity)
    );
  }
  return fc.string({ minLength, maxLength: Math.max(minLength, maxLength) });
}

function objectOf(schema: Schema, ctx: SchemaContext, depth: number): Arb {
  const properties: Record<string, Schema> = schema.properties ?? {};
  const required = new Set<string>(schema.required ?? []);
  const record: Record<string, Arb> = {};
  for (const [name, sub] of Object.entries(properties)) {
    const own = arbitraryOf(sub, ctx, depth + 1);
    const hint = ctx.hints[name];
    // Real values most of the time, so a send reaches the channel and template checks.
    record[name] = hint?.length
      ? fc.oneof({ arbitrary: fc.constantFrom(...hint), weight: 8 }, own)
      : own;
  }
  const extra = schema.additionalProperties;
  const free = extra && typeof extra === "object" && !schema.properties
    ? fc.dictionary(
      fc.string({ minLength: 1, maxLength: 12 }),
      arbitraryOf(extra, ctx, depth + 1),
      { maxKeys: 3 },
    )
    : fc.constant({});
  return fc.tuple(
    fc.record(record, {
      requiredKeys: [...required].filter((k) => k in record),
    }),
    free,
  ).map(([known, more]) => ({ ...more, ...known }));
}
