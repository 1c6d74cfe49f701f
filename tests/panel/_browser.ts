// The panel in a real browser: Debian's Chromium driven by playwright-core
// (no browser download), one server per test file on 127.0.0.1 with the
// upstream simulator, background workers and a ManualClock the test moves.
//
// Without Chromium the browser tests are skipped with a message; with
// REQUIRE_BROWSER=1 (CI) they fail instead.
import {
  type Browser,
  type BrowserContext,
  chromium,
  type Page,
} from "playwright-core";
import { createHarness, type Harness } from "../_harness.ts";
import { ManualClock } from "../../src/clock.ts";
import { createApp } from "../../src/http/app.ts";
import { type Running, serve, startBackground } from "../../src/lifecycle.ts";
import { type Simulator, startSimulator } from "../../src/simulator/server.ts";
import { createLogger } from "../../src/log.ts";
import { createAgent } from "../../src/domain/accounts/account_service.ts";
import { createLoginLink } from "../../src/domain/accounts/agent_session_service.ts";
import { createTemplate } from "../../src/domain/templates/template_service.ts";
import type { Agent } from "../../src/domain/accounts/account.ts";
import { freePort, waitFor } from "../_support/wait.ts";
import { registerNumber } from "../_support/messaging.ts";

export const CHROMIUM = "/usr/bin/chromium";
const APP_SECRET = "browser-test-app-secret";

/** Launch flags: root needs --no-sandbox; the rest keep Chromium off the network. */
const FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

function chromiumInstalled(): boolean {
  try {
    return Deno.statSync(CHROMIUM).isFile;
  } catch {
    return false;
  }
}

const required = Deno.env.get("REQUIRE_BROWSER") === "1";
const available = chromiumInstalled();
if (!available && !required) {
  // deno-lint-ignore no-console
  console.warn(
    `Browser tests skipped: ${CHROMIUM} not found. Install it (apt-get install -y chromium) to run them; REQUIRE_BROWSER=1 makes its absence a failure.`,
  );
}

/** Deno.test for a browser test: skipped (with the message above) without Chromium, unless REQUIRE_BROWSER=1. */
export function browserTest(
  name: string,
  fn: (t: Deno.TestContext) => Promise<void>,
): void {
  Deno.test({
    name,
    ignore: !available && !required,
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async (t) => {
      if (!available) {
        throw new Error(
          `REQUIRE_BROWSER=1 but ${CHROMIUM} is missing: apt-get install -y chromium`,
        );
      }
      await fn(t);
    },
  });
}

/** Chromium with a fresh profile (playwright makes a temporary user data dir per launch). */
export async function launchBrowser(): Promise<Browser> {
  return await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
  });
}

/** The server of a browser test: the real app, workers, simulator and a ManualClock. */
export interface PanelServer extends AsyncDisposable {
  h: Harness;
  clock: ManualClock;
  simulator: Simulator;
  baseUrl: string;
  /** Stops the HTTP server and workers and starts them again on the same port and database. */
  restart(): Promise<void>;
  /** A one-time login URL for an agent. */
  loginUrl(agent: Pick<Agent, "id" | "accountId">): Promise<string>;
  agent(name: string, visibility?: "all" | "assigned"): Promise<Agent>;
  /** A customer writes to the tenant's channel through the simulator. */
  inbound(body: Record<string, unknown>): Promise<{ wamid: string }>;
}

export async function startPanelServer(): Promise<PanelServer> {
  const port = freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const simulator = await startSimulator({
    appSecret: APP_SECRET,
    log: createLogger("silent"),
    statusDelaysMs: { sent: 20, delivered: 60, read: 120 },
    callbackMode: "timers",
  });
  const clock = new ManualClock(new Date());
  const h = await createHarness({
    clock,
    env: {
      PORT: String(port),
      HOST: "127.0.0.1",
      PUBLIC_BASE_URL: baseUrl,
      META_GRAPH_URL: simulator.graphUrl,
      META_APP_SECRET: APP_SECRET,
      MEDIA_DOWNLOAD_HOSTS: "127.0.0.1",
      MEDIA_DOWNLOAD_ALLOW_PRIVATE_NETWORKS: "true",
    },
  });
  simulator.setCallbackUrl(`${baseUrl}/meta/webhook`);
  await registerNumber(
    simulator.url,
    h.tenant.channel.upstreamPhoneNumberId,
    h.tenant.channel.phoneNumber,
  );
  await createTemplate(h.container, {
    accountId: h.tenant.account.id,
    name: "order_update",
    language: "es_AR",
    category: "UTILITY",
    status: "approved",
    components: [
      { type: "HEADER", format: "TEXT", text: "Pedido {{1}}" },
      { type: "BODY", text: "Hola {{1}}, tu pedido {{2}} está en camino." },
      { type: "FOOTER", text: "Demo Business" },
    ],
  });
  await createTemplate(h.container, {
    accountId: h.tenant.account.id,
    name: "promo_foto",
    language: "es_AR",
    category: "MARKETING",
    status: "approved",
    components: [
      { type: "HEADER", format: "IMAGE" },
      { type: "BODY", text: "¡{{1}}, esta oferta es para vos!" },
    ],
  });
  let running: Running | undefined;
  const start = () => {
    running = serve(
      h.container,
      createApp(h.container),
      startBackground(h.container, { concurrency: 4 }),
    );
  };
  start();
  // Keep the ManualClock near real time for the simulator's timestamps,
  // moving it only forward (a test may have moved it further).
  const tick = setInterval(() => {
    if (clock.now().getTime() < Date.now()) clock.set(new Date());
  }, 200);
  return {
    h,
    clock,
    simulator,
    baseUrl,
    async restart() {
      await running!.stop();
      // A stopped container's streams refuse new ones: a fresh registry.
      (h.container as { streams: unknown }).streams = new (
        await import("../../src/streams.ts")
      ).OpenStreams();
      start();
    },
    async loginUrl(agent) {
      const { token } = await createLoginLink(h.container, agent);
      return `${baseUrl}/panel/login?token=${token}`;
    },
    async agent(name, visibility = "all") {
      return (await createAgent(h.container, {
        accountId: h.tenant.account.id,
        name,
        visibility,
      })).agent;
    },
    async inbound(body) {
      const res = await fetch(`${simulator.url}/_sim/inbound`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ to: h.tenant.channel.phoneNumber, ...body }),
      });
      const json = await res.json();
      if (!res.ok) throw new Error(`inbound: ${JSON.stringify(json)}`);
      return json;
    },
    async [Symbol.asyncDispose]() {
      clearInterval(tick);
      await running?.stop();
      await simulator.stop();
      await h[Symbol.asyncDispose]();
    },
  };
}

/**
 * A page that fails its test on any console error, uncaught error or CSP
 * violation, and on any request that leaves the server's origin.
 */
export async function watchedPage(
  context: BrowserContext,
  origin: string,
): Promise<{ page: Page; problems: string[] }> {
  const problems: string[] = [];
  // Runs in the page (a string: this file is not type-checked for the DOM).
  await context.addInitScript(`document.addEventListener(
    "securitypolicyviolation",
    (e) => console.error("CSP violation: " + e.violatedDirective + " " + e.blockedURI),
  );`);
  const page = await context.newPage();
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("request", (r) => {
    const url = r.url();
    if (
      !url.startsWith(origin) && !url.startsWith("data:") &&
      !url.startsWith("blob:")
    ) {
      problems.push(`request off origin: ${url}`);
    }
  });
  return { page, problems };
}

/** Signs in through the login page's "Sign in" button. */
export async function signIn(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/panel$/);
  await page.getByRole("list", { name: "Conversations" }).waitFor();
}

export { waitFor };
