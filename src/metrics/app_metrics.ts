import {
  type Counter,
  type Gauge,
  type Histogram,
  Registry,
} from "./registry.ts";

/** Outcome classes of a webhook attempt, as counted and logged. */
export const DELIVERY_OUTCOMES = [
  "2xx",
  "3xx",
  "4xx",
  "5xx",
  "timeout",
  "blocked",
  "error",
] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

/** The program's metrics; gauges are refreshed from the database at scrape time. */
export interface AppMetrics {
  registry: Registry;
  httpRequests: Counter;
  httpDuration: Histogram;
  webhookDeliveries: Counter;
  webhookDuration: Histogram;
  webhookAutoDisabled: Counter;
  jobsReady: Gauge;
  jobsOldestReadyAge: Gauge;
  jobsRunning: Gauge;
  webhooksDisabled: Gauge;
  /** /meta/webhook bodies read before their signature is known (src/http/webhook_gate.ts). */
  unverifiedReads: Gauge;
  unverifiedBytes: Gauge;
  unverifiedRefused: Counter;
  /** libSQL: writes in flight, waiting, the peak, and retries (src/db/write_slots.ts). */
  dbWrites: Gauge;
}

/** Builds the registry with every metric the program exports. */
export function createAppMetrics(): AppMetrics {
  const registry = new Registry();
  return {
    registry,
    httpRequests: registry.counter(
      "http_requests_total",
      "HTTP requests by method, route pattern and status",
    ),
    httpDuration: registry.histogram(
      "http_request_duration_seconds",
      "HTTP request latency by method and route pattern",
    ),
    webhookDeliveries: registry.counter(
      "webhook_deliveries_total",
      "Webhook delivery attempts by outcome class (2xx, 3xx, 4xx, 5xx, timeout, blocked, error) and kind",
    ),
    webhookDuration: registry.histogram(
      "webhook_delivery_duration_seconds",
      "Webhook delivery attempt latency by outcome class",
    ),
    webhookAutoDisabled: registry.counter(
      "webhook_subscriptions_auto_disabled_total",
      "Subscriptions this process disabled after consecutive failures",
    ),
    jobsReady: registry.gauge(
      "jobs_ready",
      "Jobs due to run and waiting for a worker, by lane",
    ),
    jobsOldestReadyAge: registry.gauge(
      "jobs_oldest_ready_age_seconds",
      "How long the oldest due job of each lane has waited",
    ),
    jobsRunning: registry.gauge("jobs_running", "Jobs running, by lane"),
    webhooksDisabled: registry.gauge(
      "webhook_subscriptions_disabled",
      "Disabled subscriptions, by reason (auto or manual)",
    ),
    unverifiedReads: registry.gauge(
      "meta_webhook_unverified_reads",
      "/meta/webhook posts whose body is being read before its signature is known (state=reading), waiting for a read slot (state=waiting), and the bound on reads (state=limit)",
    ),
    unverifiedBytes: registry.gauge(
      "meta_webhook_unverified_bytes",
      "Bytes of /meta/webhook bodies held before their signature is known (state=buffered), the most held at once since start (state=peak), reserved for the reads in progress (state=reserved), and the bound (state=limit)",
    ),
    dbWrites: registry.gauge(
      "db_writes",
      "libSQL: writes this process has in flight (state=in_flight, at most 2), waiting for a slot (state=waiting), the most in flight at once since start (state=peak), and statements tried again after a busy server since start (state=retries)",
    ),
    unverifiedRefused: registry.counter(
      "meta_webhook_unverified_refused_total",
      "/meta/webhook posts refused or cut off before their signature was known, by reason (blocked, full, evicted, too_slow, timeout)",
    ),
  };
}
