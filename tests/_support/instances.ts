// Another instance of the program on a harness's database (several
// instances on one libSQL server, or a second connection to an SQLite file).
import { loadConfig } from "../../src/config.ts";
import { type Container, createContainer } from "../../src/container.ts";
import { createLogger } from "../../src/log.ts";
import type { Harness } from "../_harness.ts";

/** A second container on `h`'s database, on `h`'s clock (dispose it). */
export function otherInstance(h: Harness): Container {
  return createContainer(
    loadConfig({
      DATA_DIR: h.dir,
      DATABASE_URL: h.container.config.databaseUrl,
      SECRET_KEY: "test-secret-key-0123456789abcdef-0123456789",
      LOG_LEVEL: "silent",
    }),
    { clock: h.clock, log: createLogger("silent") },
  );
}
