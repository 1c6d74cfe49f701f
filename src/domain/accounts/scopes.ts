/** Scopes exactly as the spec's table. */
export const SCOPES = [
  "messages:write",
  "messages:read",
  "conversations:read",
  "conversations:write",
  "contacts:read",
  "contacts:write",
  "templates:read",
  "channels:read",
  "media:read",
  "social:read",
  "account:read",
  "webhooks:read",
  "webhooks:write",
] as const;

export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** Parses `all` or a comma-separated list; throws naming the unknown scope. */
export function parseScopes(text: string): Scope[] {
  if (text.trim() === "all") return [...SCOPES];
  const out: Scope[] = [];
  for (const part of text.split(",").map((s) => s.trim()).filter(Boolean)) {
    if (!isScope(part)) {
      throw new Error(
        `Cannot parse scopes: "${part}" is not one of ${SCOPES.join(", ")}`,
      );
    }
    if (!out.includes(part)) out.push(part);
  }
  if (out.length === 0) throw new Error("Cannot parse scopes: none given");
  return out;
}
