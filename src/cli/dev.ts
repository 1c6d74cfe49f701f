import { type Config, loadConfig } from "../config.ts";
import type { Container } from "../container.ts";
import { randomBase62 } from "../crypto.ts";
import { printOut } from "../log.ts";
import {
  authenticate,
  createAccount,
  createAgent,
  createApiKey,
  listAgents,
} from "../domain/accounts/account_service.ts";
import { createLoginLink } from "../domain/accounts/agent_session_service.ts";
import { listConversations } from "../domain/conversations/conversation_service.ts";
import { findAccountBySlug } from "../domain/accounts/account_repo.ts";
import { SCOPES } from "../domain/accounts/scopes.ts";
import { listChannels } from "../domain/channels/channel_service.ts";
import { connectWaba } from "../domain/channels/connect_service.ts";
import {
  type SyncSummary,
  syncWabaTemplates,
} from "../domain/templates/template_sync_service.ts";

export const DEMO_SLUG = "demo";
export const DEMO_PHONE = "+15550100001";
export const DEMO_UPSTREAM_PHONE_NUMBER_ID = "106540352242922";
export const DEMO_WABA_ID = "102290129340398";
/** The agent whose panel link dev prints at each start. */
export const DEMO_AGENT = "Demo Agent";
/** The demo channel's token: the simulator takes any. */
const DEV_ACCESS_TOKEN = "dev-access-token";

export interface DevCredentials {
  baseUrl: string;
  apiKey: string;
  accountId: string;
  accountSlug: string;
  channelId: string;
  phoneNumber: string;
  simulatorUrl?: string;
  /** A fresh one-time sign-in link to the panel for the demo agent (10 minutes). */
  panelLoginUrl: string;
}

/** What dev mode needs besides the public credentials. */
export interface DevSetup extends DevCredentials {
  upstreamPhoneNumberId: string;
}

/** Dev listens on loopback only unless HOST says otherwise. */
export const DEV_HOST = "127.0.0.1";
/** Files under DATA_DIR holding secrets dev generated for that directory. */
export const SECRET_KEY_FILE = "secret.key";
export const META_APP_SECRET_FILE = "meta-app-secret";

function devDataDir(env: Record<string, string | undefined>): string {
  return (env.DATA_DIR ?? "./data").replace(/\/+$/, "");
}

/** The secret kept in `dataDir/file`, or undefined when there is none. */
export async function readDataDirSecret(
  dataDir: string,
  file: string,
): Promise<string | undefined> {
  try {
    return (await Deno.readTextFile(`${dataDir}/${file}`)).trim() || undefined;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
}

/** The secret kept in `dataDir/file`, generated (readable by the owner only) the first time. */
async function dataDirSecret(dataDir: string, file: string): Promise<string> {
  const existing = await readDataDirSecret(dataDir, file);
  if (existing) return existing;
  const secret = randomBase62(48);
  await Deno.mkdir(dataDir, { recursive: true });
  await Deno.writeTextFile(`${dataDir}/${file}`, secret + "\n", {
    mode: 0o600,
  });
  return secret;
}

/** META_APP_SECRET, or the one generated for this DATA_DIR (shared by dev's server and its simulator). */
export async function devMetaAppSecret(
  env: Record<string, string | undefined>,
): Promise<string> {
  return env.META_APP_SECRET ||
    await dataDirSecret(devDataDir(env), META_APP_SECRET_FILE);
}

/**
 * Dev defaults: data under DATA_DIR, loopback only, a persistent generated
 * SECRET_KEY and Meta app secret, local-friendly webhook rules.
 */
export async function prepareDev(
  env: Record<string, string | undefined>,
): Promise<Config> {
  const dataDir = devDataDir(env);
  await Deno.mkdir(dataDir, { recursive: true });
  return loadConfig({
    HOST: DEV_HOST,
    META_VERIFY_TOKEN: "dev-verify-token",
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    WEBHOOK_ALLOW_HTTP: "true",
    // Media URLs name this server; media comes from the simulator on 127.0.0.1.
    PUBLIC_BASE_URL: `http://localhost:${env.PORT ?? 8080}`,
    MEDIA_DOWNLOAD_HOSTS: "127.0.0.1",
    MEDIA_DOWNLOAD_ALLOW_PRIVATE_NETWORKS: "true",
    // Ctrl-C stops at once: no load balancer watches a dev server.
    SHUTDOWN_DELAY_MS: "0",
    ...env,
    DATA_DIR: dataDir,
    SECRET_KEY: env.SECRET_KEY ||
      await dataDirSecret(dataDir, SECRET_KEY_FILE),
    META_APP_SECRET: await devMetaAppSecret(env),
  });
}

function credentialsPath(config: Config): string {
  return `${config.dataDir}/dev-credentials.json`;
}

async function readCredentials(
  config: Config,
): Promise<DevCredentials | undefined> {
  try {
    return JSON.parse(await Deno.readTextFile(credentialsPath(config)));
  } catch {
    return undefined;
  }
}

function listening(host: string, port: number): string {
  const loopback = host === "localhost" || host === "::1" ||
    host.startsWith("127.");
  return `${host.includes(":") ? `[${host}]` : host}:${port} (${
    loopback
      ? "this machine only; HOST=0.0.0.0 opens it to the network"
      : "reachable from the network (HOST)"
  })`;
}

/** Where the Meta app secret (X-Hub-Signature-256 of /meta/webhook) comes from. */
async function appSecretSource(config: Config): Promise<string> {
  const file = `${config.dataDir}/${META_APP_SECRET_FILE}`;
  const generated = await readDataDirSecret(
    config.dataDir,
    META_APP_SECRET_FILE,
  );
  return generated === config.metaAppSecret
    ? `${file} (generated for this data directory; the simulator signs with it)`
    : "META_APP_SECRET";
}

/** Seeds the demo account once (idempotent across restarts) and writes dev-credentials.json. */
export async function writeDevCredentials(
  c: Container,
  port: number,
  extra: { simulatorUrl?: string; upstreamPhoneNumberId?: string } = {},
): Promise<DevSetup> {
  const baseUrl = `http://localhost:${port}`;
  let account = await findAccountBySlug(c.db, DEMO_SLUG);
  if (!account) {
    account = await createAccount(c, {
      name: "Demo Business",
      slug: DEMO_SLUG,
      plan: "crece",
      country: "AR",
    });
  }
  // The demo number comes from the simulator as a real one comes from Meta
  // (channels connect), and its templates are synced from its WABA, again
  // at every start (the simulator starts afresh each time).
  let channel = (await listChannels(c, account.id))[0];
  let templates: SyncSummary;
  if (!channel) {
    const connected = await connectWaba(c, {
      accountId: account.id,
      wabaId: DEMO_WABA_ID,
      accessToken: DEV_ACCESS_TOKEN,
      phoneNumberId: extra.upstreamPhoneNumberId ??
        DEMO_UPSTREAM_PHONE_NUMBER_ID,
    });
    templates = connected.templates;
    channel = (await listChannels(c, account.id))[0]!;
  } else {
    templates = await syncWabaTemplates(c, channel.wabaId, { mode: "live" });
  }
  const previous = await readCredentials(c.config);
  let apiKey = previous?.apiKey;
  if (!apiKey || (await authenticate(c, apiKey))?.accountId !== account.id) {
    apiKey = (await createApiKey(c, {
      accountId: account.id,
      scopes: [...SCOPES],
      name: "dev",
    })).key;
  }
  const agent =
    (await listAgents(c, account.id)).find((a) =>
      a.name === DEMO_AGENT && !a.revokedAt
    ) ?? (await createAgent(c, {
      accountId: account.id,
      name: DEMO_AGENT,
      visibility: "all",
    })).agent;
  const link = await createLoginLink(c, agent);
  const credentials: DevCredentials = {
    baseUrl,
    apiKey,
    accountId: account.id,
    accountSlug: account.slug,
    channelId: channel.id,
    phoneNumber: channel.phoneNumber,
    ...(extra.simulatorUrl ? { simulatorUrl: extra.simulatorUrl } : {}),
    panelLoginUrl: `${baseUrl}/panel/login?token=${link.token}`,
  };
  await Deno.writeTextFile(
    credentialsPath(c.config),
    JSON.stringify(credentials, null, 2) + "\n",
    { mode: 0o600 },
  );
  printOut(
    [
      "",
      "Business Messaging server (dev mode)",
      `  API:          ${baseUrl}/api/v2   docs: ${baseUrl}/docs`,
      `  Inbox panel:  ${credentials.panelLoginUrl}`,
      `                (sign-in link for "${DEMO_AGENT}": one use, 10 minutes; a new one at each start)`,
      `  Listening on: ${listening(c.config.host, port)}`,
      `  API key:      ${apiKey}`,
      `  Channel:      ${channel.id} (${channel.phoneNumber})`,
      `  Templates:    ${templates.templates} synced from the simulator's WABA ${channel.wabaId} (${templates.approved} approved)`,
      ...(extra.simulatorUrl
        ? [
          `  Simulator:    ${extra.simulatorUrl}`,
          `  Pause one:    curl -X POST ${extra.simulatorUrl}/_sim/templates/order_update/status -H 'content-type: application/json' -d '{"status":"PAUSED"}'`,
        ]
        : []),
      `  Credentials:  ${credentialsPath(c.config)}`,
      `  App secret:   ${await appSecretSource(c.config)}`,
      ...(c.config.webhookAllowPrivateNetworks
        ? [
          `  Webhooks:     loopback and private addresses${
            c.config.webhookAllowHttp ? " and http://" : ""
          } allowed (WEBHOOK_ALLOW_PRIVATE_NETWORKS=true, dev only)`,
        ]
        : []),
      "",
      `  curl -H "Authorization: Bearer ${apiKey}" ${baseUrl}/api/v2/account`,
      "",
    ].join("\n"),
  );
  return {
    ...credentials,
    upstreamPhoneNumberId: channel.upstreamPhoneNumberId,
  };
}

/** What the demo customers write the first time dev starts. */
const DEMO_CUSTOMERS = [
  {
    from: "+5491122334455",
    name: "Ana Gómez",
    text: "Hola, ¿tienen stock del modelo azul en talle M?",
  },
  {
    from: "+5491133445566",
    name: "Bruno Díaz",
    text: "Buenas! ¿Hasta qué hora atienden hoy?",
  },
  {
    from: "+14155550123",
    name: "Carla Smith",
    text: "Hi, my order #1042 hasn't arrived yet. Can you check?",
  },
  {
    from: "+5491144556677",
    name: "Diego",
    text: "Gracias por la ayuda 🙌",
  },
];

/**
 * A newcomer's inbox is not empty: the first time (an account without
 * conversations), demo customers write through the simulator, so their
 * messages arrive the way Meta's would (signed webhook, contact,
 * conversation, events).
 */
export async function seedDemoConversations(
  c: Container,
  simulatorUrl: string,
  credentials: { accountId: string; phoneNumber: string },
): Promise<void> {
  const some = await listConversations(c, {
    viewer: { accountId: credentials.accountId },
    limit: 1,
  });
  if (some.items.length > 0) return;
  for (const customer of DEMO_CUSTOMERS) {
    const res = await fetch(`${simulatorUrl}/_sim/inbound`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        to: credentials.phoneNumber,
        from: customer.from,
        name: customer.name,
        type: "text",
        text: { body: customer.text },
      }),
    });
    await res.body?.cancel();
  }
}
