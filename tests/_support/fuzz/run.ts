// The fuzzer: an in-process app over a real database, seeded through the API,
// with the upstream simulator as its Graph API; fast-check draws requests
// from the served OpenAPI document and signed Meta webhooks; the oracle
// judges every reply; workers process the queued jobs as the run goes; then
// every stored row is walked. Used by tests/http/fuzz_test.ts and scripts/fuzz.ts.
import fc from "fast-check";
import {
  createHarness,
  type EngineName,
  type Harness,
} from "../../_harness.ts";
import { apiOperations, loadDocument, seedTenant } from "../../http/_routes.ts";
import { startSimulator } from "../../../src/simulator/server.ts";
import { WorkerPool } from "../../../src/jobs/worker_pool.ts";
import {
  createJobHandlers,
  splitHandlers,
} from "../../../src/jobs/registry.ts";
import { createLogger } from "../../../src/log.ts";
import type { ManualClock } from "../../../src/clock.ts";
import { SCOPES } from "../../../src/domain/accounts/scopes.ts";
import { APP_SECRET, registerNumber } from "../messaging.ts";
import {
  errorCode,
  type Finding,
  findingKind,
  judge,
  type Reply,
} from "./oracle.ts";
import { Pool } from "./pool.ts";
import {
  type FuzzRequest,
  type Plan,
  planArbitrary,
  realize,
} from "./requests.ts";
import { sweepRequests } from "./sweep.ts";
import {
  type MetaPlan,
  metaPlanArbitrary,
  realizeMeta,
} from "./meta_webhook.ts";
import { walkStoredRows } from "./walk.ts";
import { inboundFailures, type JobOutcomes, jobOutcomes } from "./jobs.ts";

export interface FuzzOptions {
  seed: number;
  /** Generated requests (the method sweep and the walk come on top). */
  runs: number;
  /** Replays one generated request: the path a finding printed. */
  path?: string;
  engine?: EngineName;
  /** Runs the queued jobs every this many requests (default 200). */
  jobsEvery?: number;
  onProgress?: (done: number) => void;
}

export interface FuzzResult {
  seed: number;
  /** Every request sent: sweep, generated and walk. */
  requests: number;
  generated: number;
  walked: number;
  ms: number;
  /** Replies by HTTP status. */
  statuses: Record<string, number>;
  /** Replies by method and route, then by status and error code (`400 VALIDATION_ERROR`). */
  routes: Record<string, Record<string, number>>;
  /** Requests the client could not even build (invalid URL or header). */
  unsendable: number;
  jobsRun: number;
  /** Jobs left by the run, by `kind state`, with the last error of each failing group. */
  jobs: JobOutcomes;
  findings: Finding[];
}

/** Runs the whole fuzz session over a fresh database; never throws for findings. */
export async function runFuzz(options: FuzzOptions): Promise<FuzzResult> {
  const started = performance.now();
  const simulator = await startSimulator({
    appSecret: APP_SECRET,
    log: createLogger("silent"),
  });
  try {
    await using h = await createHarness({
      engine: options.engine ?? "sqlite",
      env: { META_GRAPH_URL: simulator.graphUrl, META_APP_SECRET: APP_SECRET },
    });
    const { channel } = h.tenant;
    await registerNumber(
      simulator.url,
      channel.upstreamPhoneNumberId,
      channel.phoneNumber,
    );
    return await session(h, options, started);
  } finally {
    await simulator.stop();
  }
}

async function session(
  h: Harness,
  options: FuzzOptions,
  started: number,
): Promise<FuzzResult> {
  const own = await seedTenant(h, h.tenant, { label: "fuzz" });
  const other = await seedTenant(
    h,
    await h.makeTenant(`other-${crypto.randomUUID().slice(0, 8)}`),
    {
      label: "other",
    },
  );
  const single = await Promise.all(
    SCOPES.map((s) => h.makeKey(h.tenant.account.id, [s])),
  );
  const pool = new Pool(own, other, {
    all: h.tenant.key,
    single,
    foreign: other.tenant.key,
  });
  const doc = await loadDocument(h);
  const ops = apiOperations(doc);
  const ctx = {
    components: doc.components?.schemas ?? {},
    hints: {
      phoneNumberId: [h.tenant.channel.id],
      defaultPhoneNumberId: [h.tenant.channel.id],
      channel: [h.tenant.channel.id],
      to: [own.contactPhone, "+5491155001122"],
      phoneNumber: [own.contactPhone, "+5491155001133", "+14155550123"],
      phone: [own.contactPhone],
      name: [own.templateName],
      code: [own.templateLanguage],
      url: ["http://127.0.0.1:9/fuzz"],
      key: [own.mediaKey],
      campaignId: ["01a2053d-0000-7000-8000-000000000001"],
    },
  };
  const meta = {
    appSecret: APP_SECRET,
    wabaId: h.tenant.channel.wabaId,
    phoneNumberId: h.tenant.channel.upstreamPhoneNumberId,
    displayPhoneNumber: h.tenant.channel.phoneNumber.replace("+", ""),
    wamids: [own.inboundWamid],
  };
  // Deliveries would dial whatever URL a fuzzed subscription holds: they stay queued.
  const handlers = splitHandlers(createJobHandlers(h.container)).main;
  const workers = new WorkerPool({
    db: h.container.db,
    clock: h.clock,
    log: createLogger("silent"),
    handlers,
    concurrency: 4,
  });

  const result: FuzzResult = {
    seed: options.seed,
    requests: 0,
    generated: 0,
    walked: 0,
    ms: 0,
    statuses: {},
    routes: {},
    unsendable: 0,
    jobsRun: 0,
    jobs: {},
    findings: [],
  };
  const send = async (req: FuzzRequest): Promise<Reply> => {
    const res = await h.app.fetch(
      new Request(`http://localhost${req.url}`, {
        method: req.method,
        headers: req.headers,
        body: req.body,
      }),
    );
    return {
      status: res.status,
      contentType: res.headers.get("content-type") ?? "",
      text: await res.text(),
    };
  };
  const exercise = async (req: FuzzRequest, where?: { path: string }) => {
    let reply: Reply;
    try {
      reply = await send(req);
    } catch (err) {
      if (err instanceof TypeError && /URL|header|method/i.test(err.message)) {
        result.unsendable++;
        return;
      }
      throw err;
    }
    result.requests++;
    result.statuses[reply.status] = (result.statuses[reply.status] ?? 0) + 1;
    const route = (result.routes[`${req.method} ${req.label}`] ??= {});
    const outcome = `${reply.status} ${errorCode(reply)}`.trim();
    route[outcome] = (route[outcome] ?? 0) + 1;
    if (
      reply.status < 300 && reply.contentType.includes("json") && reply.text
    ) {
      pool.learn(req.url, JSON.parse(reply.text));
    }
    const problem = judge(req, reply);
    if (problem) {
      result.findings.push({
        kind: findingKind(req, reply, problem),
        problem,
        request: req,
        status: reply.status,
        response: reply.text.slice(0, 300),
        ...(where ? { seed: options.seed, path: where.path } : {}),
      });
    }
  };
  const runJobs = async () => {
    result.jobsRun += await workers.runOnce({ maxJobs: 500 });
  };

  if (options.path === undefined) {
    for (const req of sweepRequests(ops, pool)) await exercise(req);
    await runJobs();
  }
  const arbitrary = fc.oneof(
    { arbitrary: planArbitrary(ops, ctx), weight: 9 },
    { arbitrary: metaPlanArbitrary(meta), weight: 1 },
  );
  const jobsEvery = options.jobsEvery ?? 200;
  let index = options.path === undefined ? 0 : Number(options.path);
  await fc.assert(
    fc.asyncProperty(arbitrary, async (plan: Plan | MetaPlan) => {
      const path = String(index++);
      const req = "kind" in plan && plan.kind === "meta"
        ? await realizeMeta(plan, meta)
        : realize(plan as Plan, ops, pool);
      await exercise(req, { path });
      result.generated++;
      if (index % 2 === 0) (h.clock as ManualClock).advance(1);
      if (index % jobsEvery === 0) await runJobs();
      if (index % 1000 === 0) options.onProgress?.(result.generated);
      return true;
    }),
    {
      seed: options.seed,
      numRuns: options.runs,
      ...(options.path === undefined ? {} : { path: options.path }),
      // A throw is a bug of the fuzzer itself: report it at once, shrinking
      // megabyte bodies would take the rest of the run.
      endOnFailure: true,
    },
  );
  await runJobs();

  const before = result.requests;
  const walkSend = async (req: FuzzRequest) => {
    const reply = await send(req);
    result.requests++;
    return reply;
  };
  result.walked += await walkStoredRows(
    h,
    { accountId: h.tenant.account.id, key: h.tenant.key },
    walkSend,
    result.findings,
  );
  result.walked += await walkStoredRows(
    h,
    { accountId: other.tenant.account.id, key: other.tenant.key },
    walkSend,
    result.findings,
  );
  result.requests = before + result.walked;
  result.jobs = await jobOutcomes(h);
  result.findings.push(...await inboundFailures(h));
  result.ms = performance.now() - started;
  return result;
}
