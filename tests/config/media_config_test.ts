// The media settings of loadConfig, and what dev mode fills in for them.
import assert from "node:assert/strict";
import {
  assertServeConfig,
  ConfigError,
  loadConfig,
} from "../../src/config.ts";
import { prepareDev } from "../../src/cli/dev.ts";

Deno.test("media downloads default to Meta's CDN on public addresses only", () => {
  const config = loadConfig({});
  assert.deepEqual(config.mediaDownloadHosts, ["lookaside.fbsbx.com"]);
  assert.equal(config.mediaDownloadAllowPrivate, false);
  assert.equal(config.publicBaseUrl, undefined);
});

Deno.test("MEDIA_DOWNLOAD_HOSTS is a comma list of host names or *.suffix", () => {
  const config = loadConfig({
    MEDIA_DOWNLOAD_HOSTS: " Lookaside.FBSBX.com, *.fbcdn.net ,",
  });
  assert.deepEqual(config.mediaDownloadHosts, [
    "lookaside.fbsbx.com",
    "*.fbcdn.net",
  ]);
  for (const bad of ["https://lookaside.fbsbx.com", "a/b", ",", "*"]) {
    assert.throws(
      () => loadConfig({ MEDIA_DOWNLOAD_HOSTS: bad }),
      (err: unknown) =>
        err instanceof ConfigError && /MEDIA_DOWNLOAD_HOSTS/.test(err.message),
      bad,
    );
  }
});

Deno.test("serve needs PUBLIC_BASE_URL; the error says why", () => {
  assert.throws(
    () => assertServeConfig(loadConfig({})),
    (err: unknown) =>
      err instanceof ConfigError &&
      /set PUBLIC_BASE_URL/.test(err.message) &&
      /never from a request's Host header/.test(err.message),
  );
  assertServeConfig(
    loadConfig({
      PUBLIC_BASE_URL: "https://api.example.com",
      META_APP_SECRET: "app-secret",
    }),
  );
});

Deno.test("dev sets PUBLIC_BASE_URL from its port and downloads media from the local simulator", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bm-dev-config-" });
  try {
    const config = await prepareDev({ DATA_DIR: dir, PORT: "9123" });
    assert.equal(config.publicBaseUrl, "http://localhost:9123");
    assert.deepEqual(config.mediaDownloadHosts, ["127.0.0.1"]);
    assert.equal(config.mediaDownloadAllowPrivate, true);
    assertServeConfig(config);
    const own = await prepareDev({
      DATA_DIR: dir,
      PUBLIC_BASE_URL: "https://dev.example.com",
    });
    assert.equal(own.publicBaseUrl, "https://dev.example.com");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
