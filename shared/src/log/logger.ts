import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/** Paths pino redacts in every log line: credentials and tokens never reach the log. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  '*.password',
  '*.passwordHash',
  '*.token',
  '*.accessToken',
  '*.refreshToken',
  '*.secret',
  'password',
  'accessToken',
  'refreshToken',
  'JWT_SECRET',
  '*.JWT_SECRET',
  'ADMIN_PASSWORD',
  '*.ADMIN_PASSWORD',
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
