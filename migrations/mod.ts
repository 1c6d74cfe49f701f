// Static index of every migration, so `deno compile` embeds them. Append only.
import type { Migration } from "kysely";
import * as m0001 from "./0001_initial.ts";
import * as m0002 from "./0002_messages_channel_backlog.ts";
import * as m0003 from "./0003_webhooks.ts";
import * as m0004 from "./0004_contact_identities.ts";
import * as m0005 from "./0005_token_last_used.ts";
import * as m0006 from "./0006_social.ts";
import * as m0007 from "./0007_cache_epoch.ts";
import * as m0008 from "./0008_jobs_ungrouped_idx.ts";
import * as m0009 from "./0009_jobs_lean_indexes.ts";
import * as m0010 from "./0010_channel_batch_backlog.ts";
import * as m0011 from "./0011_drop_messages_inbound_idx.ts";
import * as m0012 from "./0012_list_indexes_ascending.ts";
import * as m0013 from "./0013_webhook_deliveries_lean_indexes.ts";
import * as m0014 from "./0014_backlog_counted_per_insert.ts";
import * as m0015 from "./0015_drop_conversations_contact_idx.ts";
import * as m0016 from "./0016_webhook_batch_lane.ts";
import * as m0017 from "./0017_webhook_jobs_owned_groups.ts";
import * as m0018 from "./0018_panel_agents.ts";
import * as m0019 from "./0019_conversations_activity_idx.ts";
import * as m0020 from "./0020_meta_sync.ts";
import * as m0021 from "./0021_job_holds.ts";
import * as m0022 from "./0022_rate_buckets.ts";
import * as m0023 from "./0023_send_slots.ts";
import * as m0024 from "./0024_batch_guard.ts";
import * as m0025 from "./0025_maintenance_lane.ts";

export const migrations: Record<string, Migration> = {
  "0001_initial": m0001,
  "0002_messages_channel_backlog": m0002,
  "0003_webhooks": m0003,
  "0004_contact_identities": m0004,
  "0005_token_last_used": m0005,
  "0006_social": m0006,
  "0007_cache_epoch": m0007,
  "0008_jobs_ungrouped_idx": m0008,
  "0009_jobs_lean_indexes": m0009,
  "0010_channel_batch_backlog": m0010,
  "0011_drop_messages_inbound_idx": m0011,
  "0012_list_indexes_ascending": m0012,
  "0013_webhook_deliveries_lean_indexes": m0013,
  "0014_backlog_counted_per_insert": m0014,
  "0015_drop_conversations_contact_idx": m0015,
  "0016_webhook_batch_lane": m0016,
  "0017_webhook_jobs_owned_groups": m0017,
  "0018_panel_agents": m0018,
  "0019_conversations_activity_idx": m0019,
  "0020_meta_sync": m0020,
  "0021_job_holds": m0021,
  "0022_rate_buckets": m0022,
  "0023_send_slots": m0023,
  "0024_batch_guard": m0024,
  "0025_maintenance_lane": m0025,
};
