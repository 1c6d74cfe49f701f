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

/** Per-kind size limits of the Cloud API (reference §5). */
export const MEDIA_LIMITS: Record<string, number> = {
  image: 5 * 1024 * 1024,
  video: 16 * 1024 * 1024,
  audio: 16 * 1024 * 1024,
  document: 100 * 1024 * 1024,
  sticker: 500 * 1024,
};

export const SIGNED_URL_TTL_SECONDS = 300;
