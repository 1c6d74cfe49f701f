import type { Scope } from "./scopes.ts";

export const PLANS = ["emprende", "crece", "escala", "enterprise"] as const;
export type Plan = (typeof PLANS)[number];

export interface Account {
  id: string;
  name: string;
  slug: string;
  plan: Plan;
  defaultCountry: string;
  createdAt: string;
}

export interface ApiKey {
  id: string;
  accountId: string;
  name: string | null;
  keyPrefix: string;
  scopes: Scope[];
  rateLimit: number;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export type AgentVisibility = "all" | "assigned";

export interface Agent {
  id: string;
  accountId: string;
  name: string;
  visibility: AgentVisibility;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** Who is calling: an API key with scopes, or an agent's user token. */
export type Principal =
  | {
    kind: "key";
    accountId: string;
    keyId: string;
    scopes: ReadonlySet<Scope>;
    rateLimit: number;
  }
  | {
    kind: "agent";
    accountId: string;
    agentId: string;
    visibility: AgentVisibility;
  };

export const API_KEY_PREFIX = "bmk_";
export const USER_TOKEN_PREFIX = "bmu_";
export const TOKEN_REGEXP = /^(bmk|bmu)_[0-9A-Za-z]{40}$/;
export const SLUG_REGEXP = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
export const DEFAULT_RATE_LIMIT = 120;
/** How stale a credential's lastUsedAt may get: one write a minute, not one per request. */
export const LAST_USED_RESOLUTION_MS = 60_000;
