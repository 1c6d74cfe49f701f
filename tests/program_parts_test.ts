// ProgramParts: a failed import marks the process broken until that part
// loads; once() keeps a loaded part and tries a failed one again.
import assert from "node:assert/strict";
import { createLogger } from "../src/log.ts";
import { isPartMissing, ProgramParts } from "../src/program_parts.ts";

// A real import that fails, as a chunk deleted under the server does.
const gone = new URL("./no_such_part.ts", import.meta.url).href;

Deno.test("once() answers the loaded part on every call and tries a failed one again", async () => {
  const parts = new ProgramParts(createLogger("silent"));
  let imports = 0;
  const part = parts.once("a part", () => {
    imports++;
    return imports === 1 ? import(gone) : Promise.resolve({ value: 42 });
  });
  await assert.rejects(part(), (err) => isPartMissing(err));
  assert.equal(parts.broken, true);
  assert.deepEqual(await part(), { value: 42 });
  assert.deepEqual(await part(), { value: 42 });
  assert.equal(imports, 2);
  assert.equal(parts.broken, false);
  // Only what ProgramParts threw counts as a missing part.
  assert.equal(isPartMissing(new Error("x")), false);
});
