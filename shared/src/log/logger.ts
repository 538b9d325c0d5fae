import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/** Keys whose values never reach the log, at the top level or up to two objects deep. */
const SECRET_KEYS = ['password', 'passwordHash', 'token', 'accessToken', 'refreshToken', 'secret', 'JWT_SECRET', 'ADMIN_PASSWORD'];

/**
 * Paths pino redacts in every log line: credentials and tokens never reach the log. Each secret
 * key is redacted at the top level and one or two objects down (`*.key`, `*.*.key`: e.g. a request
 * body inside an error's details); deeper ones are not (pino paths have no recursive wildcard).
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  ...SECRET_KEYS.flatMap((key) => [key, `*.${key}`, `*.*.${key}`]),
];

/**
 * Creates the process's root pino logger with `{service}` bound and credentials redacted.
 * `level` is a pino level name (`silent` in tests); `destination` overrides stdout (tests).
 */
export function createLogger(opts: { name: string; level?: string; destination?: DestinationStream }): Logger {
  const options = {
    name: opts.name,
    level: opts.level ?? 'info',
    base: { service: opts.name },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
  return opts.destination ? pino(options, opts.destination) : pino(options);
}

/** A logger that writes nothing, for tests. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
