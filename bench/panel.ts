// deno-lint-ignore-file no-console
/**
 * The inbox panel's budgets (issue 29), measured in Debian's Chromium on
 * loopback (docs/benchmarks.md):
 * - the JS and CSS the page loads, gzipped (≤ 40 KB and ≤ 12 KB);
 * - with 10,000 conversations, the list's first paint after navigation
 *   (the client's performance mark "list-rendered", ≤ 150 ms), median of runs;
 * - a new inbound message visible in the open conversation after the
 *   simulator's post to /meta/webhook (≤ 1 s), median of runs.
 *
 *   deno run -A bench/panel.ts [--runs 10] [--conversations 10000]
 */
import { parseArgs } from "node:util";
import {
  launchBrowser,
  signIn,
  startPanelServer,
  waitFor,
} from "../tests/panel/_browser.ts";
import { panelAssets } from "../src/panel/assets.ts";
import { newId } from "../src/ids.ts";
import { toDbTime } from "../src/db/time.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    runs: { type: "string", default: "10" },
    conversations: { type: "string", default: "10000" },
  },
});
const runs = Number(values.runs);
const total = Number(values.conversations);

async function gzipped(bytes: Uint8Array): Promise<number> {
  const stream = new Blob([bytes as BlobPart]).stream().pipeThrough(
    new CompressionStream("gzip"),
  );
  return (await new Response(stream).arrayBuffer()).byteLength;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const { js, css } = panelAssets();
console.log(
  `assets: JS ${(await gzipped(js.body) / 1024).toFixed(1)} KB gzipped (${
    (js.body.length / 1024).toFixed(1)
  } KB raw), CSS ${(await gzipped(css.body) / 1024).toFixed(1)} KB gzipped`,
);

await using server = await startPanelServer();
const db = server.h.container.db;
const { account } = server.h.tenant;
// 10,000 conversations, each with a contact, by direct inserts (in chunks).
const start = Date.now() - total * 60_000;
for (let i = 0; i < total; i += 500) {
  const contacts = [];
  const conversations = [];
  for (let j = i; j < Math.min(total, i + 500); j++) {
    const at = toDbTime(new Date(start + j * 60_000));
    const contactId = newId();
    contacts.push({
      id: contactId,
      account_id: account.id,
      phone_number: `+54911${String(10_000_000 + j)}`,
      name: `Customer ${j}`,
      email: null,
      tags: "[]",
      custom_fields: "{}",
      opted_in: 1,
      last_message_at: at,
      created_at: at,
      updated_at: at,
    });
    conversations.push({
      id: newId(),
      account_id: account.id,
      contact_id: contactId,
      channel_id: server.h.tenant.channel.id,
      status: "open",
      assigned_to: null,
      last_message_at: at,
      last_message_preview: `Message number ${j}`,
      last_message_direction: "inbound",
      last_message_status: "received",
      last_message_id: null,
      last_inbound_at: at,
      service_window_expires_at: toDbTime(
        new Date(start + j * 60_000 + 86_400_000),
      ),
      unread_count: j % 7,
      referral: null,
      created_at: at,
      updated_at: at,
    });
  }
  // deno-lint-ignore no-explicit-any
  await db.insertInto("contacts").values(contacts as any).execute();
  // deno-lint-ignore no-explicit-any
  await db.insertInto("conversations").values(conversations as any).execute();
}
const agent = await server.agent("Bench");
const browser = await launchBrowser();
try {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 800 },
  });
  const page = await context.newPage();
  await signIn(page, await server.loginUrl(agent));
  const paints: number[] = [];
  for (let i = 0; i < runs; i++) {
    await page.goto(`${server.baseUrl}/panel`);
    const mark = await page.waitForFunction(
      `performance.getEntriesByName("list-rendered")[0]?.startTime`,
    );
    paints.push(await mark.jsonValue() as number);
  }
  // Evaluated in the page (a string: this file is type-checked without the DOM).
  const timing = await page.evaluate(`(() => {
    const nav = performance.getEntriesByType("navigation")[0];
    const js = performance.getEntriesByType("resource")
      .find((r) => r.name.endsWith(".js"));
    return {
      htmlEnd: nav.responseEnd,
      domContentLoaded: nav.domContentLoadedEventEnd,
      jsEnd: js && js.responseEnd,
      rendered: performance.getEntriesByName("list-rendered")[0]?.startTime,
    };
  })()`);
  console.log(
    `  last navigation (ms from its start): ${JSON.stringify(timing)}`,
  );
  console.log(
    `list first paint with ${total} conversations: median ${
      median(paints).toFixed(0)
    } ms, max ${Math.max(...paints).toFixed(0)} ms (${runs} navigations)`,
  );
  // Live: one customer writes; time from the post to the bubble.
  const phone = "+5491177770000";
  await server.inbound({
    from: phone,
    name: "Live",
    type: "text",
    text: { body: "first" },
  });
  const conversation = await waitFor(async () => {
    const res = await server.h.request(
      "GET",
      `/api/v2/conversations/by-phone/${encodeURIComponent(phone)}`,
    );
    return res.status === 200 ? res.body.data.id as string : undefined;
  }, { what: "the live conversation" });
  await page.goto(`${server.baseUrl}/panel/c/${conversation}`);
  await page.locator("[role=log] article", { hasText: "first" }).waitFor();
  await page.locator(".connection.live").waitFor();
  const latencies: number[] = [];
  for (let i = 0; i < runs; i++) {
    const text = `live ${i}`;
    const posted = performance.now();
    await server.inbound({
      from: phone,
      name: "Live",
      type: "text",
      text: { body: text },
    });
    await page.locator("[role=log] article", { hasText: text }).waitFor();
    latencies.push(performance.now() - posted);
  }
  console.log(
    `inbound message visible after Meta's post: median ${
      median(latencies).toFixed(0)
    } ms, max ${Math.max(...latencies).toFixed(0)} ms (${runs} messages)`,
  );
} finally {
  await browser.close();
}
