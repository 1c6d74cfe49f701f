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

/**
 * The scopes an agent holds, through its user token or a panel session:
 * what working its conversations needs, on those it can see only (the
 * services narrow every read and write to the agent's visibility). Never
 * webhooks, events, social, contact writes or keys. A route may refuse
 * agents although they hold its scope (the batch send, the contacts list):
 * see requireScope in src/http/auth.ts and the table in docs/panel.md.
 */
export const AGENT_SCOPES: ReadonlySet<Scope> = new Set<Scope>([
  "account:read",
  "channels:read",
  "templates:read",
  "conversations:read",
  "conversations:write",
  "contacts:read",
  "messages:read",
  "messages:write",
  "media:read",
]);

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
