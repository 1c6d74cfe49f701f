import { randomBase62, sha256Hex } from "../crypto.ts";
import { mediaKindOf } from "../upstream/media_limits.ts";
import { requireBearer } from "./messages_route.ts";
import { graphErrorResponse } from "./sim_errors.ts";
import type { SimulatorState, StoredMedia } from "./state.ts";

/** Stores bytes under a new numeric media id, as if a customer had sent them. */
export async function storeMedia(
  state: SimulatorState,
  bytes: Uint8Array,
  mimeType: string,
): Promise<StoredMedia> {
  const media: StoredMedia = {
    id: String(state.nextMediaId++),
    bytes,
    mimeType,
    sha256: await sha256Hex(bytes),
    token: randomBase62(24),
  };
  state.media.set(media.id, media);
  return media;
}

/**
 * POST /{phone-number-id}/media: a multipart upload (`messaging_product`,
 * `type`, `file`), checked as Meta does (reference §5): a type or size it
 * does not take is 131053, synchronously; answers `{ id }`.
 */
export async function handleMediaUpload(
  state: SimulatorState,
  req: Request,
): Promise<Response> {
  const unauthorized = requireBearer(req);
  if (unauthorized) return unauthorized;
  let form: FormData;
  try {
    form = await req.formData();
  } catch {
    return graphErrorResponse(100, {
      details: "The request is not a multipart form",
    });
  }
  if (form.get("messaging_product") !== "whatsapp") {
    return graphErrorResponse(100, {
      details: "The parameter messaging_product is required.",
    });
  }
  const file = form.get("file");
  const type = form.get("type");
  if (!(file instanceof File) || typeof type !== "string" || !type) {
    return graphErrorResponse(100, {
      details: "The parameters file and type are required.",
    });
  }
  const kind = mediaKindOf(type);
  if (!kind) {
    return graphErrorResponse(131053, {
      details: `Unsupported file type: ${type}`,
    });
  }
  if (file.size > kind.maxBytes) {
    return graphErrorResponse(131053, {
      details:
        `The ${kind.type} is ${file.size} bytes, above the ${kind.maxBytes} bytes allowed`,
    });
  }
  const media = await storeMedia(
    state,
    new Uint8Array(await file.arrayBuffer()),
    type,
  );
  return Response.json({ id: media.id });
}

/** GET /{media-id}: the download URL and metadata (reference §5). */
export function handleMediaInfo(
  state: SimulatorState,
  req: Request,
  mediaId: string,
): Response {
  const unauthorized = requireBearer(req);
  if (unauthorized) return unauthorized;
  const media = state.media.get(mediaId);
  if (!media) {
    return graphErrorResponse(100, {
      status: 404,
      subcode: 33,
      details:
        `Unsupported get request. Object with ID '${mediaId}' does not exist, cannot be loaded due to missing permissions, or does not support this operation`,
    });
  }
  return Response.json({
    messaging_product: "whatsapp",
    url: `${state.url}/_media/${media.id}?token=${media.token}`,
    mime_type: media.mimeType,
    sha256: media.sha256,
    file_size: String(media.bytes.byteLength),
    id: media.id,
  });
}

/** GET /_media/:id: the bytes, only with a bearer token and the URL's token. */
export function handleMediaDownload(
  state: SimulatorState,
  req: Request,
  mediaId: string,
): Response {
  const unauthorized = requireBearer(req);
  if (unauthorized) return unauthorized;
  const media = state.media.get(mediaId);
  const token = new URL(req.url).searchParams.get("token");
  if (!media || token !== media.token) {
    return new Response("Not found", { status: 404 });
  }
  return new Response(media.bytes.slice(), {
    headers: {
      "Content-Type": media.mimeType,
      "Content-Length": String(media.bytes.byteLength),
    },
  });
}
