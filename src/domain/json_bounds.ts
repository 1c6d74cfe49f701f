import { z } from "zod";

/**
 * Bounds of every free-form JSON field a client may send (flow data, flow
 * action data, contact customFields). The field itself is level 1; every
 * nested object or array adds one. Deeper or larger input would be stored and
 * then break whatever serializes it later (recursion limits), so it is
 * refused at the edge. An inbound message from Meta is held to the depth
 * bound only (its size is bounded by the webhook's 3 MB).
 */
export const MAX_JSON_DEPTH = 32;
/** Largest a free-form JSON field may be, serialized as JSON, in UTF-8 bytes. */
export const MAX_JSON_BYTES = 64 * 1024;

export const JSON_BOUNDS_NOTE =
  `At most ${MAX_JSON_DEPTH} levels of nesting and ${MAX_JSON_BYTES} bytes as JSON`;

/** Nesting depth of a JSON value, walked with an explicit stack; stops once past `limit`. */
export function jsonDepth(value: unknown, limit = Infinity): number {
  let deepest = 0;
  const stack: [object, number][] = [];
  const visit = (v: unknown, depth: number) => {
    if (typeof v === "object" && v !== null) stack.push([v, depth]);
  };
  visit(value, 1);
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (depth > deepest) deepest = depth;
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      visit(child, depth + 1);
    }
  }
  return deepest;
}

/** Why a value nests too deep for the serializers, or null when it does not. */
export function jsonDepthProblem(value: unknown): string | null {
  return jsonDepth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH
    ? `must nest at most ${MAX_JSON_DEPTH} levels deep`
    : null;
}

/** Why a value breaks the bounds, or null when it keeps them. */
export function jsonBoundsProblem(value: unknown): string | null {
  const tooDeep = jsonDepthProblem(value);
  if (tooDeep) return tooDeep;
  // Safe now: the depth is bounded, so the recursive stringify cannot overflow.
  const bytes = new TextEncoder().encode(JSON.stringify(value)).length;
  if (bytes > MAX_JSON_BYTES) {
    return `must be at most ${MAX_JSON_BYTES} bytes as JSON, got ${bytes}`;
  }
  return null;
}

/** Adds a schema issue (at the field's own path) when the value breaks the bounds. */
export function checkJsonBounds(value: unknown, ctx: z.RefinementCtx): void {
  const problem = jsonBoundsProblem(value);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
}

/** A free-form JSON object field, bounded in depth and size. */
export function freeJsonObject() {
  return z.record(z.string(), z.unknown()).superRefine(checkJsonBounds).meta({
    description: `Free-form JSON object. ${JSON_BOUNDS_NOTE}`,
  });
}
