// The panel's bundle is committed (src/panel/assets) so dev, start, compile
// and a clean clone's check and tests need no build step: this fails when it
// is stale, and checks what the server embeds and serves.
import assert from "node:assert/strict";
import { freshPanelAssets, PANEL_ASSETS } from "../../scripts/build_panel.ts";
import { createHarness } from "../_harness.ts";
import { panelAssets } from "../../src/panel/assets.ts";

const ROOT = new URL("../../", import.meta.url);

Deno.test("the committed panel bundle is what deno task panel:build makes now", async () => {
  for (const [name, text] of await freshPanelAssets()) {
    const committed = await Deno.readTextFile(
      new URL(`${PANEL_ASSETS}/${name}`, ROOT),
    );
    assert.ok(
      committed === text,
      `${PANEL_ASSETS}/${name} is stale: run \`deno task panel:build\` and commit it`,
    );
  }
});

Deno.test("the embedded assets are served by content-hashed name, gzipped, cached for good", async () => {
  await using h = await createHarness();
  const { js, css } = panelAssets();
  assert.match(js.name, /^panel\.[0-9a-f]{12}\.js$/);
  for (const asset of [js, css]) {
    const res = await h.request("GET", `/panel/assets/${asset.name}`, {
      key: null,
      headers: { "accept-encoding": "gzip" },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-encoding"), "gzip");
    assert.equal(
      res.headers.get("cache-control"),
      "public, max-age=31536000, immutable",
    );
    assert.match(
      res.headers.get("content-security-policy") ?? "",
      /^default-src 'none'; script-src 'self'/,
    );
  }
  const missing = await h.request(
    "GET",
    "/panel/assets/panel.000000000000.js",
    {
      key: null,
    },
  );
  assert.equal(missing.status, 404);
});

Deno.test("the budgets hold: JS at most 40 KB and CSS at most 12 KB gzipped", async () => {
  const { js, css } = panelAssets();
  const gz = async (bytes: Uint8Array) =>
    (await new Response(
      new Blob([bytes as BlobPart]).stream().pipeThrough(
        new CompressionStream("gzip"),
      ),
    ).arrayBuffer()).byteLength;
  assert.ok(await gz(js.body) <= 40 * 1024, `JS ${await gz(js.body)} bytes`);
  assert.ok(await gz(css.body) <= 12 * 1024, `CSS ${await gz(css.body)} bytes`);
});
