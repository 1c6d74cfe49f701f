// What a `dev` process tells its user: dev-credentials.json, once its demo
// number is registered at its simulator.
import type { DevCredentials } from "../../src/cli/dev.ts";
import { waitFor } from "../_support/wait.ts";
import { type ServerProcess, simGet } from "./_process.ts";

/** dev-credentials.json as the program writes it (dev mode always has its simulator). */
export type Credentials = DevCredentials & { simulatorUrl: string };

/** Waits until this dev process wrote its credentials and registered the demo number at its simulator. */
export async function credentialsOf(
  server: ServerProcess,
): Promise<Credentials> {
  await waitFor(() => server.proc.stdout.includes("(dev mode)"), {
    timeoutMs: 30_000,
    what: "the dev banner",
  }).catch((err) => {
    throw new Error(`${err.message}\n${server.output()}`);
  });
  const credentials: Credentials = JSON.parse(
    await Deno.readTextFile(`${server.dataDir}/dev-credentials.json`),
  );
  await waitFor(async () => {
    const { numbers } = await simGet(credentials.simulatorUrl, "numbers");
    return numbers.some((n: { displayPhoneNumber: string }) =>
      `+${n.displayPhoneNumber}` === credentials.phoneNumber
    );
  }, { timeoutMs: 10_000, what: "the demo number at the simulator" });
  return credentials;
}
