import type { Container } from "../container.ts";
import { printOut } from "../log.ts";
import {
  createAccount,
  createAgent,
  createApiKey,
  listAgents,
  listApiKeys,
  requireAccount,
  revokeAgent,
  revokeApiKey,
} from "../domain/accounts/account_service.ts";
import { type Plan, PLANS } from "../domain/accounts/account.ts";
import { findAgent, listAccounts } from "../domain/accounts/account_repo.ts";
import { createLoginLink } from "../domain/accounts/agent_session_service.ts";
import { parseScopes } from "../domain/accounts/scopes.ts";
import {
  createChannel,
  listChannels,
  updateChannel,
} from "../domain/channels/channel_service.ts";
import type { ChannelStatus } from "../domain/channels/channel.ts";
import { toE164 } from "../domain/phones/phone.ts";
import { AppError } from "../errors.ts";
import {
  type Flags,
  optional,
  parseFlags,
  required,
  requireIdOr,
  UsageError,
} from "./args.ts";

function emit(flags: Flags, value: unknown, text: string): void {
  printOut(flags.json ? JSON.stringify(value, null, 2) : text);
}

function plan(value: string | undefined): Plan | undefined {
  if (value === undefined) return undefined;
  if (!(PLANS as readonly string[]).includes(value)) {
    throw new UsageError(`--plan must be one of ${PLANS.join(", ")}`);
  }
  return value as Plan;
}

function channelStatus(value: string | undefined): ChannelStatus | undefined {
  if (value === undefined) return undefined;
  if (value !== "connected" && value !== "disconnected") {
    throw new UsageError("--status must be connected or disconnected");
  }
  return value;
}

/** The one row a name picks, for commands that accept a name instead of an id. */
function onlyOne<T extends { id: string }>(rows: T[], what: string): string {
  if (rows.length === 1) return rows[0]!.id;
  throw rows.length === 0
    ? new AppError("NOT_FOUND", `Cannot find ${what}`)
    : new AppError(
      "VALIDATION_ERROR",
      `Cannot pick ${what}: ${rows.length} match; give --id (the list command shows ids)`,
    );
}

function positiveInt(
  value: string | undefined,
  name: string,
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    throw new UsageError(`--${name} must be a positive whole number`);
  }
  return n;
}

export async function accountsCommand(
  c: Container,
  args: string[],
): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === "create") {
    const f = parseFlags(rest, {
      name: "string",
      slug: "string",
      plan: "string",
      country: "string",
    });
    const account = await createAccount(c, {
      name: required(f, "name"),
      slug: required(f, "slug"),
      plan: plan(optional(f, "plan")),
      country: optional(f, "country"),
    });
    emit(f, account, `Created account ${account.slug} (${account.id})`);
  } else if (sub === "list") {
    const f = parseFlags(rest, {});
    const all = await listAccounts(c.db);
    emit(
      f,
      all,
      all.map((a) => `${a.id}  ${a.slug}  ${a.name}  ${a.plan}`).join("\n"),
    );
  } else {
    throw new UsageError("Usage: accounts create|list");
  }
}

export async function keysCommand(c: Container, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === "create") {
    const f = parseFlags(rest, {
      account: "string",
      scopes: "string",
      "rate-limit": "string",
      name: "string",
    });
    const account = await requireAccount(c, required(f, "account"));
    let scopes;
    try {
      scopes = parseScopes(required(f, "scopes"));
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const { key, apiKey } = await createApiKey(c, {
      accountId: account.id,
      scopes,
      rateLimit: positiveInt(optional(f, "rate-limit"), "rate-limit"),
      name: optional(f, "name"),
    });
    emit(
      f,
      { id: apiKey.id, key, scopes: apiKey.scopes },
      `Created key ${apiKey.id}\n${key}\n(shown once; store it now)`,
    );
  } else if (sub === "list") {
    await listCredentials(
      c,
      rest,
      listApiKeys,
      (k) =>
        `${k.id}  ${k.name ?? "-"}  ${k.keyPrefix}…  ${state(k)}  ${
          lastUsed(k)
        }  ${k.scopes.join(",")}`,
    );
  } else if (sub === "revoke") {
    await revokeCredential(c, rest, {
      revoke: revokeApiKey,
      noun: "key",
      named: activeNamed(listApiKeys, "key"),
    });
  } else {
    throw new UsageError("Usage: keys create|list|revoke");
  }
}

/** Finds the one active credential with `--name` in `--account`, for `revoke`. */
function activeNamed<T extends Credential & { name: string | null }>(
  list: (c: Container, accountId: string) => Promise<T[]>,
  noun: string,
): (c: Container, f: Flags) => Promise<string> {
  return async (c, f) => {
    const account = await requireAccount(c, required(f, "account"));
    const name = required(f, "name");
    const all = await list(c, account.id);
    return onlyOne(
      all.filter((x) => x.name === name && !x.revokedAt),
      `an active ${noun} named "${name}" in account "${account.slug}"`,
    );
  };
}

async function channelWithPhone(c: Container, f: Flags): Promise<string> {
  const account = await requireAccount(c, required(f, "account"));
  const phone = required(f, "channel");
  const e164 = toE164(phone);
  const channels = await listChannels(c, account.id);
  return onlyOne(
    channels.filter((ch) => ch.phoneNumber === e164),
    `a channel with phone number "${phone}" in account "${account.slug}"`,
  );
}

export async function channelsCommand(
  c: Container,
  args: string[],
): Promise<void | number> {
  const [sub, ...rest] = args;
  if (sub === "create") {
    const f = parseFlags(rest, {
      account: "string",
      phone: "string",
      "display-name": "string",
      "upstream-phone-number-id": "string",
      "waba-id": "string",
      "access-token": "string",
      status: "string",
      "send-rate": "string",
    });
    const account = await requireAccount(c, required(f, "account"));
    const channel = await createChannel(c, {
      accountId: account.id,
      phoneNumber: required(f, "phone"),
      displayName: required(f, "display-name"),
      upstreamPhoneNumberId: required(f, "upstream-phone-number-id"),
      wabaId: required(f, "waba-id"),
      accessToken: required(f, "access-token"),
      status: channelStatus(optional(f, "status")),
      sendRate: positiveInt(optional(f, "send-rate"), "send-rate"),
    });
    emit(f, channel, `Created channel ${channel.phoneNumber} (${channel.id})`);
  } else if (sub === "update") {
    const f = parseFlags(rest, {
      id: "string",
      account: "string",
      channel: "string",
      phone: "string",
      "display-name": "string",
      "upstream-phone-number-id": "string",
      "waba-id": "string",
      "access-token": "string",
      status: "string",
      "send-rate": "string",
    });
    const patch: Parameters<typeof updateChannel>[2] = {};
    const phone = optional(f, "phone");
    if (phone) patch.phoneNumber = phone;
    const dn = optional(f, "display-name");
    if (dn) patch.displayName = dn;
    const up = optional(f, "upstream-phone-number-id");
    if (up) patch.upstreamPhoneNumberId = up;
    const waba = optional(f, "waba-id");
    if (waba) patch.wabaId = waba;
    const token = optional(f, "access-token");
    if (token) patch.accessToken = token;
    const status = channelStatus(optional(f, "status"));
    if (status) patch.status = status;
    const rate = positiveInt(optional(f, "send-rate"), "send-rate");
    if (rate) patch.sendRate = rate;
    requireIdOr(f, ["account", "channel"]);
    const id = optional(f, "id") ?? await channelWithPhone(c, f);
    const channel = await updateChannel(c, id, patch);
    emit(f, channel, `Updated channel ${channel.phoneNumber} (${channel.id})`);
  } else if (sub === "connect") {
    return await (await import("./meta_cli.ts")).connectCommand(c, rest);
  } else if (sub === "list") {
    const f = parseFlags(rest, { account: "string" });
    const account = await requireAccount(c, required(f, "account"));
    const channels = await listChannels(c, account.id);
    emit(
      f,
      channels,
      channels.map((ch) =>
        `${ch.id}  ${ch.phoneNumber}  ${ch.status}  ${ch.displayName}`
      )
        .join("\n"),
    );
  } else {
    throw new UsageError("Usage: channels create|update|list|connect");
  }
}

export async function agentsCommand(
  c: Container,
  args: string[],
): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === "create") {
    const f = parseFlags(rest, {
      account: "string",
      name: "string",
      visibility: "string",
    });
    const visibility = optional(f, "visibility") ?? "all";
    if (visibility !== "all" && visibility !== "assigned") {
      throw new UsageError("--visibility must be all or assigned");
    }
    const account = await requireAccount(c, required(f, "account"));
    const { token, agent } = await createAgent(c, {
      accountId: account.id,
      name: required(f, "name"),
      visibility,
    });
    emit(
      f,
      { id: agent.id, token, visibility: agent.visibility },
      `Created agent ${agent.name} (${agent.id})\n${token}\n(shown once; store it now)`,
    );
  } else if (sub === "list") {
    await listCredentials(
      c,
      rest,
      listAgents,
      (a) => `${a.id}  ${a.name}  ${a.visibility}  ${state(a)}  ${lastUsed(a)}`,
    );
  } else if (sub === "revoke") {
    await revokeCredential(c, rest, {
      revoke: revokeAgent,
      noun: "agent",
      named: activeNamed(listAgents, "agent"),
    });
  } else if (sub === "login-link") {
    const f = parseFlags(rest, {
      id: "string",
      account: "string",
      name: "string",
    });
    requireIdOr(f, ["account", "name"]);
    const id = optional(f, "id") ??
      await activeNamed(listAgents, "agent")(c, f);
    const agent = await agentFor(c, f, id);
    const { token, expiresAt } = await createLoginLink(c, agent);
    const url = `${await panelBaseUrl(c)}/panel/login?token=${token}`;
    emit(
      f,
      { url, expiresAt },
      `${url}\n(sign-in link for ${agent.name}: one use, valid until ${expiresAt})`,
    );
  } else {
    throw new UsageError("Usage: agents create|list|revoke|login-link");
  }
}

/** The agent a login link is for: `--id` alone, or the one `--account`/`--name` found. */
async function agentFor(c: Container, f: Flags, id: string) {
  const accountFlag = optional(f, "account");
  const agent = accountFlag
    ? (await listAgents(c, (await requireAccount(c, accountFlag)).id))
      .find((a) => a.id === id)
    : await findAgent(c.db, id);
  if (!agent || agent.revokedAt) {
    throw new AppError("NOT_FOUND", `Cannot find an active agent "${id}"`);
  }
  return agent;
}

/**
 * Where the panel is: PUBLIC_BASE_URL, or the address of the dev server
 * that wrote DATA_DIR/dev-credentials.json.
 */
async function panelBaseUrl(c: Container): Promise<string> {
  if (c.config.publicBaseUrl) return c.config.publicBaseUrl;
  try {
    const dev = JSON.parse(
      await Deno.readTextFile(`${c.config.dataDir}/dev-credentials.json`),
    );
    if (typeof dev.baseUrl === "string") return dev.baseUrl;
  } catch { /* no dev server here */ }
  throw new AppError(
    "VALIDATION_ERROR",
    "Cannot make a login link: set PUBLIC_BASE_URL (the panel's public origin, e.g. https://inbox.example.com)",
  );
}

interface Credential {
  id: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

/** `keys list` and `agents list`: one line per credential, revoked ones included. */
async function listCredentials<T extends Credential>(
  c: Container,
  args: string[],
  list: (c: Container, accountId: string) => Promise<T[]>,
  line: (credential: T) => string,
): Promise<void> {
  const f = parseFlags(args, { account: "string" });
  const account = await requireAccount(c, required(f, "account"));
  const all = await list(c, account.id);
  emit(f, all, all.map(line).join("\n"));
}

/**
 * `keys revoke` and `agents revoke`, by `--id` or by `--account` and `--name`:
 * refused from the credential's next request on.
 */
async function revokeCredential(
  c: Container,
  args: string[],
  how: {
    revoke: (c: Container, id: string) => Promise<void>;
    noun: string;
    named: (c: Container, f: Flags) => Promise<string>;
  },
): Promise<void> {
  const f = parseFlags(args, {
    id: "string",
    account: "string",
    name: "string",
  });
  requireIdOr(f, ["account", "name"]);
  const id = optional(f, "id") ?? await how.named(c, f);
  await how.revoke(c, id);
  emit(f, { id, revoked: true }, `Revoked ${how.noun} ${id}`);
}

function state(credential: Credential): string {
  return credential.revokedAt ? "revoked" : "active";
}

function lastUsed(credential: Credential): string {
  return `last used ${credential.lastUsedAt ?? "never"}`;
}
