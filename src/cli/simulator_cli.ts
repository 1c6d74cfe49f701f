import { createLogger, printOut } from "../log.ts";
import { waitForShutdownSignal } from "../lifecycle.ts";
import { startSimulator } from "../simulator/server.ts";
import { optional, parseFlags, UsageError } from "./args.ts";

const DEFAULT_PORT = 9090;

function numberFlag(
  value: string | undefined,
  name: string,
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) {
    throw new UsageError(`Option --${name} must be a number, got "${value}"`);
  }
  return n;
}

/** `simulator [--port P] [--callback-url U] [--app-secret S] [--throughput N]`: the fake Graph API until SIGINT/SIGTERM. */
export async function simulatorCommand(args: string[]): Promise<number> {
  const flags = parseFlags(args, {
    port: "string",
    "callback-url": "string",
    "app-secret": "string",
    throughput: "string",
  });
  const sim = await startSimulator({
    port: numberFlag(optional(flags, "port"), "port") ?? DEFAULT_PORT,
    callbackUrl: optional(flags, "callback-url"),
    appSecret: optional(flags, "app-secret") ?? "dev-app-secret",
    throughputPerSecond: numberFlag(
      optional(flags, "throughput"),
      "throughput",
    ),
    log: createLogger("info", { component: "simulator" }),
  });
  const callbackUrl = sim.state.callbackUrl ?? null;
  printOut(
    flags.json
      ? JSON.stringify({ graphUrl: sim.graphUrl, url: sim.url, callbackUrl })
      : [
        "",
        "Upstream simulator (fake WhatsApp Cloud API)",
        `  Graph URL:     ${sim.graphUrl}   (META_GRAPH_URL)`,
        `  Control API:   ${sim.url}/_sim/{behaviour,messages,reads,callbacks,numbers,inbound,reset}`,
        `  Callback URL:  ${callbackUrl ?? "(none yet; pass --callback-url)"}`,
        "",
      ].join("\n"),
  );
  await waitForShutdownSignal();
  await sim.stop();
  return 0;
}
