import { assertServeConfig, loadConfig, readEnv } from "../config.ts";
import { createContainer } from "../container.ts";
import { migrateToLatest } from "../db/migrator.ts";
import { createApp } from "../http/app.ts";
import { serve, startBackground, waitForShutdownSignal } from "../lifecycle.ts";
import { createLogger } from "../log.ts";

/** `serve`: production mode with the configuration from the environment. */
export async function serveCommand(_args: string[]): Promise<number> {
  const config = loadConfig(readEnv());
  await using container = createContainer(config);
  assertServeConfig(config);
  if (container.engine === "libsql" && config.mediaStore.startsWith("file:")) {
    // Several instances share the database, not this machine's disk.
    container.log.warn(
      "Media is stored on this machine's disk while the database is shared: with several instances, set MEDIA_STORE to an s3:// store",
      { mediaStore: config.mediaStore },
    );
  }
  await migrateToLatest(container.db, { libsql: container.dbBatch });
  const running = serve(
    container,
    createApp(container, { mode: "serve" }),
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
  // Imported here, so serve never loads the simulator or the dev setup.
  const [{ startSimulator }, dev, { connectDemoSocial }] = await Promise.all([
    import("../simulator/server.ts"),
    import("./dev.ts"),
    import("./social_cli.ts"),
  ]);
  const env = readEnv();
  const appSecret = await dev.devMetaAppSecret(env);
  const simulator = await startSimulator({
    port: Number(env.SIMULATOR_PORT ?? 0),
    appSecret,
    log: createLogger((env.LOG_LEVEL as "info" | undefined) ?? "info", {
      component: "simulator",
    }),
  });
  const config = await dev.prepareDev({
    ...env,
    META_APP_SECRET: appSecret,
    META_GRAPH_URL: simulator.graphUrl,
  });
  await using container = createContainer(config);
  await migrateToLatest(container.db, { libsql: container.dbBatch });
  const running = serve(container, createApp(container, { mode: "dev" }), [
    ...startBackground(container),
    { name: "simulator", stop: () => simulator.stop() },
  ]);
  simulator.setCallbackUrl(`http://127.0.0.1:${running.port}/meta/webhook`);
  // The demo number exists at "Meta" before the channel is connected from it.
  await registerSimulatorNumber(simulator.url, {
    phoneNumber: dev.DEMO_PHONE,
    upstreamPhoneNumberId: dev.DEMO_UPSTREAM_PHONE_NUMBER_ID,
    wabaId: dev.DEMO_WABA_ID,
  });
  const credentials = await dev.writeDevCredentials(container, running.port, {
    simulatorUrl: simulator.url,
  });
  if (credentials.upstreamPhoneNumberId !== dev.DEMO_UPSTREAM_PHONE_NUMBER_ID) {
    await registerSimulatorNumber(simulator.url, {
      ...credentials,
      wabaId: dev.DEMO_WABA_ID,
    });
  }
  await dev.seedDemoConversations(container, simulator.url, credentials);
  await connectDemoSocial(container, simulator.state, credentials.accountId);
  const signal = await waitForShutdownSignal();
  container.log.info("Shutting down", { signal });
  await running.stop();
  return 0;
}

async function registerSimulatorNumber(
  simulatorUrl: string,
  number: {
    phoneNumber: string;
    upstreamPhoneNumberId: string;
    wabaId: string;
  },
): Promise<void> {
  const res = await fetch(`${simulatorUrl}/_sim/numbers`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      phoneNumberId: number.upstreamPhoneNumberId,
      displayPhoneNumber: number.phoneNumber,
      wabaId: number.wabaId,
    }),
  });
  await res.body?.cancel();
}
