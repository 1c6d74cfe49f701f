/** Insight reads that survive one unsupported metric (reference §8.2, §8.4). */
import { UpstreamError } from "../../upstream/graph_api.ts";
import { fetchInsights, type SocialGet } from "../../upstream/social_graph.ts";

export interface InsightRead {
  /** Values by upstream metric name; a metric the upstream did not give is absent. */
  values: Record<string, number>;
  /** The token lacks the insights permission (or the object shows none): every metric stays null. */
  denied: boolean;
}

/** `(#100)`: one metric of the list is unsupported or deprecated for this object. */
function isUnsupported(err: unknown): boolean {
  return err instanceof UpstreamError && err.upstreamCode === 100;
}

function isDenied(err: unknown): boolean {
  return err instanceof UpstreamError && err.category === "permission_denied";
}

/**
 * Reads `metrics` in one call; when the upstream rejects the list because
 * one metric is unsupported, reads them one at a time so the others still
 * fill (`perMetric: false` keeps it to one call and rethrows instead).
 */
export async function readInsights(
  get: SocialGet,
  objectId: string,
  input: {
    metrics: string[];
    query?: Record<string, string>;
    perMetric?: boolean;
  },
): Promise<InsightRead> {
  if (input.metrics.length === 0) return { values: {}, denied: false };
  try {
    return {
      values: await fetchInsights(get, objectId, input),
      denied: false,
    };
  } catch (err) {
    if (isDenied(err)) return { values: {}, denied: true };
    if (!isUnsupported(err)) throw err;
    if (input.perMetric === false) throw err;
    if (input.metrics.length === 1) return { values: {}, denied: false };
  }
  const values: Record<string, number> = {};
  for (const metric of input.metrics) {
    try {
      Object.assign(
        values,
        await fetchInsights(get, objectId, { ...input, metrics: [metric] }),
      );
    } catch (err) {
      if (isDenied(err)) return { values, denied: true };
      if (!isUnsupported(err)) throw err;
    }
  }
  return { values, denied: false };
}
