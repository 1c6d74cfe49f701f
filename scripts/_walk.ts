/** Yields every .ts file under a folder, sorted. */
export async function* walk(dir: string): AsyncGenerator<string> {
  const entries = [];
  for await (const e of Deno.readDir(dir)) entries.push(e);
  entries.sort((a, b) => a.name.localeCompare(b.name));
  for (const e of entries) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) yield* walk(path);
    else if (e.name.endsWith(".ts")) yield path;
  }
}
