// The values path parameters and cursors are drawn from: the seeded rows of
// the fuzzed tenant (grown with every id and cursor the API answers with)
// and of a second tenant, so generated paths hit real rows, not only misses.
import type { Fixture, Json, Operation } from "../../http/_routes.ts";

/** Pool kinds by path parameter name (`id` goes by the path's first segment). */
const KIND_BY_PARAM: Record<string, string> = {
  name: "templateNames",
  phone: "phones",
  waMessageId: "wamids",
  deliveryId: "deliveries",
};

const MAX_PER_KIND = 500;

function fixtureValues(fx: Fixture): Map<string, string[]> {
  return new Map([
    ["contacts", [fx.contactId]],
    ["conversations", [fx.conversationId]],
    ["messages", [fx.messageId, fx.imageMessageId]],
    ["templates", [fx.templateId]],
    ["media", [fx.mediaId]],
    ["webhooks", [fx.webhookId, fx.spareWebhookId]],
    ["deliveries", [fx.deliveryId]],
    ["templateNames", [fx.templateName]],
    ["phones", [fx.contactPhone]],
    ["wamids", [fx.inboundWamid]],
    ["cursors", []],
  ]);
}

export interface Keys {
  /** Every scope. */
  all: string;
  /** One key per single scope, for under-scoped calls. */
  single: string[];
  /** The second tenant's all-scope key. */
  foreign: string;
}

export class Pool {
  #own: Map<string, string[]>;
  #foreign: Map<string, string[]>;
  #keys: Keys;

  constructor(own: Fixture, foreign: Fixture, keys: Keys) {
    this.#own = fixtureValues(own);
    this.#foreign = fixtureValues(foreign);
    this.#keys = keys;
  }

  /** A value for path parameter `name` of `op`. */
  value(op: Operation, name: string, foreign: boolean, index: number): string {
    const kind = name === "id"
      ? op.path.split("/")[1]!
      : KIND_BY_PARAM[name] ?? "messages";
    return this.row(kind, index, foreign);
  }

  /** A stored value of a kind (`contacts`, `media`, `phones`...), or a fresh UUID when none is known. */
  row(kind: string, index: number, foreign = false): string {
    const list = (foreign ? this.#foreign : this.#own).get(kind) ?? [];
    return list.length ? list[index % list.length]! : crypto.randomUUID();
  }

  cursor(foreign: boolean, index: number): string {
    const list = (foreign ? this.#foreign : this.#own).get("cursors")!;
    return list.length ? list[index % list.length]! : "";
  }

  /** The Authorization header for an auth plan (null: none sent). */
  authorization(auth: string, salt: number): string | null {
    const key = this.#keys.all;
    switch (auth) {
      case "valid":
        return `Bearer ${key}`;
      case "none":
        return null;
      case "empty":
        return "Bearer ";
      case "junk":
        return `Bearer bmk_${"x".repeat(40)}`;
      case "lowercase":
        return `bearer ${key}`;
      case "basic":
        return `Basic ${btoa(`${key}:`)}`;
      case "extra":
        return `Bearer ${key} ${key}`;
      case "partial":
        return `Bearer ${this.#keys.single[salt % this.#keys.single.length]}`;
      default:
        return `Bearer ${this.#keys.foreign}`;
    }
  }

  /** Keeps the ids and cursor of a successful response, so later requests can use them. */
  learn(url: string, body: Json): void {
    const data = body?.data;
    const path = new URL(url, "http://x").pathname.split("/").slice(3);
    const kind = path.includes("deliveries") ? "deliveries" : path[0] ?? "";
    const rows = Array.isArray(data) ? data : data ? [data] : [];
    for (const row of rows) {
      if (typeof row?.id === "string") this.#add(kind, row.id);
      if (typeof row?.delivery?.id === "string") {
        this.#add("deliveries", row.delivery.id);
      }
      if (typeof row?.conversationId === "string") {
        this.#add("conversations", row.conversationId);
      }
      if (typeof row?.phoneNumber === "string") {
        this.#add("phones", row.phoneNumber);
      }
    }
    const cursor = body?.meta?.cursor;
    if (typeof cursor === "string" && cursor) this.#add("cursors", cursor);
  }

  #add(kind: string, value: string): void {
    const list = this.#own.get(kind);
    if (!list || list.includes(value)) return;
    if (list.length < MAX_PER_KIND) list.push(value);
    else list[value.length % MAX_PER_KIND] = value;
  }
}
