import { loadConfig, readEnv } from "../config.ts";
import { createContainer } from "../container.ts";
import { migrateToLatest } from "../db/migrator.ts";
import { createApp } from "../http/app.ts";
import { serve, waitForShutdownSignal } from "../lifecycle.ts";
import { prepareDev, writeDevCredentials } from "./dev.ts";

/** `serve`: production mode with the configuration from the environment. */
export async function serveCommand(_args: string[]): Promise<number> {
  const config = loadConfig(readEnv());
  await using container = createContainer(config);
  await migrateToLatest(container.db);
  const app = createApp(container);
  const running = serve(container, app);
  const signal = await waitForShutdownSignal();
  container.log.info("Shutting down", { signal });
  await running.stop();
  return 0;
}

/** `dev`: embedded SQLite under DATA_DIR, a demo account, and credentials written for scripts. */
export async function devCommand(_args: string[]): Promise<number> {
  const env = readEnv();
  const config = await prepareDev(env);
  await using container = createContainer(config);
  await migrateToLatest(container.db);
  const app = createApp(container);
  const running = serve(container, app);
  await writeDevCredentials(container, running.port);
  const signal = await waitForShutdownSignal();
  container.log.info("Shutting down", { signal });
  await running.stop();
  return 0;
}
