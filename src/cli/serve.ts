import { assertServeConfig, loadConfig, readEnv } from "../config.ts";
import { createContainer } from "../container.ts";
import { migrateToLatest } from "../db/migrator.ts";
import { createApp } from "../http/app.ts";
import { serve, startBackground, waitForShutdownSignal } from "../lifecycle.ts";
import { createLogger } from "../log.ts";
import { startSimulator } from "../simulator/server.ts";
import { devMetaAppSecret, prepareDev, writeDevCredentials } from "./dev.ts";
import { connectDemoSocial } from "./social_cli.ts";

/** `serve`: production mode with the configuration from the environment. */
export async function serveCommand(_args: string[]): Promise<number> {
  const config = loadConfig(readEnv());
  await using container = createContainer(config);
  assertServeConfig(config);
  await migrateToLatest(container.db);
  const running = serve(
    container,
    createApp(container),
    startBackground(container),
  );
  const signal = await waitForShutdownSignal();
  container.log.info("Shutting down", { signal });
  await running.stop();
  return 0;
}

/**
 * `dev`: embedded SQLite under DATA_DIR, the upstream simulator in-process
 * (the demo channel points at it), a demo account, and credentials written
 * for scripts.
 */
export async function devCommand(_args: string[]): Promise<number> {
  const env = readEnv();
  const appSecret = await devMetaAppSecret(env);
  const simulator = await startSimulator({
    port: Number(env.SIMULATOR_PORT ?? 0),
    appSecret,
    log: createLogger((env.LOG_LEVEL as "info" | undefined) ?? "info", {
      component: "simulator",
    }),
  });
  const config = await prepareDev({
    ...env,
    META_APP_SECRET: appSecret,
    META_GRAPH_URL: simulator.graphUrl,
  });
  await using container = createContainer(config);
  await migrateToLatest(container.db);
  const running = serve(container, createApp(container), [
    ...startBackground(container),
    { name: "simulator", stop: () => simulator.stop() },
  ]);
  simulator.setCallbackUrl(`http://127.0.0.1:${running.port}/meta/webhook`);
  const credentials = await writeDevCredentials(container, running.port, {
    simulatorUrl: simulator.url,
  });
  await registerSimulatorNumber(simulator.url, credentials);
  await connectDemoSocial(container, simulator.state, credentials.accountId);
  const signal = await waitForShutdownSignal();
  container.log.info("Shutting down", { signal });
  await running.stop();
  return 0;
}

async function registerSimulatorNumber(
  simulatorUrl: string,
  credentials: { phoneNumber: string; upstreamPhoneNumberId: string },
): Promise<void> {
  const res = await fetch(`${simulatorUrl}/_sim/numbers`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      phoneNumberId: credentials.upstreamPhoneNumberId,
      displayPhoneNumber: credentials.phoneNumber,
    }),
  });
  await res.body?.cancel();
}
