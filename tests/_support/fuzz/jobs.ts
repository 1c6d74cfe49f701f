// What the queued work made of the fuzzed input: job outcomes by kind and
// state, and Meta payloads that were acknowledged with 200 but cannot be
// processed (the webhook's equivalent of a 5xx: those messages are lost).
import type { Harness } from "../../_harness.ts";
import type { Finding } from "./oracle.ts";

/** Jobs by `kind state`, with the distinct last errors of the group. */
export type JobOutcomes = Record<
  string,
  { count: number; errors?: Set<string> }
>;

function lastError(errors: string): string | undefined {
  return (JSON.parse(errors) as { error?: string }[]).at(-1)?.error;
}

export async function jobOutcomes(h: Harness): Promise<JobOutcomes> {
  const rows = await h.container.db.selectFrom("jobs")
    .select(["kind", "state", "errors"]).execute();
  const out: JobOutcomes = {};
  for (const row of rows) {
    const group = (out[`${row.kind} ${row.state}`] ??= { count: 0 });
    group.count++;
    const last = lastError(row.errors);
    if (last) (group.errors ??= new Set()).add(last.slice(0, 200));
  }
  return out;
}

/** One finding per `meta.inbound` job that failed, with the stored payload to replay. */
export async function inboundFailures(h: Harness): Promise<Finding[]> {
  const db = h.container.db;
  const jobs = await db.selectFrom("jobs").select(["payload", "errors"])
    .where("kind", "=", "meta.inbound").where("errors", "!=", "[]").execute();
  const findings: Finding[] = [];
  for (const job of jobs) {
    const { payloadId } = JSON.parse(job.payload) as { payloadId: string };
    const stored = await db.selectFrom("inbound_payloads").select("body")
      .where("id", "=", payloadId).executeTakeFirst();
    const error = lastError(job.errors) ?? "";
    findings.push({
      kind: `job meta.inbound of an accepted POST /meta/webhook fails: ${
        error.slice(0, 120)
      }`,
      problem: "accepted payload cannot be processed",
      request: {
        label: "/meta/webhook",
        method: "POST",
        url: "/meta/webhook",
        headers: { "content-type": "application/json" },
        body: stored?.body ?? "",
      },
      status: 200,
      response: error.slice(0, 300),
    });
  }
  return findings;
}
