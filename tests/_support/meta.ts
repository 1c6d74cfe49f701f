// A messaging harness whose simulator plays Meta's management side for the
// tenant's WABA: the tenant's number registered under its own WABA, helpers
// for the simulator's control API and for the template rows.
import { type EngineName, ENGINES } from "../_harness.ts";
import {
  createMessagingHarness,
  type MessagingHarness,
  type MessagingHarnessOptions,
} from "./messaging.ts";
import type { TemplatesTable } from "../../src/db/schema.ts";
import {
  escapeUnicode,
  signMetaBody,
} from "../../src/upstream/meta_signature.ts";
import { APP_SECRET } from "./messaging.ts";
import { ManualClock } from "../../src/clock.ts";

export interface MetaWorld extends MessagingHarness {
  wabaId: string;
  /** POST to the simulator's control API; throws on a non-2xx answer. */
  sim(path: string, body?: unknown): Promise<Record<string, unknown>>;
  /** GET from the simulator's control API. */
  simGet(path: string): Promise<Record<string, unknown>>;
  /** The template rows of the tenant's account, by name and language. */
  templates(): Promise<Map<string, TemplatesTable>>;
  /** Graph calls the simulator's management side answered (method and path). */
  calls(): Promise<{ method: string; path: string }[]>;
  /** Posts raw webhook text to /meta/webhook signed as Meta signs it, then runs what it queued; the HTTP status. */
  postWebhook(raw: string): Promise<number>;
}

/** Opens a MetaWorld on `engine`; `seed` fills the WABA in the simulator. */
export async function openMetaWorld(
  options: MessagingHarnessOptions & { seed?: "demo" | "empty" } = {},
): Promise<MetaWorld> {
  const h = await createMessagingHarness(options);
  const wabaId = h.tenant.channel.wabaId;
  async function call(method: string, path: string, body?: unknown) {
    const res = await fetch(`${h.simulator.url}/_sim${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    if (!res.ok) {
      throw new Error(
        `Simulator ${path}: ${res.status} ${JSON.stringify(json)}`,
      );
    }
    return json as Record<string, unknown>;
  }
  await call("POST", "/wabas", { id: wabaId, seed: options.seed ?? "demo" });
  await call("POST", "/numbers", {
    phoneNumberId: h.tenant.channel.upstreamPhoneNumberId,
    displayPhoneNumber: h.tenant.channel.phoneNumber,
    wabaId,
  });
  return {
    ...h,
    wabaId,
    sim: (path, body) => call("POST", path, body ?? {}),
    simGet: (path) => call("GET", path),
    async templates() {
      const rows = await h.container.db.selectFrom("templates").selectAll()
        .where("account_id", "=", h.tenant.account.id).execute();
      return new Map(rows.map((r) => [`${r.name}/${r.language}`, r]));
    },
    async calls() {
      const answer = await call("GET", "/management/calls");
      return answer.calls as { method: string; path: string }[];
    },
    async postWebhook(raw: string) {
      // Driven, the clock stands still: a second passes between posts.
      if (h.clock instanceof ManualClock) h.clock.advance(1_000);
      const body = escapeUnicode(raw);
      const res = await fetch(`${h.baseUrl}/meta/webhook`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-hub-signature-256": signMetaBody(APP_SECRET, body),
        },
        body,
      });
      await res.body?.cancel();
      await h.settle();
      return res.status;
    },
  };
}

/** Registers one test per storage engine on its own MetaWorld. */
export function metaTest(
  name: string,
  fn: (w: MetaWorld) => Promise<void>,
  options: MessagingHarnessOptions & { seed?: "demo" | "empty" } = {},
): void {
  for (const engine of ENGINES as EngineName[]) {
    Deno.test({
      name: `[${engine}] ${name}`,
      sanitizeOps: false,
      sanitizeResources: false,
      fn: async () => {
        await using w = await openMetaWorld({ ...options, engine });
        await fn(w);
      },
    });
  }
}
