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
 * frozen object. Only `main.ts` files call this with `process.env` (DESIGN §10).
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
 * The environment every process reads (DESIGN §2). Services use the subset they need.
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
  REGISTRATION_ENABLED: Type.Boolean({ default: true }),
  INVITE_CODE: Type.Optional(Type.String({ minLength: 1 })),
  ADMIN_USERNAME: Type.Optional(Type.String({ minLength: 1 })),
  ADMIN_PASSWORD: Type.Optional(Type.String({ minLength: 8 })),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  NODE_ENV: Type.String({ default: 'development' }),
  /** How long an Idempotency-Key's answer is replayed, in hours (issue 11; docs/concurrency.md). */
  IDEMPOTENCY_TTL_HOURS: Type.Integer({ minimum: 1, maximum: 720, default: 24 }),
});
export type CommonConfig = Static<typeof CommonConfig>;
