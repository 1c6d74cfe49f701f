export type ChannelStatus = "connected" | "disconnected";
export type QualityRating = "GREEN" | "YELLOW" | "RED";

/** A restriction Meta put on the channel's WABA (account_update ACCOUNT_RESTRICTION). */
export interface Restriction {
  /** e.g. RESTRICTED_BIZ_INITIATED_MESSAGING. */
  type: string;
  /** When it lifts (ISO time); null when Meta named no expiry. */
  until: string | null;
}

export interface Channel {
  id: string;
  accountId: string;
  phoneNumber: string;
  displayName: string;
  upstreamPhoneNumberId: string;
  wabaId: string;
  qualityRating: QualityRating;
  status: ChannelStatus;
  webhookVerified: boolean;
  /** Messages per second allowed upstream; null means the server default. */
  sendRate: number | null;
  createdAt: string;
  /** `throughput.level` of GET /{phone-number-id}: STANDARD, HIGH, NOT_APPLICABLE. */
  throughputLevel: string | null;
  /** The messaging limit tier (TIER_250 ... TIER_UNLIMITED). */
  messagingLimit: string | null;
  /** When the number was last read from Meta. */
  healthCheckedAt: string | null;
  /** Shared with the WhatsApp Business app (coexistence: 20 messages per second). */
  onBizApp: boolean;
  /** Meta's status of the number (CONNECTED, PENDING, BANNED ...). */
  metaStatus: string | null;
  nameStatus: string | null;
  /** Why the channel is disconnected, when it is. */
  statusReason: string | null;
  /** Who disconnected it: an operator's disconnect is never undone by Meta's news. */
  disconnectedBy: "operator" | "meta" | null;
  restrictions: Restriction[];
}

/** Restriction types that stop messages the business starts (templates outside the window). */
const BUSINESS_INITIATED = "RESTRICTED_BIZ_INITIATED_MESSAGING";
/** Restriction types that stop replies inside an open window too. */
const CUSTOMER_INITIATED = "RESTRICTED_CUSTOMER_INITIATED_MESSAGING";

/**
 * The restriction that refuses a send now, or undefined: a business-initiated
 * send (a template outside the service window) under
 * RESTRICTED_BIZ_INITIATED_MESSAGING, a reply (inside an open window) under
 * RESTRICTED_CUSTOMER_INITIATED_MESSAGING. Expired ones refuse nothing.
 */
export function refusingRestriction(
  channel: Pick<Channel, "restrictions">,
  send: { businessInitiated: boolean; now: string },
): Restriction | undefined {
  const type = send.businessInitiated ? BUSINESS_INITIATED : CUSTOMER_INITIATED;
  return channel.restrictions.find((r) =>
    r.type === type && (r.until === null || r.until > send.now)
  );
}
