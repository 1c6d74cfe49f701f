/**
 * Every job kind the program runs, in one table: payload schema, lane
 * (priority), max attempts and unique key. Enqueueing is typed by it (a
 * misspelled kind or a wrong payload fails the type check) and fills in the
 * lane, attempts and key it gives. The handler and final-failure hook of each
 * kind are in jobs/handlers/<kind>.ts, listed by jobs/registry.ts against the
 * same kinds (a kind without a handler fails the type check there): they call
 * into the domain, which enqueues through this table, so one literal table
 * would be an import cycle.
 *
 * Each payload schema is written as a function of zod, built the first time
 * its kind runs (payloadSchema()), so the program does not load zod to start.
 */
import type { z } from "zod";

/** The zod namespace a payload schema is built with. */
type Zod = typeof z;

/** Lanes: lower runs first, so a live send is claimed before any queued batch work. */
export const PRIORITY = {
  live: 0,
  inbound: 5,
  /** Tests and replays a user asked for, ahead of the event deliveries queued before them. */
  webhookManual: 8,
  webhook: 10,
  /**
   * Deliveries of a campaign's events (its messages' status changes, the
   * contacts and conversations a batch made): behind live chat's, as their
   * sends are behind live sends.
   */
  webhookBatch: 12,
  media: 20,
  /**
   * Cron's ticks (rescue, prune, the refreshes they queue): short, and ahead
   * of a campaign's sends, which are due without end while one runs (at 40,
   * behind them, a tick's job never ran during a campaign; migration 0025).
   */
  maintenance: 25,
  batch: 30,
} as const;

/**
 * The lanes of the webhook pool, which has workers of its own (lifecycle.ts);
 * the main pool serves every other lane.
 */
export const WEBHOOK_LANES: readonly number[] = [
  PRIORITY.webhookManual,
  PRIORITY.webhook,
  PRIORITY.webhookBatch,
];

export const DEFAULT_MAX_ATTEMPTS = 25;

export interface KindSpec<S extends z.ZodType> {
  /** Payloads carry ids, not copies: handlers reload the current state. */
  payload: (zod: Zod) => S;
  /** The default priority; enqueue may pass another (a batch send). */
  lane: number;
  /** @default DEFAULT_MAX_ATTEMPTS */
  maxAttempts?: number;
  /** The default unique key of a job with this payload. */
  uniqueKey?: (payload: z.output<S>) => string;
}

function kind<S extends z.ZodType>(spec: KindSpec<S>): KindSpec<S> {
  return spec;
}

const None = (z: Zod) => z.object({}).passthrough();

export const JOB_KINDS = {
  "message.send": kind({
    payload: (z) => z.object({ messageId: z.string() }),
    lane: PRIORITY.live,
    maxAttempts: 12,
    uniqueKey: (p) => `message.send:${p.messageId}`,
  }),
  "meta.inbound": kind({
    payload: (z) => z.object({ payloadId: z.string() }),
    lane: PRIORITY.inbound,
    maxAttempts: 20,
    uniqueKey: (p) => `meta.inbound:${p.payloadId}`,
  }),
  /** One status report that matched no message yet, tried again on its own. */
  "meta.status": kind({
    payload: (z) =>
      z.object({
        payloadId: z.string(),
        entry: z.number().int(),
        change: z.number().int(),
        status: z.number().int(),
      }),
    lane: PRIORITY.inbound,
    maxAttempts: 20,
    uniqueKey: (p) =>
      `meta.status:${p.payloadId}:${p.entry}.${p.change}.${p.status}`,
  }),
  "media.download": kind({
    payload: (z) => z.object({ mediaId: z.string() }),
    lane: PRIORITY.media,
    maxAttempts: 8,
    uniqueKey: (p) => `media.download:${p.mediaId}`,
  }),
  "webhook.deliver": kind({
    payload: (z) => z.object({ deliveryId: z.string() }),
    lane: PRIORITY.webhook,
    // The attempt schedule lives in the delivery rows; a job only fails when
    // the database does, and must outlast an outage rather than drop its row
    // (hourly once backed off: about a week).
    maxAttempts: 200,
    uniqueKey: (p) => `webhook.deliver:${p.deliveryId}`,
  }),
  /** A WABA's templates synced from Meta (cron, `templates sync`, a webhook). */
  "templates.sync": kind({
    payload: (z) => z.object({ wabaId: z.string() }),
    // Ahead of campaign sends: a paused template must be known during one.
    lane: PRIORITY.media,
    maxAttempts: 5,
  }),
  /** The cron tick's job: a sync for every WABA whose last one is too old. */
  "templates.sync_due": kind({ payload: None, lane: PRIORITY.maintenance }),
  /** One template read again, by Meta's id or by name (every language). */
  "template.refresh": kind({
    payload: (z) =>
      z.object({
        wabaId: z.string(),
        name: z.string().optional(),
        metaTemplateId: z.string().optional(),
      }),
    lane: PRIORITY.media,
    maxAttempts: 5,
  }),
  /** A number's health read from Meta (GET /{phone-number-id}). */
  "channel.health": kind({
    payload: (z) => z.object({ channelId: z.string() }),
    lane: PRIORITY.media,
    maxAttempts: 5,
  }),
  /** The hourly tick's job: a health check of every channel. */
  "channels.health_all": kind({ payload: None, lane: PRIORITY.maintenance }),
  "social.refresh": kind({
    payload: (z) => z.object({ socialAccountId: z.string() }),
    lane: PRIORITY.maintenance,
  }),
  "social.refresh_all": kind({ payload: None, lane: PRIORITY.maintenance }),
  "jobs.rescue": kind({ payload: None, lane: PRIORITY.maintenance }),
  "jobs.prune": kind({ payload: None, lane: PRIORITY.maintenance }),
} as const;

export type JobKind = keyof typeof JOB_KINDS;

/** Kind K's payload schema. */
type PayloadSchema<K extends JobKind> = ReturnType<
  (typeof JOB_KINDS)[K]["payload"]
>;

/** What enqueue takes for kind K. */
export type JobPayload<K extends JobKind> = z.input<PayloadSchema<K>>;

/** What the handler of kind K gets (parsed by its schema). */
export type ParsedPayload<K extends JobKind> = z.output<PayloadSchema<K>>;

const built = new Map<JobKind, z.ZodType>();

/** Kind K's payload schema, built (and zod imported) on its first use. */
export async function payloadSchema<K extends JobKind>(
  kind: K,
): Promise<z.ZodType<ParsedPayload<K>>> {
  let schema = built.get(kind);
  if (!schema) {
    const { z } = await import("zod");
    schema = JOB_KINDS[kind].payload(z);
    built.set(kind, schema);
  }
  return schema as z.ZodType<ParsedPayload<K>>;
}

/** True for a kind in the table (a kind read from the database or config). */
export function isJobKind(kind: string): kind is JobKind {
  return Object.hasOwn(JOB_KINDS, kind);
}
