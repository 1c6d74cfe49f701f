/**
 * A small Prometheus registry (text exposition format 0.0.4): counters and
 * histograms kept in memory, and gauges the caller refreshes before rendering.
 * Label values are the caller's responsibility to keep few (routes, not paths).
 */

export type Labels = Record<string, string>;

/** Seconds; spans a loopback call (1 ms) to the webhook deadline (10 s). */
export const DEFAULT_BUCKETS: readonly number[] = [
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
];

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(
    /"/g,
    '\\"',
  );
}

function labelText(labels: Labels): string {
  const parts = Object.entries(labels).map(([k, v]) =>
    `${k}="${escapeLabel(v)}"`
  );
  return parts.length ? `{${parts.join(",")}}` : "";
}

function keyOf(labels: Labels): string {
  return JSON.stringify(Object.entries(labels));
}

function formatNumber(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (n === Infinity) return "+Inf";
  if (n === -Infinity) return "-Inf";
  return String(n);
}

interface Metric {
  render(out: string[]): void;
}

function header(out: string[], name: string, help: string, type: string) {
  out.push(`# HELP ${name} ${help.replace(/\n/g, " ")}`);
  out.push(`# TYPE ${name} ${type}`);
}

export class Counter implements Metric {
  #values = new Map<string, { labels: Labels; value: number }>();
  constructor(readonly name: string, readonly help: string) {}

  inc(labels: Labels = {}, by = 1): void {
    const key = keyOf(labels);
    const entry = this.#values.get(key);
    if (entry) entry.value += by;
    else this.#values.set(key, { labels, value: by });
  }

  /** The current value for `labels` (0 when never incremented). */
  get(labels: Labels = {}): number {
    return this.#values.get(keyOf(labels))?.value ?? 0;
  }

  render(out: string[]): void {
    header(out, this.name, this.help, "counter");
    for (const { labels, value } of this.#values.values()) {
      out.push(`${this.name}${labelText(labels)} ${formatNumber(value)}`);
    }
  }
}

interface Series {
  labels: Labels;
  counts: number[];
  sum: number;
  count: number;
}

export class Histogram implements Metric {
  #series = new Map<string, Series>();
  readonly buckets: readonly number[];

  constructor(
    readonly name: string,
    readonly help: string,
    buckets: readonly number[] = DEFAULT_BUCKETS,
  ) {
    this.buckets = [...buckets].sort((a, b) => a - b);
  }

  observe(labels: Labels, value: number): void {
    const key = keyOf(labels);
    let s = this.#series.get(key);
    if (!s) {
      s = { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.#series.set(key, s);
    }
    // Cumulative at render time; here each observation lands in one bucket.
    const i = this.buckets.findIndex((b) => value <= b);
    if (i >= 0) s.counts[i]!++;
    s.sum += value;
    s.count++;
  }

  /** Number of observations for `labels`. */
  count(labels: Labels = {}): number {
    return this.#series.get(keyOf(labels))?.count ?? 0;
  }

  render(out: string[]): void {
    header(out, this.name, this.help, "histogram");
    for (const s of this.#series.values()) {
      let cumulative = 0;
      this.buckets.forEach((bound, i) => {
        cumulative += s.counts[i]!;
        const labels = labelText({ ...s.labels, le: formatNumber(bound) });
        out.push(`${this.name}_bucket${labels} ${cumulative}`);
      });
      const inf = labelText({ ...s.labels, le: "+Inf" });
      out.push(`${this.name}_bucket${inf} ${s.count}`);
      out.push(`${this.name}_sum${labelText(s.labels)} ${formatNumber(s.sum)}`);
      out.push(`${this.name}_count${labelText(s.labels)} ${s.count}`);
    }
  }
}

/** A gauge whose samples are read at scrape time. */
export class Gauge implements Metric {
  #samples: Array<{ labels: Labels; value: number }> = [];
  constructor(readonly name: string, readonly help: string) {}

  /** Replaces every sample (refreshed at scrape time). */
  reset(samples: Array<{ labels: Labels; value: number }>): void {
    this.#samples = samples;
  }

  render(out: string[]): void {
    header(out, this.name, this.help, "gauge");
    for (const { labels, value } of this.#samples) {
      out.push(`${this.name}${labelText(labels)} ${formatNumber(value)}`);
    }
  }
}

export class Registry {
  #metrics: Metric[] = [];

  counter(name: string, help: string): Counter {
    return this.#add(new Counter(name, help));
  }

  histogram(name: string, help: string, buckets?: readonly number[]) {
    return this.#add(new Histogram(name, help, buckets));
  }

  gauge(name: string, help: string): Gauge {
    return this.#add(new Gauge(name, help));
  }

  /** The whole registry in the Prometheus text format. */
  render(): string {
    const out: string[] = [];
    for (const metric of this.#metrics) metric.render(out);
    return out.join("\n") + "\n";
  }

  #add<M extends Metric>(metric: M): M {
    this.#metrics.push(metric);
    return metric;
  }
}
