// The receiver examples and the test vector in README.md, run as written:
// a README that drifts from what the server signs fails here.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { signatureHeader } from "../../src/domain/webhooks/envelope.ts";
import { SIGNATURE_VECTOR } from "../_support/signature_vector.ts";

const README = fileURLToPath(new URL("../../README.md", import.meta.url));

/** The fenced block right after `<!-- marker -->`. */
async function block(marker: string): Promise<string> {
  const text = await Deno.readTextFile(README);
  const at = text.indexOf(`<!-- ${marker} -->`);
  assert.ok(at >= 0, `README.md has no <!-- ${marker} --> block`);
  const match = /```\w*\n([\s\S]*?)\n```/.exec(text.slice(at));
  assert.ok(match, `no code block after <!-- ${marker} -->`);
  return match[1]!;
}

const v = SIGNATURE_VECTOR;

Deno.test("README's test vector is the one the server signs", async () => {
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

Deno.test("README's TypeScript receiver accepts the vector and refuses tampering", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bm-readme-" });
  try {
    const file = `${dir}/verify.ts`;
    await Deno.writeTextFile(file, await block("receiver-ts"));
    const { verifyWebhook } = await import(`file://${file}`);
    assert.equal(
      verifyWebhook(v.secret, v.header, v.body, v.timestamp + 60),
      true,
    );
    assert.equal(
      verifyWebhook(v.secret, v.header, `${v.body} `, v.timestamp),
      false,
    );
    assert.equal(
      verifyWebhook("whsec_other", v.header, v.body, v.timestamp),
      false,
    );
    assert.equal(
      verifyWebhook(v.secret, v.header, v.body, v.timestamp + 301),
      false,
    );
    assert.equal(verifyWebhook(v.secret, "v1=00", v.body, v.timestamp), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("README's Python receiver accepts the vector and refuses tampering", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bm-readme-" });
  try {
    await Deno.writeTextFile(`${dir}/verify.py`, await block("receiver-py"));
    const cases: Array<[string, string, string, number, boolean]> = [
      [v.secret, v.header, v.body, v.timestamp + 60, true],
      [v.secret, v.header, `${v.body} `, v.timestamp, false],
      ["whsec_other", v.header, v.body, v.timestamp, false],
      [v.secret, v.header, v.body, v.timestamp + 301, false],
    ];
    await Deno.writeTextFile(
      `${dir}/run.py`,
      [
        "import json, sys",
        "from verify import verify_webhook",
        "for secret, header, body, now, _ in json.load(sys.stdin):",
        "    print(verify_webhook(secret, header, body.encode(), now))",
      ].join("\n"),
    );
    const child = new Deno.Command("python3", {
      args: ["run.py"],
      cwd: dir,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(JSON.stringify(cases)));
    await writer.close();
    const out = await child.output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    assert.deepEqual(
      new TextDecoder().decode(out.stdout).trim().split("\n"),
      cases.map((c) => (c[4] ? "True" : "False")),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
