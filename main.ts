// Composition root: parse the command line, then hand over to the command.
import { runCli } from "./src/cli/run.ts";

if (import.meta.main) {
  Deno.exit(await runCli(Deno.args));
}
