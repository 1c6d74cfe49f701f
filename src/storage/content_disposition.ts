/**
 * `Content-Disposition: attachment` for any file name: an ASCII fallback and
 * the exact name in RFC 5987 form (header values must be bytes, so a raw
 * Cyrillic or emoji name would be rejected).
 */
export function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\%]/g, "_");
  const exact = encodeURIComponent(fileName).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${exact}`;
}
