// deno-lint-ignore-file no-console
/**
 * Builds the inbox panel's browser bundle (src/panel/client) into
 * src/panel/assets/panel.js and panel.css, the files the server embeds with
 * text imports (src/panel/assets.ts). They are committed, so `deno task
 * dev`, `start`, `compile` and a clean clone's `deno check` and tests need
 * no build step; tests/panel/assets_test.ts fails when they are stale.
 *
 *   deno task panel:build          writes them
 *   deno task panel:build --check  exits 1 when they differ from a fresh build
 */
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
export const PANEL_ENTRY = "src/panel/client/main.tsx";
export const PANEL_ASSETS = "src/panel/assets";

/** Bundles the client into `outDir` (absolute): main.js and main.css. */
export async function bundlePanel(outDir: string): Promise<void> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "bundle",
      "--quiet",
      "--platform",
      "browser",
      "--minify",
      "--outdir",
      outDir,
      PANEL_ENTRY,
    ],
    cwd: ROOT,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(
      `Panel bundle failed: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
}

/** The two files a fresh build makes, by their committed name. */
export async function freshPanelAssets(): Promise<Map<string, string>> {
  const dir = await Deno.makeTempDir({ prefix: "bm-panel-" });
  try {
    await bundlePanel(dir);
    return new Map([
      ["panel.js", await Deno.readTextFile(`${dir}/main.js`)],
      ["panel.css", await Deno.readTextFile(`${dir}/main.css`)],
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  const fresh = await freshPanelAssets();
  const check = Deno.args.includes("--check");
  let stale = 0;
  for (const [name, text] of fresh) {
    const path = `${ROOT}${PANEL_ASSETS}/${name}`;
    const current = await Deno.readTextFile(path).catch(() => "");
    if (current === text) continue;
    stale++;
    if (check) console.error(`${PANEL_ASSETS}/${name} is stale`);
    else await Deno.writeTextFile(path, text);
  }
  if (check && stale) {
    console.error("Run `deno task panel:build` and commit the result");
    Deno.exit(1);
  }
  console.log(
    check
      ? "Panel assets are current"
      : `Panel assets written (${stale} changed)`,
  );
}
