/** Object-storage key of a media file: `<accountId>/<yyyy>/<mm>/<mediaId>` (DESIGN §3). */
export function mediaStorageKey(
  accountId: string,
  mediaId: string,
  at: Date,
): string {
  const yyyy = String(at.getUTCFullYear());
  const mm = String(at.getUTCMonth() + 1).padStart(2, "0");
  return `${accountId}/${yyyy}/${mm}/${mediaId}`;
}

export const SIGNED_URL_TTL_SECONDS = 300;
