/**
 * Meta's management webhooks (issue 28): template, number and account
 * changes on the same signed /meta/webhook as messages, routed by
 * entry[].id (the WABA id: these values carry no phone metadata). Each
 * change is stored with its value as received (ids past 2^53 read from the
 * raw text, every Meta id a string) and applied atomically with it (one
 * batch after its reads on libSQL, guarded on what it read),
 * once per (WABA, field, entry time, value): Meta retries and sends to every
 * subscribed app, so duplicates are the rule. An unknown field or WABA, or a value of
 * an unexpected shape, is stored and logged (once per field or WABA per
 * process), never an error.
 */
import type { Db } from "../../db/schema.ts";
import type { GroupCommit } from "../../db/group_commit.ts";
import type { Clock } from "../../clock.ts";
import type { Logger } from "../../log.ts";
import { sha256HexSync } from "../../crypto.ts";
import { newId } from "../../ids.ts";
import { toDbTime } from "../../db/time.ts";
import { parseJsonExact, parseJsonVerbatim } from "../../text.ts";
import { canonicalJson } from "../idempotency/idempotency_service.ts";
import { findWaba } from "../wabas/waba_repo.ts";
import type { ManagementField } from "../wabas/webhook_fields.ts";
import { hasMetaEvent, insertMetaEvent } from "./meta_event_repo.ts";
import type { Applied, ManagementChange } from "./management_change.ts";
import { str } from "./management_change.ts";
import {
  applyTemplateCategory,
  applyTemplateComponents,
  applyTemplateQuality,
  applyTemplateStatus,
} from "./management_templates_service.ts";
import {
  applyAccountAlert,
  applyAccountUpdate,
  applyNumberName,
  applyNumberQuality,
} from "./management_accounts_service.ts";

type Handler = (change: ManagementChange) => Promise<Applied> | Applied;

/** The management fields applied, by webhook field (every one of MANAGEMENT_FIELDS). */
const HANDLERS: Record<ManagementField, Handler> = {
  message_template_status_update: applyTemplateStatus,
  message_template_quality_update: applyTemplateQuality,
  message_template_components_update: applyTemplateComponents,
  template_category_update: applyTemplateCategory,
  phone_number_quality_update: applyNumberQuality,
  phone_number_name_update: applyNumberName,
  account_update: applyAccountUpdate,
  account_alerts: applyAccountAlert,
};

/** Fields Meta sends that are stored for the operator and change nothing here. */
const RECORDED_ONLY = new Set([
  "business_capability_update",
  "security",
  "account_review_update",
  "user_preferences",
]);

/** Whether a webhook field is a management one (anything but messages and echoes). */
export function isManagementField(field: string): boolean {
  return field !== "messages" && field !== "smb_message_echoes";
}

export interface ManagementDeps {
  db: Db;
  /** Writes each change atomically with what it applies (runPlanned). */
  commits: Pick<GroupCommit, "runPlanned">;
  clock: Clock;
  log: Logger;
}

/** Unknown fields and WABAs already logged by this process (bounded). */
const logged = new Set<string>();
const MAX_LOGGED = 1_000;

function logOnce(log: Logger, key: string, message: string, fields: object) {
  if (logged.has(key)) return;
  if (logged.size >= MAX_LOGGED) logged.clear();
  logged.add(key);
  log.warn(message, fields as Record<string, unknown>);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The field a change is applied as: a quality change Meta's older docs
 * show under message_template_status_update is read by its keys.
 */
function fieldOf(field: string, value: Record<string, unknown>): string {
  if (
    field === "message_template_status_update" && value.event === undefined &&
    value.new_quality_score !== undefined
  ) return "message_template_quality_update";
  return field;
}

/**
 * Stores and applies every management change of a stored payload (read
 * again from its raw text, so ids stay exact); returns how many were
 * applied. Each change commits on its own, with the jobs it queues.
 */
export async function applyManagementChanges(
  deps: ManagementDeps,
  input: { payloadId: string; body: string },
): Promise<number> {
  let parsed: unknown;
  let verbatim: unknown;
  try {
    parsed = parseJsonExact(input.body);
    verbatim = parseJsonVerbatim(input.body);
  } catch {
    return 0;
  }
  const entries = isObject(parsed) && Array.isArray(parsed.entry)
    ? parsed.entry
    : [];
  const rawEntries = (verbatim as { entry: unknown[] }).entry;
  let applied = 0;
  for (const [e, entry] of entries.entries()) {
    if (!isObject(entry) || !Array.isArray(entry.changes)) continue;
    const wabaId = str(entry.id);
    const time = Number(entry.time);
    const entryTime = Number.isFinite(time) && time > 0 ? time : null;
    for (const [c, change] of entry.changes.entries()) {
      if (!isObject(change) || typeof change.field !== "string") continue;
      if (!isManagementField(change.field)) continue;
      const raw = (rawEntries[e] as { changes: { value?: unknown }[] })
        .changes[c]!;
      const done = await applyOne(deps, {
        payloadId: input.payloadId,
        wabaId,
        entryTime,
        field: change.field,
        value: change.value,
        // As Meta wrote it: every number's digits, an id past 2^53 too.
        valueText: JSON.stringify(raw.value ?? null),
      });
      if (done) applied++;
    }
  }
  return applied;
}

/**
 * Stores one change and applies it atomically; false when it was a
 * duplicate or not applied. The change's row goes in with its outcome, last
 * of its statements, guarded: a copy another instance stored meanwhile
 * plans it again (then seen as the duplicate it is).
 */
async function applyOne(
  deps: ManagementDeps,
  input: {
    payloadId: string;
    wabaId: string | null;
    entryTime: number | null;
    field: string;
    value: unknown;
    valueText: string;
  },
): Promise<boolean> {
  const now = deps.clock.now();
  const wabaId = input.wabaId ?? "";
  const valueText = input.valueText;
  const value = isObject(input.value) ? input.value : null;
  const field = value ? fieldOf(input.field, value) : input.field;
  const handler = Object.hasOwn(HANDLERS, field)
    ? HANDLERS[field as ManagementField]
    : undefined;
  const id = newId(now.getTime());
  const row = {
    id,
    payload_id: input.payloadId,
    waba_id: wabaId,
    account_id: null as string | null,
    field: input.field,
    event: value ? str(value.event) : null,
    subject: null,
    entry_time: input.entryTime,
    // A retry (Meta's, or the copy every subscribed app gets) repeats the
    // entry's time with the value; the same value at another time is a new
    // event (a template approved, paused, then approved again sends the
    // same APPROVED value twice).
    dedupe_key: sha256HexSync(
      `${wabaId}\u0000${input.field}\u0000${input.entryTime ?? ""}\u0000${
        canonicalJson(input.value ?? null)
      }`,
    ),
    value: valueText,
    outcome: "received",
    note: null,
    received_at: toDbTime(now),
  };
  const done = await deps.commits.runPlanned(async (db, writes) => {
    if (await hasMetaEvent(db, row.dedupe_key)) return () => null;
    const waba = wabaId ? await findWaba(db, wabaId) : undefined;
    let applied: Applied;
    if (!handler) {
      applied = {
        outcome: "recorded",
        note: RECORDED_ONLY.has(input.field)
          ? "stored for the operator"
          : "unknown field",
      };
    } else if (!waba) {
      applied = {
        outcome: "recorded",
        note: "unknown WhatsApp Business Account",
      };
    } else if (!value) {
      applied = { outcome: "unreadable", note: "its value is not an object" };
    } else {
      applied = await handler({
        db,
        writes,
        waba,
        field,
        value,
        entryTime: input.entryTime,
        now,
        eventId: id,
      });
    }
    await insertMetaEvent(writes.db, {
      ...row,
      account_id: waba?.accountId ?? null,
      outcome: applied.outcome,
      note: applied.note ?? null,
      subject: applied.subject ?? null,
      event: applied.event ?? row.event,
    });
    writes.expectChanges(1);
    return () => ({ outcome: applied, waba });
  });
  if (!done) return false;
  const { outcome, waba } = done;
  if (!handler && !RECORDED_ONLY.has(input.field)) {
    logOnce(
      deps.log,
      `field:${input.field}`,
      "Stored a management webhook of an unknown field",
      {
        field: input.field,
        wabaId,
        payloadId: input.payloadId,
      },
    );
  } else if (!waba) {
    logOnce(
      deps.log,
      `waba:${wabaId}`,
      "Stored a management webhook of an unknown WhatsApp Business Account",
      {
        field: input.field,
        wabaId,
        payloadId: input.payloadId,
      },
    );
  } else if (outcome.outcome === "unreadable") {
    deps.log.warn("Stored a management webhook that cannot be applied", {
      field: input.field,
      wabaId,
      payloadId: input.payloadId,
      note: outcome.note,
    });
  } else if (
    input.field === "account_alerts" || input.field === "account_update"
  ) {
    deps.log.warn("Meta reported an account change", {
      field: input.field,
      wabaId,
      event: outcome.event,
      note: outcome.note,
    });
  }
  return outcome.outcome === "applied" ||
    outcome.outcome === "refresh_queued" ||
    outcome.outcome === "unknown_template";
}
