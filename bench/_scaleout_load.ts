/**
 * The traffic of a scale-out phase, all of it through the proxy and none of
 * it retried: the campaign (POST /messages/batch, 100 template sends per
 * batch, round-robin over the numbers), a steady API load (open loop:
 * requests start on schedule whatever the earlier ones do, alternating
 * GET /account and POST /contacts) and the per-credential check (requests
 * at a steady pace with the rate-limited key).
 */
import { freshNumber, templateSendTo } from "./_bench.ts";
import { nowMs } from "./_strict_upstream.ts";
import type { Channel } from "./_scaleout_cluster.ts";

const BATCH = 100;
const ENQUEUE_CONCURRENCY = 2;
/** Longer than the proxy's own 15 s, so its 504 is what a stuck request shows. */
const CLIENT_TIMEOUT_MS = 20_000;
/** Recipients of the steady load's contacts: far from the campaign's. */
const CONTACTS_BASE = 80_000_000;
/** Each number's campaign recipients start here (freshNumber(n)). */
const NUMBER_SPAN = 5_000_000;

export interface ApiSample {
  /** When the request started (nowMs()). */
  t: number;
  /** When its answer was read. */
  end: number;
  kind: "read" | "write" | "batch" | "limited";
  /** HTTP status; 0 when no answer came. */
  status: number;
  /** Why it failed (an error, the proxy's x-lb-failure), when it did. */
  failure?: string;
}

/** A network error in a few words: fetch's own message says little, its cause says why. */
function describe(err: unknown): string {
  const e = err as Error & { cause?: Error };
  const text = `${e?.message ?? err}: ${e?.cause?.message ?? ""}`;
  const os = /[A-Za-z][A-Za-z ]* \(os error \d+\)/.exec(text);
  return os ? os[0] : text.slice(0, 120);
}

/** One request through the proxy; never throws. */
async function call(
  baseUrl: string,
  key: string,
  kind: ApiSample["kind"],
  method: string,
  path: string,
  body?: unknown,
): Promise<{ sample: ApiSample; json: unknown }> {
  const t = nowMs();
  try {
    const res = await fetch(`${baseUrl}/api/v2${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch { /* not JSON */ }
    const lb = res.headers.get("x-lb-failure");
    const sample: ApiSample = { t, end: nowMs(), kind, status: res.status };
    if (lb) sample.failure = `proxy: ${lb}`;
    return { sample, json };
  } catch (err) {
    const name = (err as Error)?.name;
    return {
      sample: {
        t,
        end: nowMs(),
        kind,
        status: 0,
        failure: name === "TimeoutError" ? "client timeout" : describe(err),
      },
      json: undefined,
    };
  }
}

export interface Campaign {
  /** Message id -> upstream phone-number id, for every item the API queued. */
  ids: Map<string, string>;
  /** Items asked for. */
  wanted: number;
  /** Batch requests and their outcome. */
  samples: ApiSample[];
  /** Items of answered batches that were not queued (skipped or failed). */
  refusedItems: number;
  /** When the last batch was answered. */
  doneAt: number;
}

/** Enqueues `perNumber` template sends per channel, in batches of 100, round-robin over the channels. */
export async function enqueueCampaign(
  baseUrl: string,
  key: string,
  channels: Channel[],
  perNumber: number,
  signal: AbortSignal,
): Promise<Campaign> {
  const campaign: Campaign = {
    ids: new Map(),
    wanted: perNumber * channels.length,
    samples: [],
    refusedItems: 0,
    doneAt: 0,
  };
  const rounds = Math.ceil(perNumber / BATCH);
  const batches = rounds * channels.length;
  let next = 0;
  await Promise.all(
    Array.from({ length: ENQUEUE_CONCURRENCY }, async () => {
      while (next < batches && !signal.aborted) {
        const b = next++;
        const c = b % channels.length;
        const round = Math.floor(b / channels.length);
        const size = Math.min(BATCH, perNumber - round * BATCH);
        const first = c * NUMBER_SPAN + round * BATCH;
        const messages = Array.from(
          { length: size },
          (_, k) => templateSendTo(first + k),
        );
        const { sample, json } = await call(
          baseUrl,
          key,
          "batch",
          "POST",
          "/messages/batch",
          { defaultPhoneNumberId: channels[c]!.id, messages },
        );
        campaign.samples.push(sample);
        // deno-lint-ignore no-explicit-any
        const items = (json as any)?.data?.items as any[] | undefined;
        if (sample.status !== 202 || !items) continue;
        for (const item of items) {
          if (item.result === "queued") {
            campaign.ids.set(item.message.id, channels[c]!.upstreamId);
          } else campaign.refusedItems++;
        }
      }
    }),
  );
  campaign.doneAt = nowMs();
  return campaign;
}

export interface SteadyLoad {
  /** Stops starting requests and resolves with every sample once the last one ended. */
  stop(): Promise<ApiSample[]>;
}

/** Starts `rate` requests per second (reads and writes alternating) until stop(). */
export function startSteadyLoad(
  baseUrl: string,
  key: string,
  rate: number,
): SteadyLoad {
  const samples: ApiSample[] = [];
  const running = new Set<Promise<void>>();
  const started = nowMs();
  let issued = 0;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const tick = () => {
    if (stopped) return;
    // Open loop: catch up on every request due by now.
    while (started + (issued * 1000) / rate <= nowMs()) {
      const i = issued++;
      const task = (i % 2 === 0
        ? call(baseUrl, key, "read", "GET", "/account")
        : call(baseUrl, key, "write", "POST", "/contacts", {
          phoneNumber: freshNumber(CONTACTS_BASE + i),
        })).then(({ sample }) => {
          samples.push(sample);
        });
      running.add(task);
      task.finally(() =>
        running.delete(task)
      );
    }
    const due = started + (issued * 1000) / rate - nowMs();
    timer = setTimeout(tick, Math.max(1, due));
  };
  if (rate > 0) tick();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await Promise.all([...running]);
      return samples.sort((a, b) => a.t - b.t);
    },
  };
}

/** `count` GET /account with the limited key, one every `everyMs`, each started on schedule. */
export async function rateLimitProbe(
  baseUrl: string,
  key: string,
  count: number,
  everyMs: number,
): Promise<ApiSample[]> {
  const started = nowMs();
  const tasks: Promise<ApiSample>[] = [];
  for (let i = 0; i < count; i++) {
    const wait = started + i * everyMs - nowMs();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    tasks.push(
      call(baseUrl, key, "limited", "GET", "/account").then((r) => r.sample),
    );
  }
  return await Promise.all(tasks);
}
