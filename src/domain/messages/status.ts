/** Outbound status rules: never backwards, failed is terminal, one event per real change. */
export type OutboundStatus =
  | "queued"
  | "sent"
  | "delivered"
  | "read"
  | "failed";

const RANK: Record<Exclude<OutboundStatus, "failed">, number> = {
  queued: 0,
  sent: 1,
  delivered: 2,
  read: 3,
};

export type StatusDecision =
  | { change: false }
  | { change: true; from: OutboundStatus; to: OutboundStatus };

/**
 * Decides what an upstream report does to a message in `current`.
 * A report never moves a message backwards; `failed` is terminal and only
 * applies before `read` (a read message was delivered, whatever comes later).
 */
export function applyStatusReport(
  current: OutboundStatus,
  reported: OutboundStatus,
): StatusDecision {
  if (current === "failed") return { change: false };
  if (reported === "failed") {
    return current === "read"
      ? { change: false }
      : { change: true, from: current, to: "failed" };
  }
  if (reported === "queued") return { change: false };
  if (RANK[reported] > RANK[current]) {
    return { change: true, from: current, to: reported };
  }
  return { change: false };
}

export function isOutboundStatus(value: string): value is OutboundStatus {
  return value === "queued" || value === "sent" || value === "delivered" ||
    value === "read" || value === "failed";
}
