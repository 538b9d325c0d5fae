import { describe, expect, it } from 'vitest';
import { createLogger } from '@app/shared/log';

/** A root logger as main.ts makes it, writing into an array instead of stdout. */
function logger(level = 'info') {
  const lines: string[] = [];
  const log = createLogger({ name: 'boards', level, destination: { write: (s: string) => void lines.push(s) } });
  return { log, lines };
}

describe('createLogger', () => {
  it('redacts passwords, tokens and the authorization header, keeping the rest', () => {
    const { log, lines } = logger();
    log.info(
      {
        password: 'pw-top',
        accessToken: 'at-top',
        authorization: 'Bearer top',
        user: { username: 'ada', password: 'pw-nested', token: 'tok-nested', refreshToken: 'rt-nested' },
        req: { method: 'POST', headers: { authorization: 'Bearer req-header' } },
        headers: { authorization: 'Bearer bus-header' },
        err: { details: { password: 'pw-deep', refreshToken: 'rt-deep' } },
      },
      'login',
    );
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    for (const secret of ['pw-top', 'at-top', 'Bearer', 'pw-nested', 'tok-nested', 'rt-nested', 'pw-deep', 'rt-deep']) expect(line).not.toContain(secret);
    expect(JSON.parse(line)).toMatchObject({
      msg: 'login',
      password: '[redacted]',
      authorization: '[redacted]',
      user: { username: 'ada', password: '[redacted]', token: '[redacted]' },
      req: { method: 'POST', headers: { authorization: '[redacted]' } },
      err: { details: { password: '[redacted]', refreshToken: '[redacted]' } },
    });
  });

  it('keeps redacting in child loggers and binds the service name', () => {
    const { log, lines } = logger();
    log.child({ reqId: 'req-1' }).warn({ body: { password: 'child-pw' } }, 'bad login');
    expect(lines[0]).not.toContain('child-pw');
    expect(JSON.parse(lines[0]!)).toMatchObject({ service: 'boards', reqId: 'req-1', level: 40, body: { password: '[redacted]' } });
  });

  it('writes nothing below its level', () => {
    const { log, lines } = logger('warn');
    log.info('routine');
    log.debug('detail');
    expect(lines).toEqual([]);
  });
});
