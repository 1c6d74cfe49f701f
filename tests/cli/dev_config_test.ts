// Dev mode's configuration: loopback by default, secrets generated per DATA_DIR.
import assert from "node:assert/strict";
import {
  devMetaAppSecret,
  META_APP_SECRET_FILE,
  prepareDev,
  SECRET_KEY_FILE,
} from "../../src/cli/dev.ts";

async function withDirs(
  fn: (a: string, b: string) => Promise<void>,
): Promise<void> {
  const root = await Deno.makeTempDir({ prefix: "bm-dev-config-" });
  try {
    await fn(`${root}/a`, `${root}/b`);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("dev listens on 127.0.0.1 unless HOST says otherwise", async () => {
  await withDirs(async (dir) => {
    assert.equal((await prepareDev({ DATA_DIR: dir })).host, "127.0.0.1");
    const open = await prepareDev({ DATA_DIR: dir, HOST: "0.0.0.0" });
    assert.equal(open.host, "0.0.0.0");
  });
});

Deno.test("dev generates a Meta app secret per data directory and keeps it", async () => {
  await withDirs(async (a, b) => {
    const first = await prepareDev({ DATA_DIR: a });
    const secret = first.metaAppSecret!;
    assert.ok(secret.length >= 32, secret);
    assert.notEqual(secret, "dev-app-secret");
    const file = `${a}/${META_APP_SECRET_FILE}`;
    assert.equal((await Deno.readTextFile(file)).trim(), secret);
    assert.equal((await Deno.stat(file)).mode! & 0o077, 0, "readable by all");
    // A restart reads it back; the simulator gets the same one.
    assert.equal((await prepareDev({ DATA_DIR: a })).metaAppSecret, secret);
    assert.equal(await devMetaAppSecret({ DATA_DIR: a }), secret);
    // Another data directory has its own.
    const other = (await prepareDev({ DATA_DIR: b })).metaAppSecret!;
    assert.ok(other.length >= 32);
    assert.notEqual(other, secret);
    // The same holds for SECRET_KEY.
    assert.notEqual(
      await Deno.readTextFile(`${a}/${SECRET_KEY_FILE}`),
      await Deno.readTextFile(`${b}/${SECRET_KEY_FILE}`),
    );
  });
});

Deno.test("META_APP_SECRET set by the user wins and writes no file", async () => {
  await withDirs(async (dir) => {
    const env = { DATA_DIR: dir, META_APP_SECRET: "my-own-app-secret" };
    assert.equal((await prepareDev(env)).metaAppSecret, "my-own-app-secret");
    assert.equal(await devMetaAppSecret(env), "my-own-app-secret");
    await assert.rejects(
      Deno.stat(`${dir}/${META_APP_SECRET_FILE}`),
      Deno.errors.NotFound,
    );
  });
});
