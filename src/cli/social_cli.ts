import type { Container } from "../container.ts";
import { printOut } from "../log.ts";
import { requireAccount } from "../domain/accounts/account_service.ts";
import {
  SOCIAL_NETWORKS,
  type SocialNetwork,
} from "../domain/social/social.ts";
import { connectSocialAccount } from "../domain/social/social_service.ts";
import { optional, parseFlags, required, UsageError } from "./args.ts";

function network(value: string): SocialNetwork {
  if (!(SOCIAL_NETWORKS as readonly string[]).includes(value)) {
    throw new UsageError(
      `--network must be one of ${SOCIAL_NETWORKS.join(", ")}`,
    );
  }
  return value as SocialNetwork;
}

/** `social connect`: connects an Instagram account or Facebook Page; its posts get a new channelId. */
export async function socialCommand(
  c: Container,
  args: string[],
): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== "connect") throw new UsageError("Usage: social connect");
  const f = parseFlags(rest, {
    account: "string",
    network: "string",
    "upstream-id": "string",
    username: "string",
    "access-token": "string",
    name: "string",
  });
  const input = {
    network: network(required(f, "network")),
    upstreamId: required(f, "upstream-id"),
    username: required(f, "username"),
    accessToken: required(f, "access-token"),
    name: optional(f, "name"),
  };
  const account = await requireAccount(c, required(f, "account"));
  const social = await connectSocialAccount(c, {
    accountId: account.id,
    ...input,
  });
  printOut(
    f.json
      ? JSON.stringify({ channelId: social.id, ...social }, null, 2)
      : `Connected ${social.network} @${social.username} as channel ${social.id}; a first refresh is queued`,
  );
}
