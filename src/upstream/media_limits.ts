// What the Cloud API takes as uploaded media (POST /{phone-number-id}/media):
// the MIME types of each kind and their size limits (reference §5). Wire
// rules only: the upload route checks them before the bytes go to Meta, the
// simulator answers as Meta does when they are broken.

export interface MediaKind {
  /** The message or header type it can be sent as. */
  type: "image" | "video" | "audio" | "document" | "sticker";
  mimeTypes: readonly string[];
  maxBytes: number;
}

const MB = 1024 * 1024;

export const MEDIA_KINDS: readonly MediaKind[] = [
  { type: "image", mimeTypes: ["image/jpeg", "image/png"], maxBytes: 5 * MB },
  { type: "video", mimeTypes: ["video/mp4", "video/3gpp"], maxBytes: 16 * MB },
  {
    type: "audio",
    mimeTypes: [
      "audio/aac",
      "audio/amr",
      "audio/mpeg",
      "audio/mp4",
      "audio/ogg",
    ],
    maxBytes: 16 * MB,
  },
  {
    type: "document",
    mimeTypes: [
      "text/plain",
      "application/pdf",
      "application/msword",
      "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
      "application/vnd.ms-excel",
      "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
      "application/vnd.ms-powerpoint",
      "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ],
    maxBytes: 100 * MB,
  },
  // Animated stickers may be 500 KB; static ones 100 KB. Uploads take the larger.
  { type: "sticker", mimeTypes: ["image/webp"], maxBytes: 500 * 1024 },
];

/** The kind a MIME type (parameters and case ignored) uploads as, if any. */
export function mediaKindOf(mimeType: string): MediaKind | undefined {
  const bare = mimeType.split(";")[0]!.trim().toLowerCase();
  return MEDIA_KINDS.find((k) => k.mimeTypes.includes(bare));
}

/** Every MIME type uploads accept, for error messages and `accept` lists. */
export const UPLOAD_MIME_TYPES: readonly string[] = MEDIA_KINDS.flatMap((k) =>
  k.mimeTypes
);
