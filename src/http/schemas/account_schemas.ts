import { z } from "@hono/zod-openapi";
import type { Account } from "../../domain/accounts/account.ts";
import type { Channel } from "../../domain/channels/channel.ts";

export const AccountSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  slug: z.string(),
  plan: z.enum(["emprende", "crece", "escala", "enterprise"]),
}).openapi("Account");

export function toAccountResponse(a: Account): z.infer<typeof AccountSchema> {
  return { id: a.id, name: a.name, slug: a.slug, plan: a.plan };
}

export const ChannelSchema = z.object({
  id: z.uuid().openapi({ description: "Use as phoneNumberId when sending" }),
  phoneNumber: z.string(),
  displayName: z.string(),
  phoneNumberId: z.string().openapi({
    description: "Id of the number on the upstream platform",
  }),
  wabaId: z.string(),
  qualityRating: z.enum(["GREEN", "YELLOW", "RED"]),
  status: z.enum(["connected", "disconnected"]),
  webhookVerified: z.boolean(),
  throughputLevel: z.string().nullable().openapi({
    description:
      "Meta's throughput level of the number (STANDARD, HIGH, NOT_APPLICABLE); null until Meta was asked",
  }),
  messagingLimit: z.string().nullable().openapi({
    description: "Meta's messaging limit tier (TIER_250 ... TIER_UNLIMITED)",
  }),
  healthCheckedAt: z.string().nullable().openapi({
    description: "When the number was last read from Meta",
  }),
  statusReason: z.string().nullable().openapi({
    description: "Why the channel is disconnected, when it is",
  }),
  restrictions: z.array(z.object({
    type: z.string(),
    until: z.string().nullable(),
  })).openapi({
    description:
      "Meta's restrictions on the channel's WABA (RESTRICTED_BIZ_INITIATED_MESSAGING refuses templates outside the service window until `until`)",
  }),
}).openapi("Channel");

export function toChannelResponse(ch: Channel): z.infer<typeof ChannelSchema> {
  return {
    id: ch.id,
    phoneNumber: ch.phoneNumber,
    displayName: ch.displayName,
    phoneNumberId: ch.upstreamPhoneNumberId,
    wabaId: ch.wabaId,
    qualityRating: ch.qualityRating,
    status: ch.status,
    webhookVerified: ch.webhookVerified,
    throughputLevel: ch.throughputLevel,
    messagingLimit: ch.messagingLimit,
    healthCheckedAt: ch.healthCheckedAt,
    statusReason: ch.statusReason,
    restrictions: ch.restrictions,
  };
}
