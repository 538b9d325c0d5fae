import type { Registry } from 'prom-client';

/**
 * A Prometheus histogram whose observations cost a bucket search and three additions: the
 * request path's histograms are observed several times per request (HTTP, both sides of the bus,
 * each store call), and prom-client's own `Histogram` validates and hashes the label set on every
 * `observe`, even through a `labels()` child. This one keeps one series object per label set
 * ({@link FastHistogram.labels} returns it, made once) and hands prom-client's registry the same
 * exposition data at scrape time (`get()`), so the text format, the registry and the default
 * metrics stay prom-client's.
 */

/** One label set of a {@link FastHistogram}: counts per bucket (not cumulative), sum and count. */
export class HistogramSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(readonly labels: Readonly<Record<string, string>>, private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length);
  }

  /** Records one observation (seconds for the service's histograms). */
  observe(value: number): void {
    const b = this.bounds;
    let i = 0;
    while (i < b.length && value > b[i]!) i++;
    if (i < b.length) this.counts[i]! += 1;
    this.sum += value;
    this.count += 1;
  }
}

/** The value entries prom-client's registry formats: `{metricName, labels, value}`. */
interface Sample {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
}

/** A histogram registered in a prom-client {@link Registry}; see the file comment. */
export class FastHistogram<L extends string = string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, HistogramSeries>();

  /**
   * `buckets`: upper bounds, ascending (the `+Inf` bucket is implied). Registers itself in
   * `registry`; throws when a metric of that name is registered already.
   */
  constructor(readonly name: string, readonly help: string, readonly labelNames: readonly L[], private readonly buckets: readonly number[], registry: Registry) {
    registry.registerMetric(this as never);
  }

  /** The series of one label set, in `labelNames` order; made on first use. */
  labels(...values: string[]): HistogramSeries {
    const key = values.length === 1 ? values[0]! : values.join('\u0000');
    let s = this.series.get(key);
    if (!s) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((n, i) => (labels[n] = values[i] ?? ''));
      this.series.set(key, (s = new HistogramSeries(labels, this.buckets)));
    }
    return s;
  }

  /** Forgets every series (prom-client's `registry.resetMetrics()`). */
  reset(): void {
    this.series.clear();
  }

  /** The exposition data prom-client's registry formats: cumulative `_bucket` series, `_sum` and `_count` per label set. */
  get(): { name: string; help: string; type: string; aggregator: string; values: Sample[] } {
    const values: Sample[] = [];
    for (const s of this.series.values()) {
      let acc = 0;
      this.buckets.forEach((le, i) => {
        acc += s.counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { le, ...s.labels }, value: acc });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf', ...s.labels }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: { ...s.labels }, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: { ...s.labels }, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
