/**
 * The WhatsApp management calls of the Graph API (reference
 * meta-management.md): a WABA's templates, numbers and app subscription, a
 * number's health and registration, the token's permissions and the app's
 * webhook fields. Every failure is an UpstreamError carrying Meta's code
 * (190 expired token, 200/10 permission, 4/80007 rate limit, 100 unknown
 * object ...). Answers are read with integers past 2^53 kept as strings.
 */
import { createSocialClient, type SocialClient } from "./social_client.ts";

/** The template fields a sync asks for (Meta filters fields strictly: each one exists). */
export const TEMPLATE_FIELDS = [
  "id",
  "name",
  "language",
  "category",
  "status",
  "components",
  "parameter_format",
  "quality_score",
  "rejected_reason",
  "previous_category",
  "correct_category",
  "message_send_ttl_seconds",
  "sub_category",
  "library_template_name",
].join(",");

/** The number fields a health check asks for; the messaging limit under its new and old names. */
export const PHONE_FIELDS = [
  "id",
  "display_phone_number",
  "verified_name",
  "quality_rating",
  "throughput",
  "status",
  "name_status",
  "whatsapp_business_manager_messaging_limit",
  "messaging_limit_tier",
  "is_on_biz_app",
  "platform_type",
  "code_verification_status",
  "account_mode",
].join(",");

/** A template as Meta returns it (its keys kept as given). */
export type MetaTemplate = Record<string, unknown>;

export interface TemplatePage {
  templates: MetaTemplate[];
  /** The cursor of the next page; null when Meta named no `next`. */
  after: string | null;
}

/** GET /{phone-number-id}, read. */
export interface MetaPhoneNumber {
  id: string;
  displayPhoneNumber: string | null;
  verifiedName: string | null;
  qualityRating: string | null;
  throughputLevel: string | null;
  status: string | null;
  nameStatus: string | null;
  /** whatsapp_business_manager_messaging_limit, else the deprecated messaging_limit_tier. */
  messagingLimit: string | null;
  isOnBizApp: boolean;
  platformType: string | null;
  codeVerificationStatus: string | null;
  accountMode: string | null;
}

/** GET /debug_token, read. */
export interface TokenInfo {
  valid: boolean;
  appId: string | null;
  /** Unix seconds; 0 or null for a token that never expires. */
  expiresAt: number | null;
  scopes: string[];
  /** The WABA ids each scope is granted on (empty: every asset). */
  granular: { scope: string; targetIds: string[] }[];
}

/** One object of GET /{app-id}/subscriptions. */
export interface AppSubscription {
  object: string;
  callbackUrl: string | null;
  active: boolean;
  fields: string[];
}

export interface MetaManagementApi {
  /** One page of GET /{waba-id}/message_templates; `name` filters by name. */
  listTemplates(
    token: string,
    wabaId: string,
    page: { limit: number; after?: string | null; name?: string },
    opts?: { signal?: AbortSignal },
  ): Promise<TemplatePage>;
  /** GET /{template-id}. */
  getTemplate(token: string, templateId: string): Promise<MetaTemplate>;
  /** GET /{phone-number-id} with PHONE_FIELDS. */
  getPhoneNumber(
    token: string,
    phoneNumberId: string,
  ): Promise<MetaPhoneNumber>;
  /** GET /{waba-id}/phone_numbers, every page. */
  listPhoneNumbers(token: string, wabaId: string): Promise<MetaPhoneNumber[]>;
  /**
   * GET /{phone-number-id}/whatsapp_business_profile: a read that needs
   * whatsapp_business_messaging (the permission probe without debug_token).
   */
  businessProfile(token: string, phoneNumberId: string): Promise<void>;
  /** GET /{waba-id}?fields=id,name. */
  getWaba(
    token: string,
    wabaId: string,
  ): Promise<{ id: string; name: string | null }>;
  /** GET /{waba-id}/subscribed_apps: the ids of the apps subscribed (null where Meta names none). */
  subscribedApps(token: string, wabaId: string): Promise<(string | null)[]>;
  /** POST /{waba-id}/subscribed_apps. */
  subscribeApp(token: string, wabaId: string): Promise<void>;
  /** POST /{phone-number-id}/register with the two-step PIN. */
  register(token: string, phoneNumberId: string, pin: string): Promise<void>;
  /** GET /debug_token?input_token=, asked with the app token `APP_ID|APP_SECRET`. */
  debugToken(appToken: string, inputToken: string): Promise<TokenInfo>;
  /** GET /{app-id}/subscriptions, with the app token. */
  appSubscriptions(appToken: string, appId: string): Promise<AppSubscription[]>;
  /** POST /{app-id}/subscriptions for object whatsapp_business_account, with the app token. */
  subscribeAppWebhook(
    appToken: string,
    appId: string,
    input: { callbackUrl: string; verifyToken: string; fields: string[] },
  ): Promise<void>;
}

function str(v: unknown): string | null {
  return typeof v === "string" && v !== ""
    ? v
    : typeof v === "number"
    ? String(v)
    : null;
}

function list(v: unknown): Record<string, unknown>[] {
  return Array.isArray(v)
    ? v.filter((x): x is Record<string, unknown> =>
      typeof x === "object" && x !== null && !Array.isArray(x)
    )
    : [];
}

/** The cursor to ask for after this page: only when Meta says there is a next one. */
function nextCursor(body: Record<string, unknown>): string | null {
  const paging = body.paging as
    | { next?: unknown; cursors?: { after?: unknown } }
    | undefined;
  if (!paging || typeof paging.next !== "string" || !paging.next) return null;
  return str(paging.cursors?.after);
}

/** GET /{phone-number-id} (or an element of /phone_numbers) read into MetaPhoneNumber. */
export function readPhoneNumber(raw: Record<string, unknown>): MetaPhoneNumber {
  const throughput = raw.throughput as { level?: unknown } | undefined;
  return {
    id: str(raw.id) ?? "",
    displayPhoneNumber: str(raw.display_phone_number),
    verifiedName: str(raw.verified_name),
    qualityRating: str(raw.quality_rating),
    throughputLevel: str(throughput?.level),
    status: str(raw.status),
    nameStatus: str(raw.name_status),
    messagingLimit: str(raw.whatsapp_business_manager_messaging_limit) ??
      str(raw.messaging_limit_tier),
    isOnBizApp: raw.is_on_biz_app === true,
    platformType: str(raw.platform_type),
    codeVerificationStatus: str(raw.code_verification_status),
    accountMode: str(raw.account_mode),
  };
}

function readTokenInfo(body: Record<string, unknown>): TokenInfo {
  const data = (body.data ?? {}) as Record<string, unknown>;
  const expires = Number(data.expires_at);
  return {
    valid: data.is_valid === true,
    appId: str(data.app_id),
    expiresAt: Number.isFinite(expires) ? expires : null,
    scopes: Array.isArray(data.scopes)
      ? data.scopes.filter((s): s is string => typeof s === "string")
      : [],
    granular: list(data.granular_scopes).map((g) => ({
      scope: str(g.scope) ?? "",
      targetIds: Array.isArray(g.target_ids)
        ? g.target_ids.map(str).filter((s): s is string => s !== null)
        : [],
    })),
  };
}

/** The real client (also used against the simulator). */
export function createMetaManagementClient(
  options: { baseUrl: string; fetch?: typeof fetch; client?: SocialClient },
): MetaManagementApi {
  const client = options.client ??
    createSocialClient({
      baseUrl: options.baseUrl,
      exactIntegers: true,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  const id = (v: string) => encodeURIComponent(v);
  return {
    async listTemplates(token, wabaId, page, opts = {}) {
      const query: Record<string, string> = {
        fields: TEMPLATE_FIELDS,
        limit: String(page.limit),
      };
      if (page.after) query.after = page.after;
      if (page.name) query.name = page.name;
      const { body } = await client.get(
        token,
        `${id(wabaId)}/message_templates`,
        query,
        opts.signal ? { signal: opts.signal } : {},
      );
      return { templates: list(body.data), after: nextCursor(body) };
    },
    async getTemplate(token, templateId) {
      const { body } = await client.get(token, id(templateId), {
        fields: TEMPLATE_FIELDS,
      });
      return body;
    },
    async getPhoneNumber(token, phoneNumberId) {
      const { body } = await client.get(token, id(phoneNumberId), {
        fields: PHONE_FIELDS,
      });
      return readPhoneNumber(body);
    },
    async listPhoneNumbers(token, wabaId) {
      const out: MetaPhoneNumber[] = [];
      let after: string | null = null;
      do {
        const query: Record<string, string> = { fields: PHONE_FIELDS };
        if (after) query.after = after;
        const { body } = await client.get(
          token,
          `${id(wabaId)}/phone_numbers`,
          query,
        );
        out.push(...list(body.data).map(readPhoneNumber));
        after = nextCursor(body);
      } while (after);
      return out;
    },
    async businessProfile(token, phoneNumberId) {
      await client.get(
        token,
        `${id(phoneNumberId)}/whatsapp_business_profile`,
        {
          fields: "about",
        },
      );
    },
    async getWaba(token, wabaId) {
      const { body } = await client.get(token, id(wabaId), {
        fields: "id,name",
      });
      return { id: str(body.id) ?? wabaId, name: str(body.name) };
    },
    async subscribedApps(token, wabaId) {
      const { body } = await client.get(
        token,
        `${id(wabaId)}/subscribed_apps`,
        {},
      );
      return list(body.data).map((app) => {
        const data = app.whatsapp_business_api_data as
          | Record<string, unknown>
          | undefined;
        return str(data?.id) ?? str(app.id);
      });
    },
    async subscribeApp(token, wabaId) {
      await client.post(token, `${id(wabaId)}/subscribed_apps`, {});
    },
    async register(token, phoneNumberId, pin) {
      await client.post(token, `${id(phoneNumberId)}/register`, {
        messaging_product: "whatsapp",
        pin,
      });
    },
    async debugToken(appToken, inputToken) {
      const { body } = await client.get(appToken, "debug_token", {
        input_token: inputToken,
      });
      return readTokenInfo(body);
    },
    async appSubscriptions(appToken, appId) {
      const { body } = await client.get(
        appToken,
        `${id(appId)}/subscriptions`,
        {},
      );
      return list(body.data).map((s) => ({
        object: str(s.object) ?? "",
        callbackUrl: str(s.callback_url),
        active: s.active === true,
        fields: list(s.fields).map((f) => str(f.name)).filter((
          n,
        ): n is string => n !== null),
      }));
    },
    async subscribeAppWebhook(appToken, appId, input) {
      await client.post(appToken, `${id(appId)}/subscriptions`, {
        object: "whatsapp_business_account",
        callback_url: input.callbackUrl,
        verify_token: input.verifyToken,
        fields: input.fields.join(","),
        include_values: true,
      });
    },
  };
}
