// After the run: every list endpoint, paged to its end, and a GET for every
// stored row of the tenant must answer 200, and each list must hold every row
// the database holds for it (fuzzed rows must stay readable and reachable).
import type { Harness } from "../../_harness.ts";
import type { Json } from "../../http/_routes.ts";
import { API_PREFIX } from "../../http/_routes.ts";
import { toE164 } from "../../../src/domain/phones/phone.ts";
import type { Finding, Reply } from "./oracle.ts";
import type { FuzzRequest } from "./requests.ts";

export type Send = (req: FuzzRequest) => Promise<Reply>;

interface Walker {
  send: Send;
  key: string;
  findings: Finding[];
  count: number;
}

async function get(w: Walker, url: string): Promise<Json | undefined> {
  const request: FuzzRequest = {
    label: `walk ${url.split("?")[0]!.replace(/[0-9a-f-]{36}/g, "{id}")}`,
    method: "GET",
    url: API_PREFIX + url,
    headers: { authorization: `Bearer ${w.key}` },
  };
  const reply = await w.send(request);
  w.count++;
  if (reply.status === 200) return JSON.parse(reply.text);
  w.findings.push({
    kind: `walk GET ${
      url.replace(/[0-9a-f-]{36}/g, "{id}").split("?")[0]
    } -> ${reply.status}`,
    problem: "expected 200",
    request,
    status: reply.status,
    response: reply.text.slice(0, 300),
  });
  return undefined;
}

/** Pages a cursor list to its end; returns the ids seen. */
async function cursorList(w: Walker, url: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor = "";
  for (let page = 0; page < 10_000; page++) {
    const sep = url.includes("?") ? "&" : "?";
    const body = await get(
      w,
      `${url}${sep}limit=100${
        cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""
      }`,
    );
    if (!body) break;
    for (const row of body.data ?? []) ids.push(row.id ?? row.eventId);
    if (!body.meta?.hasMore) break;
    cursor = body.meta.cursor;
  }
  return ids;
}

/** Pages a page-numbered list to its end; returns the ids seen. */
async function pagedList(w: Walker, url: string): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 1; page < 10_000; page++) {
    const body = await get(w, `${url}?page=${page}&pageSize=100`);
    if (!body) break;
    for (const row of body.data ?? []) ids.push(row.id);
    if (page * 100 >= (body.meta?.total ?? 0)) break;
  }
  return ids;
}

function missing(w: Walker, list: string, listed: string[], stored: string[]) {
  const seen = new Set(listed);
  const absent = stored.filter((id) => !seen.has(id));
  if (absent.length === 0) return;
  w.findings.push({
    kind:
      `walk GET ${list}: ${absent.length} stored rows missing from the list`,
    problem: "list incomplete",
    request: {
      label: list,
      method: "GET",
      url: API_PREFIX + list,
      headers: {},
    },
    status: 200,
    response: `missing ${absent.slice(0, 5).join(", ")}`,
  });
}

/** Walks every list and GET endpoint for the account's stored rows; returns requests sent. */
export async function walkStoredRows(
  h: Harness,
  tenant: { accountId: string; key: string },
  send: Send,
  findings: Finding[],
): Promise<number> {
  const w: Walker = { send, key: tenant.key, findings, count: 0 };
  const db = h.container.db;
  const account = tenant.accountId;
  const contacts = await db.selectFrom("contacts").select([
    "id",
    "phone_number",
  ])
    .where("account_id", "=", account).execute();
  const conversations = await db.selectFrom("conversations")
    .select(["id", "contact_id"]).where("account_id", "=", account).execute();
  const messages = await db.selectFrom("messages")
    .select(["id", "conversation_id"]).where("account_id", "=", account)
    .execute();
  const templates = await db.selectFrom("templates").select(["id", "name"])
    .where("account_id", "=", account).execute();
  const webhooks = await db.selectFrom("webhooks").select("id")
    .where("account_id", "=", account).execute();
  const media = await db.selectFrom("media").select(["id", "status"])
    .where("account_id", "=", account).execute();
  await get(w, "/account");
  await get(w, "/channels");
  missing(
    w,
    "/contacts",
    await pagedList(w, "/contacts"),
    contacts.map((r) => r.id),
  );
  missing(
    w,
    "/templates",
    await pagedList(w, "/templates"),
    templates.map((r) => r.id),
  );
  missing(
    w,
    "/conversations",
    await cursorList(w, "/conversations"),
    conversations.map((r) => r.id),
  );
  const hooks = await get(w, "/webhooks");
  missing(
    w,
    "/webhooks",
    (hooks?.data ?? []).map((r: Json) => r.id),
    webhooks.map((r) => r.id),
  );
  await cursorList(w, "/events");
  for (const c of contacts) {
    await get(w, `/contacts/${c.id}`);
    await cursorList(w, `/contacts/${c.id}/conversations`);
  }
  const phoneOf = new Map(contacts.map((c) => [c.id, c.phone_number]));
  for (const c of conversations) {
    await get(w, `/conversations/${c.id}`);
    const listed = await cursorList(w, `/conversations/${c.id}/messages`);
    const stored = messages.filter((m) => m.conversation_id === c.id).map((m) =>
      m.id
    );
    missing(w, `/conversations/${c.id}/messages`, listed, stored);
    const phone = phoneOf.get(c.contact_id);
    // A sender id that is not a phone number (a BSUID, junk) has no by-phone lookup.
    if (phone && toE164(phone)) {
      await get(w, `/conversations/by-phone/${encodeURIComponent(phone)}`);
    }
  }
  for (const m of messages) await get(w, `/messages/${m.id}`);
  for (const t of templates) {
    await get(w, `/templates/${t.id}`);
    await get(w, `/templates/by-name/${encodeURIComponent(t.name)}`);
  }
  for (const hook of webhooks) {
    await get(w, `/webhooks/${hook.id}`);
    await cursorList(w, `/webhooks/${hook.id}/deliveries?status=all`);
  }
  for (const m of media.filter((m) => m.status === "stored")) {
    await get(w, `/media/${m.id}`);
  }
  return w.count;
}
