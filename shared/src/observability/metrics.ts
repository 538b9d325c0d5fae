import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { FastHistogram } from './histogram.js';
import { AppError } from '../errors/index.js';
import { isNoResponders } from '../bus/no-responders.js';

/**
 * Prometheus metrics of one process (docs/observability.md). The all-in-one process has one
 * `Metrics` (one registry, one endpoint); a separately started service has its own, served on
 * `METRICS_PORT`. Names follow Prometheus conventions: durations in `_seconds`, counters in
 * `_total`, and labels of low cardinality only (route templates, subjects, collections, outcome
 * codes from the error catalogue): never an id.
 */

/** Buckets of request-scale durations, in seconds (0.5 ms … 10 s). */
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Buckets of store calls, in seconds (50 µs … 2.5 s): most are in-memory reads. */
const STORE_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 2.5];

/**
 * The outcome of a failed call as a label: `timeout`, `no_responders` (nothing serves the subject),
 * or the catalogue code in lower case (`service_unavailable` for a closed or disconnected bus).
 */
export function outcomeOf(err: unknown): string {
  const e = AppError.from(err);
  if (e.code === 'UPSTREAM_TIMEOUT') return 'timeout';
  if (isNoResponders(e)) return 'no_responders';
  return e.code.toLowerCase();
}

/** Status class label of an HTTP status: `2xx`, `4xx`, … */
export function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

/** A gauge whose value is read at scrape time (a component registers the reader when it starts). */
type Reader = () => number | Promise<number>;

/** Options of {@link Metrics}. */
export interface MetricsOptions {
  /** Collect the process's default metrics (CPU, memory, event loop lag, GC); default true. */
  defaultMetrics?: boolean;
  /** Static labels on every series, e.g. `{service: 'query'}`. */
  labels?: Record<string, string>;
}

/** The process's registry and every metric the service exports. */
export class Metrics {
  readonly registry = new Registry();
  /** HTTP requests at the gateway, by route template (`unmatched` for a 404 without a route), method and status class. */
  readonly httpDuration: FastHistogram<'route' | 'method' | 'status_class'>;
  /** Bus requests by side (`client` at the caller, `server` at the service), subject (`tasks.get`) and outcome. */
  readonly busDuration: FastHistogram<'side' | 'subject' | 'outcome'>;
  /** One store call by collection, operation and outcome (`ok` or the catalogue code). */
  readonly storeDuration: FastHistogram<'collection' | 'op' | 'outcome'>;
  /** A whole store transaction (every attempt) by outcome. */
  readonly transactionDuration: FastHistogram<'outcome'>;
  /** Transaction attempts beyond the first: write conflicts and transient errors the store retried. */
  readonly transactionRetries: Counter;
  /**
   * Write conflicts met by transactions: a write refused with MongoDB's `WriteConflict` (first
   * writer wins, on MongoDB and under `EMBEDDED_ISOLATION=snapshot`), or an attempt rerun without
   * such a refusal (a conflict the serial embedded store found at its commit, or another transient
   * error of the commit) — each one ends that attempt.
   */
  readonly writeConflicts: Counter;
  /** Close-sprint requests at the sprint service, by outcome. */
  readonly sprintCloseDuration: FastHistogram<'outcome'>;
  /** Webhook delivery attempts by outcome (`delivered`, `failed`, `retry`, …). */
  readonly webhookAttempts: Counter<'outcome'>;
  /** Requests the gateway's admission control refused with 429, by reason (`in_flight`: queue full or waited too long; `budget`: cost budget spent). */
  readonly admissionRejections: Counter<'reason'>;
  /** Time a request waited in admission before it ran, by reason (`in_flight`, `budget`); requests admitted at once are not observed. */
  readonly admissionQueueWait: FastHistogram<'reason'>;
  private readonly readers = new Map<string, Reader>();

  constructor(opts: MetricsOptions = {}) {
    if (opts.labels) this.registry.setDefaultLabels(opts.labels);
    if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
    const registers = [this.registry];
    this.httpDuration = new FastHistogram('http_request_duration_seconds', 'HTTP requests at the gateway, by route template, method and status class', ['route', 'method', 'status_class'], REQUEST_BUCKETS, this.registry);
    this.busDuration = new FastHistogram('bus_request_duration_seconds', 'Bus request-reply calls, by side (client or server), subject and outcome', ['side', 'subject', 'outcome'], REQUEST_BUCKETS, this.registry);
    this.storeDuration = new FastHistogram('store_operation_duration_seconds', 'Document store calls, by collection, operation and outcome', ['collection', 'op', 'outcome'], STORE_BUCKETS, this.registry);
    this.transactionDuration = new FastHistogram('store_transaction_duration_seconds', 'Document store transactions (all attempts), by outcome', ['outcome'], REQUEST_BUCKETS, this.registry);
    this.transactionRetries = new Counter({
      name: 'store_transaction_retries_total', help: 'Transaction attempts beyond the first (write conflicts, transient errors)', registers,
    });
    this.writeConflicts = new Counter({
      name: 'store_write_conflicts_total', help: 'Transaction attempts ended by a write conflict (a WriteConflict refusal, or a conflict found at commit)', registers,
    });
    this.sprintCloseDuration = new FastHistogram('sprint_close_duration_seconds', 'Close-sprint at the sprint service, by outcome', ['outcome'], REQUEST_BUCKETS, this.registry);
    this.webhookAttempts = new Counter({
      name: 'webhook_attempts_total', help: 'Webhook delivery attempts, by outcome', labelNames: ['outcome'], registers,
    });
    this.admissionRejections = new Counter({
      name: 'admission_rejections_total', help: 'Requests refused by admission control (429), by reason (in_flight, budget)', labelNames: ['reason'], registers,
    });
    this.admissionQueueWait = new FastHistogram('admission_queue_wait_seconds', 'Time requests waited in admission control before running, by reason (in_flight, budget)', ['reason'], REQUEST_BUCKETS, this.registry);
    this.scrapeGauge('events_outbox_lag', 'Committed writes whose events the relay has not numbered yet (outbox entries waiting)');
    this.scrapeGauge('events_sse_streams_open', 'Open event streams (SSE) at this gateway');
    this.scrapeGauge('webhook_oldest_pending_age_seconds', 'Age of the oldest webhook delivery still waiting for an attempt (0 when none)');
  }

  /**
   * Sets the reader of a scrape-time gauge ({@link Metrics} defines `events_outbox_lag`,
   * `events_sse_streams_open`, `webhook_oldest_pending_age_seconds`); a later call replaces it.
   * A reader that throws leaves the gauge at its last value. Returns a function that removes it.
   */
  observe(name: string, read: Reader): () => void {
    this.readers.set(name, read);
    return () => {
      if (this.readers.get(name) === read) this.readers.delete(name);
    };
  }

  private scrapeGauge(name: string, help: string): void {
    const readers = this.readers;
    new Gauge({
      name, help, registers: [this.registry],
      async collect() {
        const read = readers.get(name);
        if (!read) return;
        try {
          this.set(await read());
        } catch {
          // keep the last value: a scrape never fails for one gauge
        }
      },
    });
  }

  /** The Prometheus text exposition of every metric. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /** Content type of {@link text}. */
  get contentType(): string {
    return this.registry.contentType;
  }
}
