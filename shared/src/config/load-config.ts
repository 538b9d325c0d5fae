import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/** Thrown at start-up when the environment is invalid; `problems` lists every fault at once. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Reads `env` through a TypeBox schema: applies defaults, converts strings to numbers/booleans,
 * and throws one {@link ConfigError} that lists every invalid or missing variable. Returns a
 * frozen object. Only `main.ts` files call this with `process.env` (docs/architecture.md §10).
 */
export function loadConfig<T extends TObject>(schema: T, env: Record<string, string | undefined>): Readonly<Static<T>> {
  const picked: Record<string, unknown> = {};
  for (const key of Object.keys(schema.properties)) {
    const v = env[key];
    if (v !== undefined && v !== '') picked[key] = v;
  }
  const withDefaults = Value.Default(schema, picked);
  const converted = Value.Convert(schema, withDefaults);
  const problems = [...Value.Errors(schema, converted)].map((e) => {
    const name = e.path.replace(/^\//, '') || '(root)';
    return `${name}: ${expectation(e.schema, e.message)}${e.value === undefined ? '' : ` (got ${shown(name, e.value)})`}`;
  });
  if (problems.length > 0) throw new ConfigError([...new Set(problems)]);
  return Object.freeze(converted as Static<T>);
}

/** A union of literals reads better as its list of allowed values. */
function expectation(schema: TSchema, message: string): string {
  const allowed = (schema.anyOf as TSchema[] | undefined)?.map((s) => s.const as unknown);
  return allowed?.every((v) => typeof v === 'string') ? `Expected one of ${allowed.join(', ')}` : message;
}

/** The offending value for the message; secrets are hidden and URL credentials masked (they reach logs). */
function shown(name: string, value: unknown): string {
  if (/SECRET|PASSWORD|TOKEN|CODE/.test(name)) return '(hidden)';
  return JSON.stringify(value).replace(/\/\/[^/@\s]*@/, '//***@');
}

/**
 * The environment every process reads (docs/architecture.md §2). Services use the subset they need.
 */
export const CommonConfig = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  HOST: Type.String({ default: '0.0.0.0' }),
  DATA_DIR: Type.String({ default: './data' }),
  NATS_URL: Type.Optional(Type.String({ minLength: 1 })),
  BUS_PREFIX: Type.String({ default: '', pattern: '^[A-Za-z0-9_-]*$' }),
  MONGO_URL: Type.Optional(Type.String({ pattern: '^mongodb(\\+srv)?://' })),
  MONGO_DB: Type.String({ default: 'boards', minLength: 1 }),
  JWT_SECRET: Type.Optional(Type.String({ minLength: 16 })),
  JWT_EXPIRATION_MINUTES: Type.Integer({ minimum: 1, maximum: 10_080, default: 60 }),
  /**
   * `true` opens registration, `false` closes it. Unset: open, except in production
   * (`NODE_ENV=production`), where it is open only with `INVITE_CODE` set (docs/auth.md).
   */
  REGISTRATION_ENABLED: Type.Optional(Type.Boolean()),
  INVITE_CODE: Type.Optional(Type.String({ minLength: 1 })),
  ADMIN_USERNAME: Type.Optional(Type.String({ minLength: 1 })),
  ADMIN_PASSWORD: Type.Optional(Type.String({ minLength: 8 })),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  NODE_ENV: Type.String({ default: 'development' }),
  /**
   * Embedded store durability (docs/store.md "Durability"): `full` (default) syncs every
   * commit before it is acknowledged; `normal` trades the last writes before an OS crash for speed.
   */
  EMBEDDED_SYNC: Type.Union([Type.Literal('full'), Type.Literal('normal')], { default: 'full' }),
  /**
   * Concurrency of the all-in-one's embedded store (docs/store.md "Snapshot isolation"): `serial`
   * (default) runs transactions one at a time; `snapshot` runs them through MongoDB's model
   * (concurrent, snapshot reads, first-writer-wins write conflicts, retries), so black-box and
   * load tests meet MongoDB's concurrency without MongoDB. A test and bench setting; ignored
   * with `MONGO_URL` (MongoDB is the real thing). Read only by the gateway's main.ts.
   */
  EMBEDDED_ISOLATION: Type.Union([Type.Literal('serial'), Type.Literal('snapshot')], { default: 'serial' }),
  /**
   * Opt-in for a separately started process (`node services/<name>/dist/main.js`, the gateway
   * without `--all`) to open its own embedded store in `DATA_DIR` when `MONGO_URL` is unset
   *: such a process then sees only its own data. Without it, such a process refuses
   * to start. Benchmarks and single-service experiments only.
   */
  EMBEDDED_STANDALONE: Type.Boolean({ default: false }),
  /** How long an Idempotency-Key's answer is replayed, in hours (docs/concurrency.md). */
  IDEMPOTENCY_TTL_HOURS: Type.Integer({ minimum: 1, maximum: 720, default: 24 }),
  /** Days the events outbox keeps an event; older cursors answer 410. */
  EVENT_RETENTION_DAYS: Type.Number({ exclusiveMinimum: 0, maximum: 3650, default: 7 }),
  /** Days an audit log entry is kept (docs/audit.md "Retention"); applies to entries written from then on. */
  AUDIT_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 36_500, default: 365 }),
  /** Days a board's daily flow snapshot is kept (docs/flow.md "Retention"). */
  FLOW_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 365 }),
  /** Attempts per webhook delivery before it is marked failed. */
  WEBHOOK_MAX_ATTEMPTS: Type.Integer({ minimum: 1, maximum: 30, default: 6 }),
  /** Comma-separated host names or IP addresses webhooks may target despite the SSRF rules. */
  WEBHOOK_ALLOWED_HOSTS: Type.String({ default: '' }),
  /**
   * `true` turns the webhook SSRF address rules off (local development: a receiver on localhost).
   * Default false: the rules apply whatever `NODE_ENV` says (docs/events.md "SSRF rules").
   */
  WEBHOOK_ALLOW_PRIVATE: Type.Boolean({ default: false }),
  /** Prometheus metrics (docs/observability.md): `false` measures nothing and serves no `/metrics`. */
  METRICS_ENABLED: Type.Boolean({ default: true }),
  /**
   * Port of a separate metrics endpoint (`GET /metrics`): every separately started service serves
   * its metrics only there; the gateway serves them there instead of on `PORT`. Unset: services
   * serve none, the gateway serves `/metrics` on `PORT`.
   */
  METRICS_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  /** Host the metrics endpoint binds to (default `HOST`): keep it on an internal interface in production. */
  METRICS_HOST: Type.Optional(Type.String({ minLength: 1 })),
  /**
   * Bearer token `GET /metrics` then requires (`Authorization: Bearer <token>`), at least 16
   * characters. In production the gateway serves `/metrics` on `PORT` only with it (else only on
   * `METRICS_PORT`); on `METRICS_PORT` it is required too when set (docs/observability.md).
   */
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  /** OTLP/HTTP endpoint traces are exported to (the standard OpenTelemetry variable); unset: no tracing. */
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://' })),
  /** `service.name` of the exported spans (the standard OpenTelemetry variable); default the process's name. */
  OTEL_SERVICE_NAME: Type.Optional(Type.String({ minLength: 1 })),
  /**
   * Admission control at the gateway (docs/http.md "Fair use"), per principal (the access token,
   * else the user): requests of one principal running at once; more wait in its queue.
   */
  ADMISSION_IN_FLIGHT: Type.Integer({ minimum: 1, maximum: 10_000, default: 16 }),
  /** Requests of one principal that may wait for admission; one more is 429 `RATE_LIMITED` at once. */
  ADMISSION_QUEUE: Type.Integer({ minimum: 0, maximum: 100_000, default: 64 }),
  /** Longest wait for admission, in ms (in-flight slot or cost budget); past it: 429 with `Retry-After`. */
  ADMISSION_QUEUE_WAIT_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 1_000 }),
  /**
   * Expensive requests (queries, board reads, summaries, reports, flow, batch) of one principal
   * running at once; 8 lets the web board's first load (the board, 6 column reads and the summary) run in parallel.
   */
  ADMISSION_EXPENSIVE_IN_FLIGHT: Type.Integer({ minimum: 1, maximum: 10_000, default: 8 }),
  /** A principal's cost budget when full, in ms of measured server time: what it may spend in a burst. */
  COST_BUDGET_MS: Type.Integer({ minimum: 1, maximum: 3_600_000, default: 2_000 }),
  /** How fast a principal's cost budget refills, in ms of server time per second of wall time (250: a quarter of one core). */
  COST_REFILL_MS_PER_SECOND: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 250 }),
});
export type CommonConfig = Static<typeof CommonConfig>;
