// loadConfig's rules and messages, which are zod's as they were when the
// environment was read with a zod schema (config.ts reads it by hand now, so
// serve does not load zod before it is ready): each message below is the one
// z.prettifyError gave for the same input.
import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "../../src/config.ts";

function problems(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    const [head, ...rest] = err.message.split("\n");
    assert.equal(head, "Cannot load configuration:");
    return rest.join("\n");
  }
  throw new Error(`${JSON.stringify(env)} was accepted`);
}

const at = (message: string, path: string) => `✖ ${message}\n  → at ${path}`;

Deno.test("a bad variable is refused with zod's message and its name", () => {
  const cases: [Record<string, string>, string][] = [
    [
      { PORT: "abc" },
      at("Invalid input: expected number, received NaN", "PORT"),
    ],
    [
      { PORT: "1.5" },
      at("Invalid input: expected int, received number", "PORT"),
    ],
    [{ PORT: "-1" }, at("Too small: expected number to be >=0", "PORT")],
    [{ PORT: "70000" }, at("Too big: expected number to be <=65535", "PORT")],
    [
      { PORT: "9007199254740993" },
      at("Too big: expected int to be <=9007199254740991", "PORT") + "\n" +
      at("Too big: expected number to be <=65535", "PORT"),
    ],
    [
      { SEND_RATE_PER_SECOND: "-Infinity" },
      at(
        "Invalid input: expected number, received -Infinity",
        "SEND_RATE_PER_SECOND",
      ),
    ],
    [
      { SEND_RATE_PER_SECOND: "0" },
      at("Too small: expected number to be >0", "SEND_RATE_PER_SECOND"),
    ],
    [{ S3_ENDPOINT: "nope" }, at("Invalid URL", "S3_ENDPOINT")],
    [{ META_GRAPH_URL: "" }, at("Invalid URL", "META_GRAPH_URL")],
    [
      { SECRET_KEY: "short" },
      at("must be at least 32 characters", "SECRET_KEY"),
    ],
    [
      { METRICS_TOKEN: "x" },
      at("must be at least 16 characters", "METRICS_TOKEN"),
    ],
    [
      { WEBHOOK_ALLOW_HTTP: "yes" },
      at(
        'Invalid option: expected one of "0"|"1"|"true"|"false"',
        "WEBHOOK_ALLOW_HTTP",
      ),
    ],
    [
      { LOG_LEVEL: "loud" },
      at(
        'Invalid option: expected one of "debug"|"info"|"warn"|"error"|"silent"',
        "LOG_LEVEL",
      ),
    ],
    [
      { MEDIA_DOWNLOAD_HOSTS: "," },
      at("Too small: expected array to have >=1 items", "MEDIA_DOWNLOAD_HOSTS"),
    ],
  ];
  for (const [env, expected] of cases) {
    assert.equal(problems(env), expected, JSON.stringify(env));
  }
});

Deno.test("every problem is listed at once, a list item's after the variables'", () => {
  const hosts = "must be host names, e.g. lookaside.fbsbx.com or *.fbsbx.com";
  assert.equal(
    problems({
      PORT: "x",
      MEDIA_DOWNLOAD_HOSTS: "a/b,ok,c d",
      WORKERS: "0",
      SHUTDOWN_DRAIN_MS: "-1",
    }),
    [
      at("Invalid input: expected number, received NaN", "PORT"),
      at("Too small: expected number to be >=1", "WORKERS"),
      at("Too small: expected number to be >=0", "SHUTDOWN_DRAIN_MS"),
      at(hosts, "MEDIA_DOWNLOAD_HOSTS[0]"),
      at(hosts, "MEDIA_DOWNLOAD_HOSTS[2]"),
    ].join("\n"),
  );
});

Deno.test("values are coerced as zod coerced them; unset ones take their defaults", () => {
  const config = loadConfig({
    PORT: " 80 ",
    WORKERS: "0x10",
    BODY_LIMIT_BYTES: "2e3",
    WEBHOOK_ALLOW_HTTP: "1",
    MEDIA_DOWNLOAD_ALLOW_PRIVATE_NETWORKS: "true",
    PUBLIC_BASE_URL: " https://api.example.com/ ",
    DATA_DIR: "/srv/bm/",
  });
  assert.equal(config.port, 80);
  assert.equal(config.workers, 16);
  assert.equal(config.bodyLimitBytes, 2000);
  assert.equal(config.webhookAllowHttp, true);
  assert.equal(config.webhookAllowPrivateNetworks, false);
  assert.equal(config.mediaDownloadAllowPrivate, true);
  assert.equal(config.publicBaseUrl, "https://api.example.com");
  assert.equal(config.databaseUrl, "file:/srv/bm/app.db");
  assert.equal(loadConfig({ PORT: "" }).port, 0);
  const defaults = loadConfig({});
  assert.equal(defaults.port, 8080);
  assert.equal(defaults.host, "0.0.0.0");
  assert.equal(defaults.metaGraphUrl, "https://graph.facebook.com/v22.0");
  assert.equal(defaults.logLevel, "info");
  assert.equal(defaults.bodyLimitBytes, 1024 * 1024);
  assert.equal(defaults.mediaMaxBytes, 100 * 1024 * 1024);
  assert.equal(defaults.shutdownDrainMs, 20_000);
  assert.equal(defaults.secretKey, undefined);
});
