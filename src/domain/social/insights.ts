/** Insight reads that survive one unsupported metric (reference §8.2, §8.4). */
import { UpstreamError } from "../../upstream/graph_api.ts";
import { fetchInsights, type SocialGet } from "../../upstream/social_graph.ts";

export interface InsightRead {
  /** Values by upstream metric name; a metric the upstream did not give is absent. */
  values: Record<string, number>;
  /** The token lacks the insights permission (or the object shows none): every metric stays null. */
  denied: boolean;
  /**
   * Metrics the upstream rejected one by one while another metric of the
   * same object was accepted: unsupported for this kind of object, not a
   * fault of the object.
   */
  unsupported: string[];
}

/** `(#100)`: one metric of the list is unsupported or deprecated for this object. */
function isUnsupported(err: unknown): boolean {
  return err instanceof UpstreamError && err.upstreamCode === 100;
}

function isDenied(err: unknown): boolean {
  return err instanceof UpstreamError && err.category === "permission_denied";
}

/** Code 100 with subcode 33 or HTTP 404: the upstream has no such object (any more). */
export function isGoneUpstream(err: unknown): boolean {
  return err instanceof UpstreamError && err.upstreamCode === 100 &&
    (err.httpStatus === 404 ||
      (err.details as { subcode?: unknown } | undefined)?.subcode === 33);
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
  const none = { values: {}, denied: false, unsupported: [] };
  if (input.metrics.length === 0) return none;
  try {
    return { ...none, values: await fetchInsights(get, objectId, input) };
  } catch (err) {
    if (isDenied(err)) return { ...none, denied: true };
    if (!isUnsupported(err)) throw err;
    if (input.perMetric === false) throw err;
    if (input.metrics.length === 1) return none;
  }
  const values: Record<string, number> = {};
  const rejected: string[] = [];
  let accepted = false;
  for (const metric of input.metrics) {
    try {
      Object.assign(
        values,
        await fetchInsights(get, objectId, { ...input, metrics: [metric] }),
      );
      accepted = true;
    } catch (err) {
      if (isDenied(err)) return { ...none, values, denied: true };
      if (!isUnsupported(err)) throw err;
      rejected.push(metric);
    }
  }
  return { values, denied: false, unsupported: accepted ? rejected : [] };
}
