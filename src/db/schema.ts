import type { Generated, Kysely, Transaction } from "kysely";

/** Row types of every table; JSON columns are TEXT, booleans are 0/1. */
export interface AccountsTable {
  id: string;
  name: string;
  slug: string;
  plan: string;
  default_country: string;
  created_at: string;
  updated_at: string;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string | null;
  key_hash: string;
  key_prefix: string;
  scopes: string;
  rate_limit: number;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface AgentsTable {
  id: string;
  account_id: string;
  name: string;
  visibility: string;
  token_hash: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface AgentLoginLinksTable {
  token_hash: string;
  agent_id: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

export interface AgentSessionsTable {
  id_hash: string;
  agent_id: string;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
}

export interface ChannelsTable {
  id: string;
  account_id: string;
  phone_number: string;
  display_name: string;
  upstream_phone_number_id: string;
  waba_id: string;
  access_token_enc: string;
  quality_rating: string;
  status: string;
  webhook_verified: number;
  send_rate: number | null;
  created_at: string;
  updated_at: string;
  /** What GET /{phone-number-id} said last (migration 0020): `throughput.level`. */
  throughput_level: string | null;
  /** The messaging limit tier (TIER_250, TIER_2K ... TIER_UNLIMITED). */
  messaging_limit: string | null;
  health_checked_at: string | null;
  /** 1 for a number shared with the WhatsApp Business app (coexistence). */
  on_biz_app: number;
  /** Meta's own status of the number (CONNECTED, BANNED ...). */
  meta_status: string | null;
  name_status: string | null;
  /** Why the channel is disconnected, when it is. */
  status_reason: string | null;
  /** "operator" (by hand: Meta's news never reconnects it) or "meta". */
  disconnected_by: string | null;
  /** JSON array of the WABA's restrictions: `{ type, until }`. */
  restrictions: string;
  /** entry[].time of the last name and limit webhooks applied (unix seconds). */
  name_event_at: number | null;
  limit_event_at: number | null;
}

export interface ContactsTable {
  id: string;
  account_id: string;
  /** Null for a contact known only by its BSUID (migration 0004). */
  phone_number: string | null;
  /** Business-scoped user id, exactly as Meta sent it. */
  user_id: string | null;
  parent_user_id: string | null;
  username: string | null;
  name: string | null;
  email: string | null;
  tags: string;
  custom_fields: string;
  opted_in: number;
  last_message_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface TemplatesTable {
  id: string;
  account_id: string;
  channel_id: string | null;
  meta_template_id: string | null;
  name: string;
  language: string;
  category: string;
  status: string;
  components: string;
  created_at: string;
  updated_at: string;
  /** The WABA of a synced template (migration 0020); null for a local one. */
  waba_id: string | null;
  /** "meta" (synced) or "local" (made by hand). */
  source: string;
  /** Meta's own status value (PAUSED, IN_APPEAL, LOCKED ...). */
  meta_status: string | null;
  parameter_format: string | null;
  quality_score: string | null;
  rejected_reason: string | null;
  previous_category: string | null;
  correct_category: string | null;
  flagged_at: string | null;
  synced_at: string | null;
  /** entry[].time of the last webhook applied to each aspect (unix seconds). */
  status_event_at: number | null;
  quality_event_at: number | null;
  category_event_at: number | null;
  /** When a refresh after a send error was last queued (at most one per 5 minutes). */
  refresh_requested_at: string | null;
}

/** A WhatsApp Business Account (migration 0020). */
export interface WabasTable {
  id: string;
  account_id: string;
  name: string | null;
  access_token_enc: string | null;
  subscribed_at: string | null;
  templates_synced_at: string | null;
  templates_sync_attempted_at: string | null;
  templates_sync_error: string | null;
  quota_window_start: string | null;
  quota_used: number;
  blocked_until: string | null;
  ban_state: string | null;
  /** JSON array of `{ type, until }`. */
  restrictions: string;
  account_event_at: number | null;
  created_at: string;
  updated_at: string;
}

/** A management webhook change, stored as received (migration 0020). */
export interface MetaEventsTable {
  id: string;
  payload_id: string | null;
  waba_id: string;
  account_id: string | null;
  field: string;
  event: string | null;
  subject: string | null;
  entry_time: number | null;
  dedupe_key: string;
  value: string;
  outcome: string;
  note: string | null;
  received_at: string;
}

export interface ConversationsTable {
  id: string;
  account_id: string;
  contact_id: string;
  channel_id: string | null;
  status: string;
  assigned_to: string | null;
  last_message_at: string | null;
  last_message_preview: string | null;
  last_message_direction: string | null;
  last_message_status: string | null;
  last_message_id: string | null;
  last_inbound_at: string | null;
  service_window_expires_at: string | null;
  unread_count: number;
  /** JSON of the click-to-WhatsApp ad that opened the conversation, or null. */
  referral: string | null;
  created_at: string;
  updated_at: string;
}

export interface MessagesTable {
  id: string;
  account_id: string;
  conversation_id: string;
  contact_id: string;
  channel_id: string | null;
  direction: string;
  type: string;
  content: string;
  status: string;
  wa_message_id: string | null;
  error_code: string | null;
  error_message: string | null;
  origin: string;
  sent_by_ai: number;
  campaign_id: string | null;
  client_ref: string | null;
  media_id: string | null;
  media_key: string | null;
  lane: string;
  context_wa_message_id: string | null;
  upstream_timestamp: string | null;
  /** JSON of what the customer did beyond the content (MessageDetails), or null. */
  details: string | null;
  /** The agent that sent it (user token or panel session); null otherwise. */
  agent_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface MediaTable {
  id: string;
  account_id: string;
  message_id: string | null;
  channel_id: string | null;
  upstream_media_id: string | null;
  kind: string;
  mime_type: string;
  file_name: string;
  sha256: string | null;
  size_bytes: number | null;
  storage_key: string;
  status: string;
  error: string | null;
  created_at: string;
  updated_at: string;
}

export interface EventsTable {
  seq: Generated<number>;
  id: string;
  account_id: string;
  type: string;
  data: string;
  created_at: string;
}

export interface JobsTable {
  id: string;
  kind: string;
  priority: number;
  payload: string;
  state: string;
  attempt: number;
  max_attempts: number;
  run_at: string;
  locked_by: string | null;
  locked_until: string | null;
  lease_token: string | null;
  unique_key: string | null;
  errors: string;
  created_at: string;
  updated_at: string;
  finalized_at: string | null;
  /** Jobs of one group (a webhook subscription) can be capped in flight. */
  group_key: string | null;
  /** What a held job waits on (migration 0021), e.g. `template:<id>`. */
  hold_key?: string | null;
  /** When the job was first held. */
  held_since?: string | null;
}

export interface IdempotencyKeysTable {
  account_id: string;
  key: string;
  route: string;
  request_hash: string;
  response_status: number;
  response_body: string;
  created_at: string;
  expires_at: string;
}

/** One row (id 1): bumped by triggers when a cached lookup may have changed (migration 0007). */
export interface CacheEpochTable {
  id: number;
  n: number;
}

export interface InboundPayloadsTable {
  id: string;
  body: string;
  received_at: string;
  processed_at: string | null;
  error: string | null;
}

export interface WebhooksTable {
  id: string;
  account_id: string;
  url: string;
  /** JSON array of event kinds. */
  events: string;
  description: string | null;
  enabled: number;
  /** JSON array of the custom header names (values are only in headers_enc). */
  header_names: string;
  /** Sealed JSON object of the custom headers, or null when none. */
  headers_enc: string | null;
  secret_enc: string;
  consecutive_failures: number;
  last_delivery_at: string | null;
  last_delivery_status: string | null;
  disabled_at: string | null;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

/** One row per delivery attempt; `pending` is an attempt still to make. */
export interface WebhookDeliveriesTable {
  id: string;
  account_id: string;
  webhook_id: string;
  /** Id of the chain's first row: every attempt of one delivery shares it. */
  root_id: string;
  event_id: string;
  event: string;
  /** The contact an event is about, to deliver contact.created first. */
  subject_id: string | null;
  /** This attempt waits while that chain has a pending attempt. */
  after_root_id: string | null;
  kind: string;
  attempt: number;
  status: string;
  payload_hash: string;
  status_code: number | null;
  outcome: string | null;
  error_message: string | null;
  duration_ms: number | null;
  response_excerpt: string | null;
  redirect_location: string | null;
  redirect_status_code: number | null;
  first_attempt_at: string | null;
  attempted_at: string | null;
  next_attempt_at: string | null;
  created_at: string;
}

export interface SocialAccountsTable {
  id: string;
  account_id: string;
  network: string;
  upstream_id: string;
  username: string;
  name: string | null;
  access_token_enc: string;
  quota_window_start: string | null;
  quota_used: number;
  blocked_until: string | null;
  /** JSON: where an unfinished background refresh stopped. */
  refresh_state: string | null;
  last_refreshed_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface SocialPostsTable {
  social_account_id: string;
  id: string;
  account_id: string;
  network: string;
  type: string;
  permalink: string | null;
  caption: string | null;
  media_url: string | null;
  thumbnail_url: string | null;
  published_at: string;
  expires_at: string | null;
  /** JSON object: metric name to number or null. */
  metrics: string;
  metrics_updated_at: string;
  created_at: string;
  updated_at: string;
}

export interface SocialSnapshotsTable {
  social_account_id: string;
  /** YYYY-MM-DD (UTC): one snapshot per account and day. */
  date: string;
  followers_count: number | null;
  follows_count: number | null;
  media_count: number | null;
  /** JSON object: account insight name to number or null. */
  insights: string;
  captured_at: string;
}

export interface SocialCommentCacheTable {
  social_account_id: string;
  post_id: string;
  fetched_limit: number;
  body: string;
  fetched_at: string;
}

/** Queued batch sends per channel, kept by triggers on messages (migration 0010). */
export interface ChannelBatchBacklogTable {
  channel_id: string;
  queued: number;
}

/** A credential's request bucket on libSQL (GCRA; migration 0022). */
export interface RateBucketsTable {
  key: string;
  /** When the bucket is full again, in ms since the epoch. */
  tat_ms: number;
}

/** A channel's next free send slot on libSQL (migration 0023). */
export interface SendSlotsTable {
  channel_id: string;
  next_ms: number;
}

/** Always empty: a write batch's failed guard tries to insert here (migration 0024). */
export interface BatchGuardTable {
  ok: number;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  agents: AgentsTable;
  agent_login_links: AgentLoginLinksTable;
  agent_sessions: AgentSessionsTable;
  channels: ChannelsTable;
  contacts: ContactsTable;
  templates: TemplatesTable;
  wabas: WabasTable;
  meta_events: MetaEventsTable;
  conversations: ConversationsTable;
  messages: MessagesTable;
  channel_batch_backlog: ChannelBatchBacklogTable;
  media: MediaTable;
  events: EventsTable;
  jobs: JobsTable;
  idempotency_keys: IdempotencyKeysTable;
  cache_epoch: CacheEpochTable;
  rate_buckets: RateBucketsTable;
  send_slots: SendSlotsTable;
  batch_guard: BatchGuardTable;
  inbound_payloads: InboundPayloadsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  social_accounts: SocialAccountsTable;
  social_posts: SocialPostsTable;
  social_snapshots: SocialSnapshotsTable;
  social_comment_cache: SocialCommentCacheTable;
}

/** Every SQL function takes one of these first, so rows, events and jobs can share a transaction. */
export type Executor = Kysely<Database> | Transaction<Database>;
export type Db = Kysely<Database>;
