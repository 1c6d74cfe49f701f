/**
 * NUL (U+0000) in text. node:sqlite reads TEXT only up to its first NUL, so a
 * string holding one is stored whole and read back cut ("r\u0000s" comes back
 * "r"; libSQL keeps it). Every edge keeps NUL out of the database: what a
 * client sends is refused naming the field (nulPath), what Meta sends has it
 * replaced with U+FFFD (parseJsonWithoutNul), as a lone surrogate already is.
 */

export const NUL = "\u0000";

/** The problem, said after the field's path. */
export const NUL_PROBLEM = "must not contain a NUL character (U+0000)";

/** A path segment as a message shows it: a NUL in a key is written `\u0000`. */
function segment(key: string | number): string | number {
  return typeof key === "string" ? key.replaceAll(NUL, "\\u0000") : key;
}

/**
 * The path (object keys and array indexes) to the first string, or object
 * key, that holds a NUL in a JSON value, or null when none does. Walked with
 * an explicit stack, so any nesting the JSON parser accepted is fine; the
 * path of a key is the key itself.
 */
export function nulPath(value: unknown): (string | number)[] | null {
  return hasNul(value) ? firstNulPath(value) : null;
}

/**
 * Whether a string or key of a JSON value holds a NUL: the common answer,
 * no, without building paths (a send's body costs well under a microsecond).
 */
function hasNul(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "string") {
      if (v.includes(NUL)) return true;
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push(v[i]);
    } else if (typeof v === "object" && v !== null) {
      for (const k of Object.keys(v)) {
        if (k.includes(NUL)) return true;
        stack.push((v as Record<string, unknown>)[k]);
      }
    }
  }
  return false;
}

/** A value met on the walk, with the way back to the root (so a path is built only on a hit). */
interface Step {
  value: unknown;
  key: string | number;
  parent: Step | null;
}

function pathTo(step: Step | null, last?: string | number) {
  const path: (string | number)[] = last === undefined ? [] : [last];
  for (let s = step; s?.parent; s = s.parent) path.push(s.key);
  return path.reverse();
}

function firstNulPath(value: unknown): (string | number)[] | null {
  const stack: Step[] = [{ value, key: "", parent: null }];
  while (stack.length > 0) {
    const step = stack.pop()!;
    const v = step.value;
    if (typeof v === "string") {
      if (v.includes(NUL)) return pathTo(step);
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push({ value: v[i], key: i, parent: step });
      }
    } else if (typeof v === "object" && v !== null) {
      const keys = Object.keys(v);
      const bad = keys.find((k) => k.includes(NUL));
      if (bad !== undefined) return pathTo(step, segment(bad));
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i]!;
        stack.push({
          value: (v as Record<string, unknown>)[k],
          key: k,
          parent: step,
        });
      }
    }
  }
  return null;
}

/** `text` with each NUL replaced by U+FFFD. */
export function replaceNul(text: string): string {
  return text.includes(NUL) ? text.replaceAll(NUL, "\uFFFD") : text;
}

/**
 * JSON text parsed with every NUL in its strings and keys replaced by U+FFFD
 * (for what Meta sends: it is stored, never refused). JSON writes a NUL only
 * as the escape `\u0000`, so text without one is parsed as is.
 */
export function parseJsonWithoutNul(text: string): unknown {
  const value = JSON.parse(text);
  return text.includes("\\u0000") ? withoutNul(value) : value;
}

/** A JSON value rebuilt with U+FFFD for each NUL in its strings and keys (iterative: any depth). */
function withoutNul(value: unknown): unknown {
  const root = { value };
  const stack: [Record<string, unknown> | unknown[], string | number][] = [[
    root,
    "value",
  ]];
  while (stack.length > 0) {
    const [holder, key] = stack.pop()!;
    const v = (holder as Record<string | number, unknown>)[key];
    if (typeof v === "string") {
      (holder as Record<string | number, unknown>)[key] = replaceNul(v);
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push([v, i]);
    } else if (typeof v === "object" && v !== null) {
      // fromEntries defines each key (JSON's "__proto__" stays a key).
      const copy: Record<string, unknown> = Object.fromEntries(
        Object.entries(v).map(([k, child]) => [replaceNul(k), child]),
      );
      (holder as Record<string | number, unknown>)[key] = copy;
      for (const k of Object.keys(copy)) stack.push([copy, k]);
    }
  }
  return root.value;
}

/** An integer literal JSON.parse would round (17841400000000001 reads 17841400000000000). */
function exactInteger(
  _key: string,
  value: unknown,
  context?: { source?: string },
): unknown {
  return typeof value === "number" && !Number.isSafeInteger(value) &&
      context?.source !== undefined && /^-?\d+$/.test(context.source)
    ? context.source
    : value;
}

/**
 * parseJsonWithoutNul() keeping integers past 2^53 exact: each one is read
 * from the raw text as a string (Meta's ids, such as a webhook's
 * message_template_id, can exceed what a number holds).
 */
export function parseJsonExact(text: string): unknown {
  // The reviver's third argument (the source text) is V8's, not yet in lib.dom.
  const value = JSON.parse(
    text,
    exactInteger as (key: string, value: unknown) => unknown,
  );
  return text.includes("\\u0000") ? withoutNul(value) : value;
}

/** JSON.rawJSON (V8), not yet in the TypeScript lib. */
const rawJson = (JSON as unknown as { rawJSON(text: string): unknown })
  .rawJSON;

/**
 * JSON text parsed so that stringifying a part of it writes every number
 * exactly as the text did (digits past 2^53 included): for storing a part
 * of what Meta sent as it was sent. A NUL in a string value becomes U+FFFD
 * (a key keeps it: this is for storage as JSON text, never read back as
 * SQLite text keys).
 */
export function parseJsonVerbatim(text: string): unknown {
  return JSON.parse(
    text,
    ((_key: string, v: unknown, context?: { source?: string }) =>
      typeof v === "number" && context?.source !== undefined
        ? rawJson(context.source)
        : typeof v === "string"
        ? replaceNul(v)
        : v) as (key: string, value: unknown) => unknown,
  );
}
