import { type Config, loadConfig } from "../config.ts";
import type { Container } from "../container.ts";
import { randomBase62 } from "../crypto.ts";
import { printOut } from "../log.ts";
import {
  authenticate,
  createAccount,
  createApiKey,
} from "../domain/accounts/account_service.ts";
import { findAccountBySlug } from "../domain/accounts/account_repo.ts";
import { SCOPES } from "../domain/accounts/scopes.ts";
import {
  createChannel,
  listChannels,
} from "../domain/channels/channel_service.ts";
import { seedDemoTemplates } from "./templates_cli.ts";

export const DEMO_SLUG = "demo";
export const DEMO_PHONE = "+15550100001";
export const DEMO_UPSTREAM_PHONE_NUMBER_ID = "106540352242922";
export const DEMO_WABA_ID = "102290129340398";

export interface DevCredentials {
  baseUrl: string;
  apiKey: string;
  accountId: string;
  accountSlug: string;
  channelId: string;
  phoneNumber: string;
  simulatorUrl?: string;
}

/** What dev mode needs besides the public credentials. */
export interface DevSetup extends DevCredentials {
  upstreamPhoneNumberId: string;
}

/** Dev defaults: data under DATA_DIR, a persistent generated SECRET_KEY, local-friendly webhook rules. */
export async function prepareDev(
  env: Record<string, string | undefined>,
): Promise<Config> {
  const dataDir = (env.DATA_DIR ?? "./data").replace(/\/+$/, "");
  await Deno.mkdir(dataDir, { recursive: true });
  let secretKey = env.SECRET_KEY;
  if (!secretKey) {
    const path = `${dataDir}/secret.key`;
    try {
      secretKey = (await Deno.readTextFile(path)).trim();
    } catch {
      secretKey = randomBase62(48);
      await Deno.writeTextFile(path, secretKey + "\n", { mode: 0o600 });
    }
  }
  return loadConfig({
    META_APP_SECRET: "dev-app-secret",
    META_VERIFY_TOKEN: "dev-verify-token",
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    WEBHOOK_ALLOW_HTTP: "true",
    // Media URLs name this server; media comes from the simulator on 127.0.0.1.
    PUBLIC_BASE_URL: `http://localhost:${env.PORT ?? 8080}`,
    MEDIA_DOWNLOAD_HOSTS: "127.0.0.1",
    MEDIA_DOWNLOAD_ALLOW_PRIVATE_NETWORKS: "true",
    ...env,
    DATA_DIR: dataDir,
    SECRET_KEY: secretKey,
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
  let channel = (await listChannels(c, account.id))[0];
  if (!channel) {
    channel = await createChannel(c, {
      accountId: account.id,
      phoneNumber: DEMO_PHONE,
      displayName: "Demo Business",
      upstreamPhoneNumberId: extra.upstreamPhoneNumberId ??
        DEMO_UPSTREAM_PHONE_NUMBER_ID,
      wabaId: DEMO_WABA_ID,
      accessToken: "dev-access-token",
      status: "connected",
    });
    await seedDemoTemplates(c, account.id, channel.id);
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
  const credentials: DevCredentials = {
    baseUrl,
    apiKey,
    accountId: account.id,
    accountSlug: account.slug,
    channelId: channel.id,
    phoneNumber: channel.phoneNumber,
    ...(extra.simulatorUrl ? { simulatorUrl: extra.simulatorUrl } : {}),
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
      `  API key:      ${apiKey}`,
      `  Channel:      ${channel.id} (${channel.phoneNumber})`,
      ...(extra.simulatorUrl ? [`  Simulator:    ${extra.simulatorUrl}`] : []),
      `  Credentials:  ${credentialsPath(c.config)}`,
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
