// The crash test's API clients and log readers.
import assert from "node:assert/strict";
import { api, simPost } from "./_http.ts";
import { cliJson } from "./_process.ts";

export const CRASH_TEMPLATE = "crash_notice";

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** An integer in [lo, hi) drawn from `random` (Math.random unless a seeded one is given). */
export const randomBetween = (
  lo: number,
  hi: number,
  random: () => number = Math.random,
) => lo + Math.floor(random() * (hi - lo));

/** A small seeded PRNG (mulberry32): the same seed gives the same choices, so a run can be replayed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The seed in `name` (to replay a failure), or a fresh one. */
export function seedFromEnv(name: string): number {
  const given = Deno.env.get(name);
  if (given === undefined || given === "") {
    return crypto.getRandomValues(new Uint32Array(1))[0]!;
  }
  const seed = Number(given);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xFFFFFFFF) {
    throw new Error(`${name} must be an integer from 0 to 4294967295`);
  }
  return seed;
}

let numberSeq = 0;
/** A fresh Argentine mobile number per message: templates need no window. */
function nextNumber(): string {
  return `+549114${String(++numberSeq).padStart(7, "0")}`;
}

function templateMessage(to: string) {
  return {
    to,
    type: "template",
    template: { name: CRASH_TEMPLATE, language: { code: "es_AR" } },
  };
}

export interface Tally {
  accepted: Set<string>;
  viaBatch: number;
  viaSingle: number;
  viaIdempotent: number;
  idempotentReplays: number;
  requestErrors: number;
  /** Requests sent and not answered yet (a kill with some in flight cut them). */
  inFlight: number;
}

export interface ClientContext {
  key: string;
  channelId: string;
  tally: Tally;
  done: () => boolean;
  /** A fresh Idempotency-Key. */
  idempotencyKey: () => string;
}

/** What a client submits: batches of 100, runs of 25 single sends, or both in turn. */
export type ClientMode = "batch" | "single" | "mixed";

async function counted<T>(tally: Tally, request: Promise<T>): Promise<T> {
  tally.inFlight++;
  try {
    return await request;
  } finally {
    tally.inFlight--;
  }
}

/**
 * One client: batches (of 100 unless told) and/or runs of 25 single sends (every other one
 * with an Idempotency-Key, retried with the same key when the request
 * fails), alternating in "mixed" mode. Only 2xx answers count as accepted.
 */
export async function client(
  baseUrl: string,
  ctx: ClientContext,
  n: number,
  mode: ClientMode = "mixed",
  batchSize = 100,
): Promise<void> {
  const { tally } = ctx;
  for (let round = 0; !ctx.done(); round++) {
    try {
      const batch = mode === "mixed" ? (round + n) % 2 === 0 : mode === "batch";
      if (batch) {
        const r = await counted(
          tally,
          api(baseUrl, ctx.key, "POST", "/messages/batch", {
            body: {
              defaultPhoneNumberId: ctx.channelId,
              messages: Array.from(
                { length: batchSize },
                () => templateMessage(nextNumber()),
              ),
            },
          }),
        );
        if (r.status !== 202) throw new Error(`batch answered ${r.status}`);
        for (const item of r.body.data.items) {
          assert.equal(item.result, "queued", JSON.stringify(item));
          tally.accepted.add(item.message.id);
          tally.viaBatch++;
        }
      } else {
        for (let i = 0; i < 25 && !ctx.done(); i++) {
          const body = {
            phoneNumberId: ctx.channelId,
            ...templateMessage(nextNumber()),
          };
          if (i % 2 === 0) {
            await idempotentSend(baseUrl, ctx, body);
          } else {
            const r = await counted(
              tally,
              api(baseUrl, ctx.key, "POST", "/messages", { body }),
            );
            if (r.status !== 201) throw new Error(`send answered ${r.status}`);
            tally.accepted.add(r.body.data.id);
            tally.viaSingle++;
          }
        }
      }
    } catch (err) {
      if (err instanceof assert.AssertionError) throw err;
      tally.requestErrors++; // the server died under us: not accepted
      await sleep(50);
    }
  }
}

export async function idempotentSend(
  baseUrl: string,
  ctx: Omit<ClientContext, "channelId">,
  body: unknown,
): Promise<void> {
  const key = ctx.idempotencyKey();
  for (let attempt = 1; attempt <= 200 && !ctx.done(); attempt++) {
    try {
      const r = await counted(
        ctx.tally,
        api(baseUrl, ctx.key, "POST", "/messages", {
          body,
          headers: { "idempotency-key": key },
        }),
      );
      if (r.status === 201) {
        ctx.tally.accepted.add(r.body.data.id);
        ctx.tally.viaIdempotent++;
        if (r.headers.get("idempotent-replayed") === "true") {
          ctx.tally.idempotentReplays++;
        }
        return;
      }
      throw new Error(`send answered ${r.status}`);
    } catch {
      ctx.tally.requestErrors++;
      await sleep(50); // server restarting: same key again
    }
  }
}

/** GET /messages/:id for each id, 16 at a time; undefined for a 404. */
export async function fetchStatuses(
  baseUrl: string,
  key: string,
  ids: string[],
): Promise<
  Map<string, { status: string; waMessageId: string | null } | undefined>
> {
  const out = new Map<
    string,
    { status: string; waMessageId: string | null } | undefined
  >();
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < ids.length) {
      const id = ids[next++]!;
      const r = await api(baseUrl, key, "GET", `/messages/${id}`);
      if (r.status === 404) out.set(id, undefined);
      else if (r.status === 200) out.set(id, r.body.data);
      else throw new Error(`GET /messages/${id} answered ${r.status}`);
    }
  }));
  return out;
}

/** Jobs the lease rescue handed back, summed over the "Rescued jobs" log lines. */
export function rescuedJobs(serverStderr: string): number {
  let total = 0;
  for (const line of serverStderr.split("\n")) {
    if (!line.includes("Rescued jobs with expired leases")) continue;
    try {
      total += Number(JSON.parse(line).rescued) || 0;
    } catch {
      // a partial line
    }
  }
  return total;
}

/** Wamids whose status callbacks the simulator gave up on (every retry failed while we were down). */
export function givenUpWamids(simulatorStderr: string): Set<string> {
  const out = new Set<string>();
  for (const line of simulatorStderr.split("\n")) {
    if (!line.includes("Callback delivery failed")) continue;
    try {
      out.add(JSON.parse(line).wamid);
    } catch {
      // a partial line
    }
  }
  return out;
}

/**
 * Through the real CLI: an account `slug` with an all-scopes key (rate limit
 * lifted), a connected channel and one approved template; then the channel's
 * number is registered at the simulator. Returns the key and the channel id.
 */
export async function seedCrashAccount(
  env: Record<string, string>,
  opts: {
    slug: string;
    phone: string;
    upstreamId: string;
    simulatorUrl: string;
    template: { name: string; body: string };
  },
): Promise<{ key: string; channelId: string }> {
  await cliJson(
    ["accounts", "create", "--name", opts.slug, "--slug", opts.slug],
    env,
  );
  const { key } = await cliJson([
    "keys",
    "create",
    "--account",
    opts.slug,
    "--scopes",
    "all",
    "--rate-limit",
    "1000000",
  ], env);
  const channel = await cliJson([
    "channels",
    "create",
    "--account",
    opts.slug,
    "--phone",
    opts.phone,
    "--display-name",
    `${opts.slug} line`,
    "--upstream-phone-number-id",
    opts.upstreamId,
    "--waba-id",
    `1022901293${opts.upstreamId.slice(-5)}`,
    "--access-token",
    `EAAG-${opts.slug}`,
  ], env);
  await cliJson([
    "templates",
    "create",
    "--account",
    opts.slug,
    "--name",
    opts.template.name,
    "--language",
    "es_AR",
    "--category",
    "UTILITY",
    "--status",
    "approved",
    "--components",
    JSON.stringify([{ type: "BODY", text: opts.template.body }]),
  ], env);
  await simPost(opts.simulatorUrl, "numbers", {
    phoneNumberId: opts.upstreamId,
    displayPhoneNumber: opts.phone,
  });
  return { key, channelId: channel.id };
}
