import type { Container } from "../container.ts";
import { printOut } from "../log.ts";
import { requireAccount } from "../domain/accounts/account_service.ts";
import {
  SOCIAL_NETWORKS,
  type SocialNetwork,
} from "../domain/social/social.ts";
import { connectSocialAccount } from "../domain/social/social_service.ts";
import { findSocialAccountByUpstream } from "../domain/social/social_repo.ts";
import { queueRefresh } from "../domain/social/refresh_service.ts";
import {
  DEMO_FACEBOOK_ID,
  DEMO_INSTAGRAM_ID,
  seedDemoSocial,
} from "../simulator/social_control.ts";
import type { SimulatorState } from "../simulator/state.ts";
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

/**
 * Dev: seeds the simulator's demo Instagram account and Facebook Page and
 * connects them to the demo account once; every start queues a refresh, so
 * /social answers with data within seconds.
 */
export async function connectDemoSocial(
  c: Container,
  sim: SimulatorState,
  accountId: string,
): Promise<void> {
  seedDemoSocial(sim);
  const demo = [
    {
      network: "instagram",
      upstreamId: DEMO_INSTAGRAM_ID,
      username: "demo.shop",
    },
    { network: "facebook", upstreamId: DEMO_FACEBOOK_ID, username: "demoshop" },
  ] as const;
  for (const d of demo) {
    const existing = await findSocialAccountByUpstream(c.db, accountId, d);
    if (existing) {
      const now = c.clock.now();
      await queueRefresh(c.db, existing.id, {
        key: `dev:${now.toISOString()}`,
        now,
      });
    } else {
      await connectSocialAccount(c, {
        accountId,
        ...d,
        name: "Demo Shop",
        accessToken: "dev-social-token",
      });
    }
  }
}
