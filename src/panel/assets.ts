// The panel's browser bundle, embedded in the program as text (built by
// `deno task panel:build` from src/panel/client; see scripts/build_panel.ts),
// so dev, start and compile serve it with nothing fetched from elsewhere.
import js from "./assets/panel.js" with { type: "text" };
import css from "./assets/panel.css" with { type: "text" };
import { sha256HexSync } from "../crypto.ts";

export interface PanelAsset {
  /** `panel.<hash>.js`: a new build gets a new name, so it can be cached for good. */
  name: string;
  type: string;
  body: Uint8Array;
  /** The body gzipped, made on first use. */
  gzipped?: Uint8Array;
}

function asset(base: string, ext: string, type: string, text: string) {
  const body = new TextEncoder().encode(text);
  const hash = sha256HexSync(body).slice(0, 12);
  return { name: `${base}.${hash}.${ext}`, type, body };
}

/** The script and the stylesheet, named by content hash. */
export function panelAssets(): { js: PanelAsset; css: PanelAsset } {
  return {
    js: asset("panel", "js", "text/javascript; charset=utf-8", js),
    css: asset("panel", "css", "text/css; charset=utf-8", css),
  };
}
