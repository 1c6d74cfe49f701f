// Starts scripts/s3rver.ts (a real s3rver that checks SigV4) on a free loopback port in a temp dir.
import { fileURLToPath } from "node:url";

export interface S3rverPeer {
  endpoint: string;
  bucket: string;
  accessKeyId: "S3RVER";
  secretAccessKey: "S3RVER";
  stop(): Promise<void>;
}

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const START_TIMEOUT_MS = 30_000;

export async function startS3rver(): Promise<S3rverPeer> {
  const bucket = "media";
  const dir = await Deno.makeTempDir({ prefix: "s3rver-" });
  // Port 0: the server picks a free port and reports it, so no other process can take it in between.
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "scripts/s3rver.ts",
      "--port",
      "0",
      "--dir",
      dir,
      "--bucket",
      bucket,
    ],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();

  async function stop(): Promise<void> {
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
    await lines.cancel().catch(() => {});
    await child.status;
    await stderr.catch(() => {});
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }

  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error("Timed out waiting for s3rver to start")),
      START_TIMEOUT_MS,
    );
  });
  try {
    const port = await Promise.race([readPort(lines), deadline]);
    return {
      endpoint: `http://127.0.0.1:${port}`,
      bucket,
      accessKeyId: "S3RVER",
      secretAccessKey: "S3RVER",
      stop,
    };
  } catch (err) {
    await stop();
    throw new Error(
      `Cannot start s3rver: ${(err as Error).message}\n${await stderr}`,
    );
  } finally {
    clearTimeout(timer);
  }
}

async function readPort(
  lines: ReadableStreamDefaultReader<string>,
): Promise<number> {
  let seen = "";
  while (true) {
    const { value, done } = await lines.read();
    if (done) throw new Error("s3rver exited before it was listening");
    seen += value;
    const match = /^listening (\d+)$/m.exec(seen);
    if (match) return Number(match[1]);
  }
}
