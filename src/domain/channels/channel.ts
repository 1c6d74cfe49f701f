export type ChannelStatus = "connected" | "disconnected";
export type QualityRating = "GREEN" | "YELLOW" | "RED";

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
}
