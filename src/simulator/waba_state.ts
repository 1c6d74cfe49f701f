/**
 * What the simulator knows of WhatsApp Business Accounts as Meta manages
 * them: templates (Meta's shape), the health of each number, the apps
 * subscribed to each WABA, the app's webhook subscription, tokens and
 * injected failures of the management calls (reference meta-management.md).
 */
import type { SimulatorState } from "./state.ts";
import { demoTemplates, type SimTemplate } from "./waba_demo.ts";

export type { SimTemplate } from "./waba_demo.ts";

export interface SimWaba {
  id: string;
  name: string;
  templates: SimTemplate[];
  /** App ids subscribed with POST /{waba}/subscribed_apps. */
  subscribedApps: Set<string>;
}

/** GET /{phone-number-id} fields of one number (beyond the registry's id, digits and WABA). */
export interface SimNumberHealth {
  verified_name: string;
  quality_rating: string;
  throughput: { level: string };
  status: string;
  name_status: string;
  whatsapp_business_manager_messaging_limit: string;
  is_on_biz_app: boolean;
  platform_type: string;
  code_verification_status: string;
  account_mode: string;
  /** The two-step PIN once registered. */
  pin?: string;
}

/** A token the tests describe; an unknown bearer token is valid with every permission. */
export interface SimToken {
  valid: boolean;
  scopes: string[];
  /** WABA ids the token may act on; empty: all. */
  wabaIds: string[];
  /** Unix seconds; 0 never. */
  expiresAt: number;
}

/**
 * One injected failure of the management calls: after letting `skip` pass,
 * the next `count` whose path contains `path` fail with `code`.
 */
export interface ManagementFailure {
  code: number;
  count: number;
  path?: string;
  skip?: number;
}

export interface AppWebhookSubscription {
  callbackUrl: string;
  verifyToken: string;
  fields: Set<string>;
}

export interface ManagementSimState {
  wabas: Map<string, SimWaba>;
  health: Map<string, SimNumberHealth>;
  tokens: Map<string, SimToken>;
  failNext: ManagementFailure[];
  appId: string;
  /** The app's `whatsapp_business_account` subscription (GET/POST /{app}/subscriptions). */
  appSubscription: AppWebhookSubscription | null;
  /** Every management call, for tests counting Graph calls. */
  calls: { method: string; path: string; at: number }[];
  nextTemplateId: bigint;
}

/** The simulator's Meta app id (META_APP_ID against it). */
export const SIM_APP_ID = "1234567890123456";
export const ALL_SCOPES = [
  "whatsapp_business_management",
  "whatsapp_business_messaging",
  "business_management",
];

const STATES = new WeakMap<SimulatorState, ManagementSimState>();

/** The management part of a simulator's state, made on first use. */
export function managementState(state: SimulatorState): ManagementSimState {
  let m = STATES.get(state);
  if (!m) {
    m = {
      wabas: new Map(),
      health: new Map(),
      tokens: new Map(),
      failNext: [],
      appId: SIM_APP_ID,
      appSubscription: null,
      calls: [],
      nextTemplateId: 1_900_000_000_000_000n,
    };
    STATES.set(state, m);
  }
  return m;
}

/**
 * A WABA by id, made on first use with the demo templates (more than one
 * page at Meta's default page size of 25; every status; positional and
 * named; media headers; buttons), or empty with `seed: "empty"`.
 */
export function wabaOf(
  state: SimulatorState,
  id: string,
  seed: "demo" | "empty" = "demo",
): SimWaba {
  const m = managementState(state);
  let waba = m.wabas.get(id);
  if (!waba) {
    waba = {
      id,
      name: "Demo Business",
      templates: seed === "demo" ? demoTemplates() : [],
      subscribedApps: new Set(),
    };
    m.wabas.set(id, waba);
  }
  return waba;
}

/** A new template id (16 digits, as Meta's). */
export function newTemplateId(state: SimulatorState): string {
  const m = managementState(state);
  return String(m.nextTemplateId++);
}

/** The health of a registered number, defaults on first use. */
export function healthOf(
  state: SimulatorState,
  phoneNumberId: string,
): SimNumberHealth {
  const m = managementState(state);
  let h = m.health.get(phoneNumberId);
  if (!h) {
    h = {
      verified_name: "Demo Business",
      quality_rating: "GREEN",
      throughput: { level: "STANDARD" },
      status: "CONNECTED",
      name_status: "APPROVED",
      whatsapp_business_manager_messaging_limit: "TIER_2K",
      is_on_biz_app: false,
      platform_type: "CLOUD_API",
      code_verification_status: "VERIFIED",
      account_mode: "LIVE",
    };
    m.health.set(phoneNumberId, h);
  }
  return h;
}

/** A template of any WABA by Meta's id. */
export function findTemplate(
  state: SimulatorState,
  id: string,
): { waba: SimWaba; template: SimTemplate } | undefined {
  for (const waba of managementState(state).wabas.values()) {
    const template = waba.templates.find((t) => t.id === id);
    if (template) return { waba, template };
  }
  return undefined;
}

/** The injected failure for a call to `path`, if one is due (and counts it). */
export function takeFailure(
  state: SimulatorState,
  path: string,
): number | undefined {
  const m = managementState(state);
  const rule = m.failNext.find((r) => !r.path || path.includes(r.path));
  if (!rule) return undefined;
  if (rule.skip) {
    rule.skip--;
    return undefined;
  }
  rule.count--;
  if (rule.count <= 0) m.failNext.splice(m.failNext.indexOf(rule), 1);
  return rule.code;
}
