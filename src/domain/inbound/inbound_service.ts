import type { Db } from "../../db/schema.ts";
import type { GroupCommit } from "../../db/group_commit.ts";
import type { Clock } from "../../clock.ts";
import type { Logger } from "../../log.ts";
import { AppError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import { safeEqual } from "../../crypto.ts";
import { toDbTime } from "../../db/time.ts";
import { enqueue, PRIORITY } from "../../jobs/queue.ts";
import type { z } from "zod";
import {
  MetaContact,
  MetaMessage,
  MetaPayload,
  MetaStatus,
  MetaValue,
} from "./meta_payload.ts";
import {
  applyEchoMessage,
  applyInboundMessage,
  applyStatus,
} from "./inbound_apply_service.ts";
import { recipientOf, type Sender, senderOf, soleSender } from "./sender.ts";
import { jsonDepthProblem } from "../json_bounds.ts";
import { parseJsonWithoutNul, replaceNul } from "../../text.ts";
import {
  enqueueStatusRetry,
  type StatusAt,
  unmatchedNote,
} from "./unmatched_status_service.ts";
import {
  findInboundPayload,
  insertInboundPayload,
  markInboundPayloadProcessed,
} from "./inbound_payload_repo.ts";
import { applyStatusWebhook, statusOnly } from "./status_webhook_service.ts";

/** Webhook fields read: customer messages and statuses, and Business app echoes. */
const HANDLED_FIELDS = ["messages", "smb_message_echoes"];
import { findChannelByUpstreamId } from "../channels/channel_repo.ts";
import { applyManagementChanges } from "./management_service.ts";
import {
  markAllWebhookVerified,
  markWebhookVerified,
} from "../channels/channel_repo.ts";

export interface InboundDeps {
  db: Db;
  /** Status-only callbacks commit together (status_webhook_service.ts). */
  commits: Pick<GroupCommit, "run" | "runPlanned">;
  clock: Clock;
  log: Logger;
  config: {
    metaAppSecret: string | undefined;
    metaVerifyToken: string | undefined;
  };
  jobs: { notify(lanes?: Iterable<number>): void };
}

/**
 * Records a successful handshake: Meta reaches this server, so every
 * channel's webhook is verified. Never fails the handshake: a write that
 * fails is logged.
 */
export async function recordHandshake(
  deps: Pick<InboundDeps, "db" | "log">,
): Promise<void> {
  try {
    await markAllWebhookVerified(deps.db);
  } catch (err) {
    deps.log.warn("Cannot record the webhook verification", { err });
  }
}

/** Answers Meta's verification handshake: the challenge when mode and token match. */
export function verifyHandshake(
  deps: Pick<InboundDeps, "config">,
  query: { mode?: string; token?: string; challenge?: string },
): string {
  const expected = deps.config.metaVerifyToken;
  if (
    !expected || query.mode !== "subscribe" ||
    !safeEqual(query.token ?? "", expected) || !query.challenge
  ) {
    throw new AppError(
      "FORBIDDEN",
      "Webhook verification failed: mode or verify token does not match",
    );
  }
  return query.challenge;
}

/**
 * Stores a payload whose signature the caller verified, with its processing
 * job, atomically (a group commit's transaction, or on libSQL a batch);
 * processing
 * happens later, from the stored
 * payload. A body that is not JSON or not a Meta envelope is stored with its
 * error and no job, and logged: it is still acknowledged, since Meta would
 * retry it for days.
 */
export async function acceptMetaWebhook(
  deps: InboundDeps,
  rawBody: Uint8Array,
): Promise<string> {
  const text = new TextDecoder().decode(rawBody);
  const { payload, error } = readEnvelope(text);
  const now = deps.clock.now();
  const id = newId(now.getTime());
  // Status callbacks are applied here and now (see status_webhook_service.ts).
  const changes = payload ? statusOnly(payload) : null;
  if (changes && await applyStatusWebhook(deps, { id, text, now, changes })) {
    return id;
  }
  await deps.commits.runPlanned(async (_db, writes) => {
    await insertInboundPayload(writes.db, {
      id,
      // JSON writes a NUL as an escape; a body that is not JSON may hold one.
      body: error ? replaceNul(text) : text,
      receivedAt: toDbTime(now),
      processedAt: error ? toDbTime(now) : null,
      error,
    });
    if (!error) {
      await enqueue(
        writes.db,
        { kind: "meta.inbound", payload: { payloadId: id } },
        now,
      );
    }
    return () => undefined;
  });
  if (error) {
    deps.log.warn("Stored a signed webhook that cannot be processed", {
      payloadId: id,
      error,
    });
  } else deps.jobs.notify([PRIORITY.inbound]);
  return id;
}

/** The Meta envelope of a webhook body, or why it cannot be processed. */
function readEnvelope(
  text: string,
): { payload: MetaPayload; error: null } | { payload?: never; error: string } {
  let parsed: unknown;
  try {
    // Meta's text is stored, never refused: a NUL becomes U+FFFD (src/text.ts).
    parsed = parseJsonWithoutNul(text);
  } catch {
    return { error: "Cannot parse webhook body: it is not valid JSON" };
  }
  const envelope = MetaPayload.safeParse(parsed);
  return envelope.success ? { payload: envelope.data, error: null } : {
    error: "Cannot read webhook body: it is not a Meta webhook envelope",
  };
}

/** Id of a raw element for a log line, when it has one. */
function idOf(raw: unknown): string {
  const id = (raw as { id?: unknown } | null)?.id;
  return typeof id === "string" ? `"${id}"` : "without id";
}

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  return issue
    ? `${issue.path.join(".") || "value"}: ${issue.message}`
    : "unreadable";
}

/** The readable `contacts[]` entries; an unreadable one is recorded and left out. */
function readContacts(
  raw: unknown[],
  skip: (reason: string) => void,
): MetaContact[] {
  return raw.flatMap((entry, i) => {
    const parsed = MetaContact.safeParse(entry);
    if (parsed.success) return [parsed.data];
    skip(`contact ${i}: ${firstIssue(parsed.error)}`);
    return [];
  });
}

/** How the messages of one change are read: its contacts, and where notes go. */
interface ChangeReader {
  contacts: MetaContact[];
  /** The change's messages (or echoes) come from one sender (soleSender). */
  soleSender: boolean;
  /** A part left out, with why. */
  skip: (reason: string) => void;
  /** A part ignored while the rest was applied, with why. */
  ignore: (reason: string) => void;
}

/**
 * One message (with its sender) or echo (with its recipient), or null after
 * recording why it cannot be read.
 */
function readMessage(
  raw: unknown,
  kind: "message" | "echo",
  reader: ChangeReader,
): { message: MetaMessage; person: Sender } | null {
  const { skip } = reader;
  const parsed = MetaMessage.safeParse(raw);
  if (!parsed.success) {
    skip(`${kind} ${idOf(raw)}: ${firstIssue(parsed.error)}`);
    return null;
  }
  // Parts of a message are stored and shown as sent: past this depth they
  // would break every serializer that shows them afterwards.
  const tooDeep = jsonDepthProblem(raw);
  if (tooDeep) {
    skip(`${kind} ${idOf(raw)}: ${tooDeep}`);
    return null;
  }
  const who = (kind === "echo" ? recipientOf : senderOf)(
    parsed.data,
    reader.contacts,
    { soleSender: reader.soleSender },
  );
  if ("refused" in who) {
    skip(`${kind} ${idOf(raw)}: ${who.refused}`);
    return null;
  }
  if (who.ignored) reader.ignore(`${kind} ${idOf(raw)}: ${who.ignored}`);
  return { message: parsed.data, person: who.sender };
}

/**
 * Applies a stored payload: every message and status in every entry and
 * change, each in its own transaction and idempotent on upstream ids, so a
 * re-run after a crash or a Meta retry changes nothing twice. Each message
 * and status is read on its own: one that cannot be understood is skipped
 * with its reason (logged, and kept on the stored payload) and the others
 * are applied.
 */
export async function processInboundPayload(
  deps: InboundDeps,
  payloadId: string,
): Promise<void> {
  const stored = await findInboundPayload(deps.db, payloadId);
  if (!stored) return;
  const payload = MetaPayload.parse(parseJsonWithoutNul(stored.body));
  const skipped: string[] = [];
  const skip = (reason: string) => {
    deps.log.warn("Skipping part of a webhook", { payloadId, reason });
    skipped.push(reason);
  };
  const ignored: string[] = [];
  const ignore = (reason: string) => {
    deps.log.warn("Ignoring part of a webhook", { payloadId, reason });
    ignored.push(reason);
  };
  const unmatched: StatusAt[] = [];
  let management = false;
  for (const [e, entry] of payload.entry.entries()) {
    for (const [c, change] of entry.changes.entries()) {
      if (!HANDLED_FIELDS.includes(change.field)) {
        management = true;
        continue;
      }
      const value = MetaValue.safeParse(change.value);
      if (!value.success) {
        skip(`change: ${firstIssue(value.error)}`);
        continue;
      }
      const channel = await findChannelByUpstreamId(
        deps.db,
        value.data.metadata.phone_number_id,
      );
      if (!channel) {
        skip(
          `change: unknown phone number id "${value.data.metadata.phone_number_id}"`,
        );
        continue;
      }
      const contacts = readContacts(value.data.contacts ?? [], skip);
      const messages = value.data.messages ?? [];
      const echoes = value.data.message_echoes ?? [];
      const reader = { contacts, skip, ignore };
      const fromOne = { ...reader, soleSender: soleSender(messages) };
      for (const raw of messages) {
        const read = readMessage(raw, "message", fromOne);
        if (!read) continue;
        const skipped = await applyInboundMessage(deps, channel, {
          message: read.message,
          sender: read.person,
        });
        if (skipped) skip(`message ${idOf(raw)}: ${skipped}`);
      }
      const toOne = {
        ...reader,
        soleSender: soleSender(echoes, ["to", "to_user_id"]),
      };
      for (const raw of echoes) {
        const read = readMessage(raw, "echo", toOne);
        if (!read) continue;
        await applyEchoMessage(deps, channel, {
          echo: read.message,
          recipient: read.person,
        });
      }
      for (const [i, raw] of (value.data.statuses ?? []).entries()) {
        const status = MetaStatus.safeParse(raw);
        if (!status.success) {
          skip(`status ${idOf(raw)}: ${firstIssue(status.error)}`);
          continue;
        }
        if (!(await applyStatus(deps, channel, status.data))) {
          unmatched.push({ payloadId, entry: e, change: c, status: i });
        }
      }
      for (const error of value.data.errors ?? []) {
        deps.log.warn("Upstream reported a system error", { payloadId, error });
      }
    }
  }
  // A signed post names its WABAs: their channels' webhook is verified.
  await markWebhookVerified(
    deps.db,
    payload.entry.flatMap((entry) => entry.id ? [entry.id] : []),
  );
  if (management) {
    await applyManagementChanges(deps, { payloadId, body: stored.body });
  }
  const now = deps.clock.now();
  const problems = [
    ...(skipped.length ? [`skipped ${skipped.join("; ")}`] : []),
    ...(ignored.length ? [`ignored ${ignored.join("; ")}`] : []),
    ...(unmatched.length ? [unmatchedNote(unmatched.length)] : []),
  ];
  await deps.commits.runPlanned(async (_db, writes) => {
    // Only the unmatched statuses wait, each in its own job: the payload is done.
    for (const at of unmatched) await enqueueStatusRetry(writes.db, at, now);
    await markInboundPayloadProcessed(writes.db, payloadId, {
      at: toDbTime(now),
      error: problems.length ? problems.join("; ") : null,
    });
    return () => undefined;
  });
  if (unmatched.length) deps.jobs.notify([PRIORITY.inbound]);
}
