// Shared steps for the messaging-engine tests: a harness per test, the
// customer writing through the simulator, sends, and database counts.
import { sql } from "kysely";
import {
  APP_SECRET,
  createMessagingHarness,
  type MessagingHarness,
} from "../_support/messaging.ts";
import type { Harness, TestResponse } from "../_harness.ts";
import {
  escapeUnicode,
  signMetaBody,
} from "../../src/upstream/meta_signature.ts";
import { createTemplate } from "../../src/domain/templates/template_service.ts";
import type { Template } from "../../src/domain/templates/template.ts";
import {
  acceptBatch,
  type BatchResult,
} from "../../src/domain/messages/send_service.ts";
import type { Executor } from "../../src/db/schema.ts";
import { PlannedWrites } from "../../src/db/planned_writes.ts";

export type Mh = MessagingHarness;
// deno-lint-ignore no-explicit-any
export type Json = any;
type Options = NonNullable<Parameters<typeof createMessagingHarness>[0]>;

/**
 * Registers a test on its own messaging harness (driven by the test unless
 * `realTime`). The app and the simulator listen on sockets the harness closes
 * at the end, and real-time runs keep timers, so the sanitizers are off.
 */
export function messagingTest(
  name: string,
  fn: (h: Mh) => Promise<void>,
  options: Options = {},
): void {
  Deno.test({
    name,
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async () => {
      await using h = await createMessagingHarness(options);
      await fn(h);
    },
  });
}

let phoneCounter = 0;

/** A fresh Argentine mobile number in E.164 (unique within the run). */
export function newPhone(): string {
  phoneCounter++;
  const tail = (Math.floor(Math.random() * 9000) * 100 + phoneCounter % 100)
    .toString().padStart(6, "0");
  return `+54911${phoneCounter % 10}5${tail}`;
}

/** POST /api/v2/messages on the tenant's channel unless the body names another. */
export async function send(
  h: Mh,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<TestResponse> {
  return await h.request("POST", "/api/v2/messages", {
    body: { phoneNumberId: h.tenant.channel.id, ...body },
    headers,
  });
}

/** Sends and asserts the 201; returns the new message id. */
export async function sendOk(
  h: Mh,
  body: Record<string, unknown>,
): Promise<string> {
  const res = await send(h, body);
  if (res.status !== 201) {
    throw new Error(
      `Expected 201 from POST /messages, got ${res.status}: ${
        JSON.stringify(res.body)
      }`,
    );
  }
  return res.body.data.id;
}

export function textTo(to: string, body = "Hi"): Record<string, unknown> {
  return { to, type: "text", text: { body } };
}

/** GET /api/v2/messages/:id (data). */
export async function getMessage(h: Mh, id: string): Promise<Json> {
  const res = await h.request("GET", `/api/v2/messages/${id}`);
  if (res.status !== 200) {
    throw new Error(`GET /messages/${id} answered ${res.status}`);
  }
  return res.body.data;
}

/** GET /api/v2/conversations/:id (data). */
export async function getConversation(h: Mh, id: string): Promise<Json> {
  const res = await h.request("GET", `/api/v2/conversations/${id}`);
  if (res.status !== 200) {
    throw new Error(`GET /conversations/${id} answered ${res.status}`);
  }
  return res.body.data;
}

/** Waits until the inbound message with this upstream id is stored; returns it as GET shows it. */
export async function waitInbound(h: Mh, wamid: string): Promise<Json> {
  const row = await h.until(
    () =>
      h.container.db.selectFrom("messages").select("id")
        .where("wa_message_id", "=", wamid).executeTakeFirst(),
    `inbound message ${wamid} to be stored`,
  );
  return await getMessage(h, row.id);
}

/** The customer writes (through the simulator); resolves once the message is stored. */
export async function customerWrites(
  h: Mh,
  from: string,
  input: Record<string, unknown> = { type: "text", text: { body: "Hola" } },
): Promise<{ wamid: string; message: Json }> {
  const { wamid } = await h.inbound({ from, name: "Ana", ...input });
  return { wamid, message: await waitInbound(h, wamid) };
}

/** Calls the simulator's control API. */
export async function sim(
  h: Mh,
  path: string,
  body?: unknown,
): Promise<Json> {
  const res = await fetch(`${h.simulator.url}/_sim${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) {
    throw new Error(`Simulator ${path}: ${res.status} ${JSON.stringify(json)}`);
  }
  return json;
}

/** Changes the simulator's behaviour (POST /_sim/behaviour). */
export async function behave(
  h: Mh,
  patch: Record<string, unknown>,
): Promise<void> {
  await sim(h, "/behaviour", patch);
}

/** The sends the simulator accepted whose biz_opaque_callback_data is this message id. */
export async function simSendsOf(h: Mh, messageId: string): Promise<Json[]> {
  const { messages } = await sim(h, "/messages");
  return messages.filter((m: Json) => m.bizOpaque === messageId);
}

/** Read receipts and typing indicators the simulator recorded. */
export async function simReads(h: Mh): Promise<Json[]> {
  return (await sim(h, "/reads")).reads;
}

/** Rows in a table (optionally of one job kind / event type column value). */
export async function countRows(
  h: Mh,
  table:
    | "contacts"
    | "conversations"
    | "messages"
    | "jobs"
    | "events"
    | "inbound_payloads"
    | "media",
  where?: { column: string; value: string },
): Promise<number> {
  const filter = where
    ? sql` where ${sql.ref(where.column)} = ${where.value}`
    : sql``;
  const result = await sql<{ n: number }>`select count(*) as n from ${
    sql.table(table)
  }${filter}`.execute(h.container.db);
  return Number(result.rows[0]!.n);
}

export interface EventRow {
  seq: number;
  type: string;
  data: Json;
}

/** The account's domain events in sequence order. */
export async function events(h: Mh): Promise<EventRow[]> {
  const rows = await h.container.db.selectFrom("events")
    .select(["seq", "type", "data"]).orderBy("seq").execute();
  return rows.map((r) => ({
    seq: Number(r.seq),
    type: r.type,
    data: JSON.parse(r.data),
  }));
}

/** The message.status_changed events of one message, in sequence order. */
export async function statusEvents(
  h: Mh,
  messageId: string,
): Promise<EventRow[]> {
  return (await events(h)).filter((e) =>
    e.type === "message.status_changed" && e.data.id === messageId
  );
}

/** Waits until every webhook payload received so far has been processed. */
export async function waitPayloadsProcessed(h: Mh): Promise<void> {
  await h.until(async () => {
    const pending = await h.container.db.selectFrom("inbound_payloads")
      .select("id").where("processed_at", "is", null).execute();
    return pending.length === 0;
  }, "every webhook payload to be processed");
}

/** Creates a template for the tenant (its channel unless channelId is given; null = global). */
export async function seedTemplate(
  h: Harness,
  input: {
    name?: string;
    status?: string;
    channelId?: string | null;
    body?: string;
    /** Meta's components; a BODY of `body` when absent. */
    components?: Record<string, unknown>[];
  } = {},
): Promise<Template> {
  return await createTemplate(h.container, {
    accountId: h.tenant.account.id,
    channelId: input.channelId === undefined
      ? h.tenant.channel.id
      : input.channelId,
    name: input.name ?? "greeting",
    language: "es_AR",
    category: "UTILITY",
    status: input.status ?? "approved",
    components: input.components ??
      [{ type: "BODY", text: input.body ?? "Hola {{1}}" }],
  });
}

/** A template send body with the given body parameters. */
export function templateTo(
  to: string,
  name = "greeting",
  params: string[] = ["Ana"],
): Record<string, unknown> {
  return {
    to,
    type: "template",
    template: {
      name,
      language: { code: "es_AR" },
      components: [{
        type: "body",
        parameters: params.map((text) => ({ type: "text", text })),
      }],
    },
  };
}

/** acceptBatch() of `templateTo()` sends to `to` on `trx` (80 sends/s), as the batch route calls it. */
export async function acceptTemplates(
  h: Harness,
  trx: Executor,
  to: string[],
  channelId = h.tenant.channel.id,
): Promise<BatchResult> {
  return await acceptItems(h, trx, to.map((phone) => templateTo(phone)), {
    defaultPhoneNumberId: channelId,
  });
}

/** acceptBatch() of `messages` (batch items as posted) for the default tenant. */
export async function acceptItems(
  h: Harness,
  trx: Executor,
  messages: unknown[],
  options: { defaultPhoneNumberId: string },
): Promise<BatchResult> {
  // In place on `trx` (a transaction): PlannedWrites runs nothing later.
  return await acceptBatch(
    trx,
    new PlannedWrites(trx),
    {
      clock: h.clock,
      lookups: h.container.lookups,
      config: { sendRatePerSecond: 80 },
    },
    h.tenant.account.id,
    { defaultPhoneNumberId: options.defaultPhoneNumberId, messages },
  );
}

/** Meta's webhook envelope (§4.3) around one `messages` change value for the tenant's channel. */
export function metaChange(
  h: Pick<Mh, "tenant">,
  value: Record<string, unknown>,
): Record<string, unknown> {
  return {
    object: "whatsapp_business_account",
    entry: [{
      id: h.tenant.channel.wabaId,
      changes: [{
        field: "messages",
        value: {
          messaging_product: "whatsapp",
          metadata: {
            display_phone_number: h.tenant.channel.phoneNumber.slice(1),
            phone_number_id: h.tenant.channel.upstreamPhoneNumberId,
          },
          ...value,
        },
      }],
    }],
  };
}

/** Meta's webhook envelope around one inbound message for the tenant's channel. */
export function inboundEnvelope(
  h: Pick<Mh, "tenant">,
  message: Record<string, unknown>,
  from: string,
): Record<string, unknown> {
  return metaChange(h, {
    contacts: [{ profile: { name: "Ana" }, wa_id: from.slice(1) }],
    messages: [{
      from: from.slice(1),
      timestamp: String(Math.floor(Date.now() / 1000)),
      ...message,
    }],
  });
}

/** Signs and posts a Meta payload; asserts the 200. */
export async function postSigned(h: Mh, payload: unknown): Promise<void> {
  const { raw, signature } = await signedBody(payload);
  const res = await postWebhook(h, raw, signature);
  if (res.status !== 200) {
    throw new Error(`POST /meta/webhook answered ${res.status}`);
  }
}

/** Meta's raw body (escaped unicode) and its X-Hub-Signature-256. */
export function signedBody(
  payload: unknown,
): { raw: string; signature: string } {
  const raw = escapeUnicode(JSON.stringify(payload));
  return { raw, signature: signMetaBody(APP_SECRET, raw) };
}

/** POST /meta/webhook with a raw body and an optional signature header. */
export async function postWebhook(
  h: Pick<Mh, "request">,
  raw: string,
  signature: string | null,
): Promise<TestResponse> {
  return await h.request("POST", "/meta/webhook", {
    rawBody: raw,
    key: null,
    headers: {
      "content-type": "application/json",
      ...(signature === null ? {} : { "x-hub-signature-256": signature }),
    },
  });
}

const RANK: Record<string, number> = {
  queued: 0,
  sent: 1,
  delivered: 2,
  read: 3,
};

/**
 * The status_changed events of a message form one forward chain from
 * `queued` to `last`: each starts where the previous ended and moves up.
 * (Which intermediate steps appear depends on the order reports are applied.)
 */
export function assertForwardChain(
  changes: EventRow[],
  last: string,
): void {
  let previous = "queued";
  for (const { data } of changes) {
    if (data.previousStatus !== previous) {
      throw new Error(
        `Event starts at "${data.previousStatus}", expected "${previous}"`,
      );
    }
    if (!(RANK[data.newStatus]! > RANK[previous]!)) {
      throw new Error(`Event moves ${previous} -> ${data.newStatus}`);
    }
    previous = data.newStatus;
  }
  if (previous !== last) {
    throw new Error(`Events end at "${previous}", expected "${last}"`);
  }
}
