/** Types of `parse-prometheus-text-format` (the package ships none): metric families as prom2json prints them. */
declare module 'parse-prometheus-text-format' {
  interface Sample {
    labels?: Record<string, string>;
    value?: string;
    count?: string;
    sum?: string;
    buckets?: Record<string, string>;
  }
  interface Family {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: Sample[];
  }
  /** Parses Prometheus text exposition; throws on a line it cannot read. */
  export default function parsePrometheusTextFormat(text: string): Family[];
}
