// `deno task bench` lists every benchmark of bench/ and only those.
import assert from "node:assert/strict";
import { BENCHMARKS } from "../../bench/main.ts";

Deno.test("deno task bench lists exactly the benchmarks in bench/", async () => {
  const files: string[] = [];
  for await (
    const e of Deno.readDir(new URL("../../bench/", import.meta.url))
  ) {
    if (e.isFile && e.name.endsWith(".ts") && !e.name.startsWith("_")) {
      files.push(e.name.slice(0, -3));
    }
  }
  assert.deepEqual(
    Object.keys(BENCHMARKS).sort(),
    files.filter((f) => f !== "main").sort(),
  );
});

Deno.test("deno task bench without a name lists the names, one line each", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("../../bench/main.ts", import.meta.url).pathname,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const text = new TextDecoder().decode(out.stdout);
  for (const [name, about] of Object.entries(BENCHMARKS)) {
    assert.match(text, new RegExp(`^  ${name} +${RegExp.escape(about)}$`, "m"));
  }
});
