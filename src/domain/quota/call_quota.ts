/** The hour windows of a durable upstream call budget (call_quota_repo.ts keeps the counts). */

const HOUR_MS = 60 * 60 * 1_000;
/** Background work stops at this share of the hourly calls, leaving the rest to on-demand calls. */
export const BACKGROUND_SHARE = 0.8;

/** The start of the hour window `now` falls in. */
export function quotaWindow(now: Date): Date {
  return new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS);
}

/** Calls a caller may take in one window: all for on-demand calls, a share for the background. */
export function quotaCap(
  perHour: number,
  mode: "live" | "background",
): number {
  return mode === "live"
    ? perHour
    : Math.max(1, Math.floor(perHour * BACKGROUND_SHARE));
}
