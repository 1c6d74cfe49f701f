// The receiver examples and the test vector of docs/webhooks.md, run as
// written (JavaScript under Node and Deno, Python under python3): a page that
// drifts from what the server signs fails here.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { signatureHeader } from "../../src/domain/webhooks/envelope.ts";
import { SIGNATURE_VECTOR } from "../_support/signature_vector.ts";

const PAGE = fileURLToPath(new URL("../../docs/webhooks.md", import.meta.url));
const EXAMPLE = fileURLToPath(
  new URL("../../examples/verify_webhook.mjs", import.meta.url),
);

/** The fenced block right after `<!-- marker -->`. */
async function block(marker: string): Promise<string> {
  const text = await Deno.readTextFile(PAGE);
  const at = text.indexOf(`<!-- ${marker} -->`);
  assert.ok(at >= 0, `docs/webhooks.md has no <!-- ${marker} --> block`);
  const match = /```\w*\n([\s\S]*?)\n```/.exec(text.slice(at));
  assert.ok(match, `no code block after <!-- ${marker} -->`);
  return match[1]!;
}

const v = SIGNATURE_VECTOR;

Deno.test("docs/webhooks.md's test vector is the one the server signs", async () => {
  const lines = Object.fromEntries(
    (await block("signature-vector")).split("\n").map((line) => {
      const colon = line.indexOf(":");
      return [line.slice(0, colon), line.slice(colon + 1).trim()];
    }),
  );
  assert.deepEqual(lines, {
    secret: v.secret,
    timestamp: String(v.timestamp),
    body: v.body,
    header: v.header,
  });
  assert.equal(signatureHeader(v.secret, v.timestamp, v.body), v.header);
});

Deno.test("docs/webhooks.md's JavaScript receiver is examples/verify_webhook.mjs", async () => {
  assert.equal(
    await block("receiver-js"),
    (await Deno.readTextFile(EXAMPLE)).trimEnd(),
  );
});

/** Each case: secret, header, body, now (seconds), and whether it verifies. */
const CASES: Array<[string, string, string, number, boolean]> = [
  [v.secret, v.header, v.body, v.timestamp + 60, true],
  [v.secret, v.header, `${v.body} `, v.timestamp, false],
  ["whsec_other", v.header, v.body, v.timestamp, false],
  [v.secret, v.header, v.body, v.timestamp + 301, false],
  [v.secret, "v1=00", v.body, v.timestamp, false],
];

Deno.test("docs/webhooks.md's JavaScript receiver accepts the vector and refuses tampering, in Deno", async () => {
  const { verifyWebhook } = await import(`file://${EXAMPLE}`);
  for (const [secret, header, body, now, expected] of CASES) {
    assert.equal(verifyWebhook(secret, header, body, now), expected);
    assert.equal(
      verifyWebhook(secret, header, new TextEncoder().encode(body), now),
      expected,
      "the raw body as bytes",
    );
  }
});

/**
 * Writes the page's `marker` block as `verify.<ext>` beside a driver that
 * reads the cases as JSON on stdin and prints one answer a line, runs the
 * driver with `cmd`, and returns its lines.
 */
async function runExample(
  marker: string,
  ext: string,
  driver: string[],
  cmd: string,
): Promise<string[]> {
  const dir = await Deno.makeTempDir({ prefix: "bm-docs-" });
  try {
    await Deno.writeTextFile(`${dir}/verify.${ext}`, await block(marker));
    await Deno.writeTextFile(`${dir}/run.${ext}`, driver.join("\n"));
    const child = new Deno.Command(cmd, {
      args: [`run.${ext}`],
      cwd: dir,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(JSON.stringify(CASES)));
    await writer.close();
    const out = await child.output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    return new TextDecoder().decode(out.stdout).trim().split("\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("docs/webhooks.md's JavaScript receiver accepts the vector and refuses tampering, in Node", async () => {
  const out = await runExample("receiver-js", "mjs", [
    'import { readFileSync } from "node:fs";',
    'import { verifyWebhook } from "./verify.mjs";',
    'for (const [secret, header, body, now] of JSON.parse(readFileSync(0, "utf8"))) {',
    "  console.log(verifyWebhook(secret, header, Buffer.from(body), now));",
    "}",
  ], "node");
  assert.deepEqual(out, CASES.map((c) => String(c[4])));
});

Deno.test("docs/webhooks.md's Python receiver accepts the vector and refuses tampering", async () => {
  const out = await runExample("receiver-py", "py", [
    "import json, sys",
    "from verify import verify_webhook",
    "for secret, header, body, now, _ in json.load(sys.stdin):",
    "    print(verify_webhook(secret, header, body.encode(), now))",
  ], "python3");
  assert.deepEqual(out, CASES.map((c) => (c[4] ? "True" : "False")));
});
