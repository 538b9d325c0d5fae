import { describe, expect, it } from 'vitest';
import { CommonConfig, ConfigError, loadConfig } from '@app/shared/config';

/** The error loadConfig throws for `env`; fails the test when it does not throw. */
function problemsOf(env: Record<string, string | undefined>): string[] {
  try {
    loadConfig(CommonConfig, env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).problems;
  }
  return expect.fail('expected a ConfigError');
}

describe('loadConfig(CommonConfig, env)', () => {
  it('applies the docs/architecture.md §2 defaults to an empty environment', () => {
    expect(loadConfig(CommonConfig, {})).toEqual({
      PORT: 8080,
      HOST: '0.0.0.0',
      DATA_DIR: './data',
      BUS_PREFIX: '',
      MONGO_DB: 'boards',
      JWT_EXPIRATION_MINUTES: 60,
      LOG_LEVEL: 'info',
      NODE_ENV: 'development',
      EMBEDDED_SYNC: 'full',
      EMBEDDED_ISOLATION: 'serial',
      EMBEDDED_STANDALONE: false,
      IDEMPOTENCY_TTL_HOURS: 24,
      AUDIT_RETENTION_DAYS: 365,
      EVENT_RETENTION_DAYS: 7,
      FLOW_RETENTION_DAYS: 365,
      WEBHOOK_MAX_ATTEMPTS: 6,
      WEBHOOK_ALLOWED_HOSTS: '',
      WEBHOOK_ALLOW_PRIVATE: false,
      METRICS_ENABLED: true,
      ADMISSION_IN_FLIGHT: 16,
      ADMISSION_QUEUE: 64,
      ADMISSION_QUEUE_WAIT_MS: 1_000,
      ADMISSION_EXPENSIVE_IN_FLIGHT: 8,
      COST_BUDGET_MS: 2_000,
      COST_REFILL_MS_PER_SECOND: 250,
    });
  });

  it('takes EMBEDDED_SYNC=normal and EMBEDDED_STANDALONE=1, and refuses anything else', () => {
    expect(loadConfig(CommonConfig, { EMBEDDED_SYNC: 'normal', EMBEDDED_STANDALONE: '1' })).toMatchObject({ EMBEDDED_SYNC: 'normal', EMBEDDED_STANDALONE: true });
    const problems = problemsOf({ EMBEDDED_SYNC: 'off', EMBEDDED_STANDALONE: 'yes' });
    expect(problems).toContain('EMBEDDED_SYNC: Expected one of full, normal (got "off")');
    expect(problems.some((p) => p.startsWith('EMBEDDED_STANDALONE:'))).toBe(true);
  });

  it('takes EMBEDDED_ISOLATION=snapshot, and refuses anything but serial or snapshot', () => {
    expect(loadConfig(CommonConfig, { EMBEDDED_ISOLATION: 'snapshot' }).EMBEDDED_ISOLATION).toBe('snapshot');
    expect(problemsOf({ EMBEDDED_ISOLATION: 'mongo' })).toContain('EMBEDDED_ISOLATION: Expected one of serial, snapshot (got "mongo")');
  });

  it('converts numbers and booleans and keeps strings', () => {
    const config = loadConfig(CommonConfig, {
      PORT: '9090',
      JWT_EXPIRATION_MINUTES: '15',
      REGISTRATION_ENABLED: 'false',
      NATS_URL: 'nats://nats:4222',
      BUS_PREFIX: 'stage_1',
      MONGO_URL: 'mongodb://mongo:27017/?replicaSet=rs0',
      LOG_LEVEL: 'debug',
    });
    expect(config).toMatchObject({
      PORT: 9090,
      JWT_EXPIRATION_MINUTES: 15,
      REGISTRATION_ENABLED: false,
      NATS_URL: 'nats://nats:4222',
      BUS_PREFIX: 'stage_1',
      MONGO_URL: 'mongodb://mongo:27017/?replicaSet=rs0',
      LOG_LEVEL: 'debug',
    });
  });

  it('treats an empty variable as unset and ignores variables it does not know', () => {
    const config = loadConfig(CommonConfig, { PORT: '', NATS_URL: '', PATH: '/usr/bin' });
    expect(config.PORT).toBe(8080);
    expect(config).not.toHaveProperty('NATS_URL');
    expect(config).not.toHaveProperty('PATH');
  });

  it('reports every problem at once, each naming its variable', () => {
    const problems = problemsOf({
      PORT: 'eighty',
      JWT_EXPIRATION_MINUTES: '0',
      REGISTRATION_ENABLED: 'maybe',
      MONGO_URL: 'http://mongo',
      BUS_PREFIX: 'has.dot',
      LOG_LEVEL: 'loud',
      JWT_SECRET: 'short',
    });
    const named = new Set(problems.map((p) => p.split(':')[0]));
    expect(named).toEqual(
      new Set(['PORT', 'JWT_EXPIRATION_MINUTES', 'REGISTRATION_ENABLED', 'MONGO_URL', 'BUS_PREFIX', 'LOG_LEVEL', 'JWT_SECRET']),
    );
    expect(problems.find((p) => p.startsWith('PORT'))).toContain('"eighty"');
  });

  it('names the allowed values of an enumerated variable', () => {
    expect(problemsOf({ LOG_LEVEL: 'loud' })).toEqual(['LOG_LEVEL: Expected one of fatal, error, warn, info, debug, trace, silent (got "loud")']);
  });

  it('never echoes a secret or the credentials in a URL', () => {
    const problems = problemsOf({ JWT_SECRET: 'hunter2', ADMIN_PASSWORD: 'pw', MONGO_URL: 'mongo://admin:hunter2@db:27017' });
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual(['ADMIN_PASSWORD', 'JWT_SECRET', 'MONGO_URL']);
    const text = problems.join('\n');
    expect(text).not.toContain('hunter2');
    expect(text).not.toMatch(/"pw"/);
  });

  it('lists the problems in the error message too', () => {
    expect(() => loadConfig(CommonConfig, { PORT: '70000', LOG_LEVEL: 'loud' })).toThrow(/PORT[\s\S]*LOG_LEVEL/);
  });

  it('returns a frozen object', () => {
    const config = loadConfig(CommonConfig, {});
    expect(Object.isFrozen(config)).toBe(true);
  });
});
