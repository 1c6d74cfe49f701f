// Ways to break a valid JSON value or body: wrong types, missing and unknown
// fields, boundary lengths, odd Unicode, deep and huge JSON, junk text.
import fc from "fast-check";

// deno-lint-ignore no-explicit-any
type Json = any;

/** Strings that have broken parsers, databases and loggers before. */
const ODD_STRINGS = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\uD800",
  "\uDC00x",
  "\uFEFF",
  "\u202Eevil",
  "\u2028\u2029",
  "e\u0301\u0301\u0301",
  "👩‍👩‍👧‍👦",
  "🏳️‍🌈",
  "%",
  "%zz",
  "%00",
  "%2e%2e%2f",
  "../../etc/passwd",
  "' OR 1=1 --",
  '"; DROP TABLE contacts; --',
  "<script>alert(1)</script>",
  "${jndi:ldap://x}",
  "null",
  "undefined",
  "NaN",
  "-0",
  "1e309",
  "0x10",
  "９９",
  "+",
  "++5491155",
  "+00000000000000000000",
  "+5491155000000000000000000000",
  "Ω".repeat(257),
  "x".repeat(4097),
];

/** Odd text: a known troublemaker, any code points (lone surrogates too) or a boundary length. */
export const oddString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...ODD_STRINGS), weight: 4 },
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.constantFrom(0, 1, 31, 32, 63, 64, 65, 100, 101, 128, 129, 256, 257)
    .chain((n) => fc.constantFrom("a", "é", "😀").map((c) => c.repeat(n))),
  fc.constantFrom(512, 513, 1024, 1025, 2048, 2049, 4096, 4097, 65_536)
    .map((n) => "z".repeat(n)),
);

/** A value of some JSON type, to put where another type is expected. */
export const anyJson: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, -1e308, "", [], {}),
  fc.integer(),
  oddString,
  fc.jsonValue({ maxDepth: 3 }),
);

export type Mutation =
  | { kind: "drop"; at: number }
  | { kind: "retype"; at: number; value: Json }
  | { kind: "add"; at: number; key: string; value: Json }
  | { kind: "text"; at: number; value: string }
  | { kind: "bomb"; at: number; shape: BombShape; size: number };

type BombShape =
  | "deep-array"
  | "deep-object"
  | "wide-object"
  | "long-array"
  | "long-string";

const MAX_BOMB_DEPTH = 2_000;

/** A deep or huge value, built when applied so fast-check never holds or shrinks it. */
function bomb(shape: BombShape, size: number): Json {
  switch (shape) {
    case "deep-array":
    case "deep-object": {
      // Deeper than this, JSON.stringify in the fuzzer itself runs out of stack.
      let v: Json = 1;
      for (let i = 0; i < Math.min(size, MAX_BOMB_DEPTH); i++) {
        v = shape === "deep-array" ? [v] : { a: v };
      }
      return v;
    }
    case "wide-object":
      return Object.fromEntries(
        Array.from({ length: size }, (_, i) => [`k${i}`, i]),
      );
    case "long-array":
      return Array.from({ length: size }, (_, i) => i);
    default:
      return "w".repeat(size * 16);
  }
}

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("drop" as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant("retype" as const),
    at: fc.nat(),
    value: anyJson,
  }),
  fc.record({
    kind: fc.constant("add" as const),
    at: fc.nat(),
    key: fc.oneof(fc.string({ maxLength: 10 }), oddString),
    value: anyJson,
  }),
  fc.record({
    kind: fc.constant("text" as const),
    at: fc.nat(),
    value: oddString,
  }),
  fc.record({
    kind: fc.constant("bomb" as const),
    at: fc.nat(),
    shape: fc.constantFrom<BombShape>(
      "deep-array",
      "deep-object",
      "wide-object",
      "long-array",
      "long-string",
    ),
    size: fc.constantFrom(64, 65, 1_000, 2_000, 20_000),
  }),
);

/** No mutation most of the time (the request must reach the handler), else one to three. */
export function mutationsArb(
  cleanWeight: number,
): fc.Arbitrary<Mutation[]> {
  return fc.oneof(
    { arbitrary: fc.constant([] as Mutation[]), weight: cleanWeight },
    {
      arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }),
      weight: 2,
    },
  );
}

/** Paths of every node under the root (the root itself is the empty path). */
function nodePaths(value: Json, prefix: string[] = [], out: string[][] = []) {
  out.push(prefix);
  // Below 32 levels is bomb territory: mutating inside it adds nothing.
  if (value && typeof value === "object" && prefix.length < 32) {
    for (const key of Object.keys(value)) {
      nodePaths(value[key], [...prefix, key], out);
    }
  }
  return out;
}

/** The JSON text of a mutated value (`null` when the value became undefined). */
export function mutatedText(value: Json, mutations: Mutation[]): string {
  return JSON.stringify(applyMutations(value, mutations)) ?? "null";
}

/** Applies the mutations in order to a copy of `value`; `at` picks a node modulo their count. */
export function applyMutations(value: Json, mutations: Mutation[]): Json {
  let root = structuredClone(value);
  for (const step of mutations) {
    // Generated values (and fast-check's shared constants such as `{}`) go in
    // as copies: later mutations must never grow the plan they came from.
    const m = step.kind === "bomb"
      ? {
        kind: "retype" as const,
        at: step.at,
        value: bomb(step.shape, step.size),
      }
      : "value" in step
      ? { ...step, value: structuredClone(step.value) }
      : step;
    const paths = nodePaths(root);
    const path = paths[m.at % paths.length]!;
    if (path.length === 0) {
      if (m.kind === "retype") root = m.value;
      else if (m.kind === "text") root = m.value;
      else if (m.kind === "add" && root && typeof root === "object") {
        root[m.key] = m.value;
      }
      continue;
    }
    let parent = root;
    for (const key of path.slice(0, -1)) parent = parent[key];
    const key = path[path.length - 1]!;
    if (m.kind === "drop") {
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else delete parent[key];
    } else if (m.kind === "retype") parent[key] = m.value;
    else if (m.kind === "text") parent[key] = m.value;
    else if (parent[key] && typeof parent[key] === "object") {
      parent[key][m.key] = m.value;
    } else parent[m.key] = m.value;
  }
  return root;
}

/** Bodies no schema expects: deep nesting, sizes around the body limit, broken JSON. */
export const junkBody: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: 100, max: 200_000 }).map((n) =>
    "[".repeat(n) + "]".repeat(n)
  ),
  fc.integer({ min: 100, max: 50_000 }).map((n) =>
    '{"a":'.repeat(n) + "1" + "}".repeat(n)
  ),
  fc.constantFrom(1024 * 1024 - 64, 1024 * 1024 + 1, 3 * 1024 * 1024).map(
    (n) => JSON.stringify({ text: { body: "x".repeat(n) } }),
  ),
  fc.integer({ min: 1_000, max: 100_000 }).map((n) =>
    JSON.stringify({ messages: Array.from({ length: n }, (_, i) => i) })
  ),
  fc.constantFrom(
    "",
    "{",
    '{"a":1',
    "nul",
    "null",
    "[]",
    "0",
    '"text"',
    "{}{}",
    '{"__proto__":{"admin":true}}',
    '{"constructor":{"prototype":{"x":1}}}',
    '{"a":1,"a":2}',
    "\uFEFF{}",
    '{"x":"\\ud800"}',
    '{"n":1e999999}',
    '{"n":-0.0e-999999}',
  ),
  fc.string({ unit: "binary", maxLength: 64 }),
);
