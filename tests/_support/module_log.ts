/**
 * The ES modules V8 loaded in a process run with `deno run -L debug`, read
 * from its log (a code cache hit or a fresh compile names each one).
 */
export function loadedModules(log: string): string[] {
  const found = log.matchAll(
    /(?:V8 code cache hit for|Updating V8 code cache for) ES module: ([^\s,]+)/g,
  );
  return [...new Set([...found].map((m) => m[1]!))];
}
