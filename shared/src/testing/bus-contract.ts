import { Type } from '@sinclair/typebox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bind, isNoResponders, type Binding, type Bus, type Served } from '../bus/index.js';
import { op } from '../contracts/index.js';
import { AppError } from '../errors/index.js';
import { createLogger, silentLogger, type Logger } from '../log/index.js';
import { rejection } from './assertions.js';

/** The buses one contract run uses; `server2` (a queue peer of `server`) defaults to `server`. */
export interface BusFixture {
  client: Bus;
  server: Bus;
  server2?: Bus;
  dispose(): Promise<void>;
}

/**
 * A production logger (`createLogger`: redaction, `service` binding) whose lines stay in memory,
 * for asserting log content. `lines()` parses what was written so far.
 */
export function captureLog(name = 'test', level = 'info'): { log: Logger; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const log = createLogger({ name, level, destination: { write: (s: string) => void chunks.push(s) } });
  return { log, lines: () => chunks.map((c) => JSON.parse(c) as Record<string, unknown>) };
}

const Add = op({
  subject: 'contract.add',
  request: Type.Object({ a: Type.Number(), b: Type.Number() }),
  response: Type.Object({ sum: Type.Number() }),
});
const Greet = op({
  subject: 'contract.greet',
  request: Type.Object({ name: Type.String({ minLength: 1 }), count: Type.Integer({ minimum: 0 }) }),
  response: Type.Object({ greeting: Type.String(), count: Type.Integer() }),
});
const Context = op({
  subject: 'contract.context',
  request: Type.Object({}),
  response: Type.Object({
    requestId: Type.String(),
    userId: Type.Optional(Type.String()),
    traceparent: Type.Optional(Type.String()),
    sourceAddress: Type.Optional(Type.String()),
    subject: Type.String(),
  }),
});
const Fail = op({
  subject: 'contract.fail',
  request: Type.Object({ kind: Type.String() }),
  response: Type.Null(),
});
const Slow = op({ subject: 'contract.slow', request: Type.Object({}), response: Type.Null(), timeoutMs: 200 });
const Who = op({
  subject: 'contract.who',
  request: Type.Object({ n: Type.Integer() }),
  response: Type.Object({ by: Type.String(), n: Type.Integer() }),
});
const Nobody = op({ subject: 'contract.nobody', request: Type.Object({}), response: Type.Null() });

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/**
 * The bus contract (docs/architecture.md §3, §10): one suite every `Bus` implementation passes.
 * `makeBus` runs before each test and must give buses that share no state with other tests (for
 * NATS: a fresh `uniquePrefix()`); `dispose` runs after it.
 */
export function busContract(label: string, makeBus: () => Promise<BusFixture>): void {
  describe(`bus contract: ${label}`, () => {
    let f: BusFixture;
    const serveOpts = { queue: 'contract', log: silentLogger() };
    const serve = (...bindings: Binding[]): Promise<Served> => f.server.serve(bindings, serveOpts);

    beforeEach(async () => {
      f = await makeBus();
    });
    afterEach(async () => {
      await f.dispose();
    });

    it('answers a request with the handler result', async () => {
      await serve(bind(Add, async ({ a, b }) => ({ sum: a + b })));
      expect(await f.client.request(Add, { a: 2, b: 40 })).toEqual({ sum: 42 });
    });

    it('requestText resolves with the data JSON text, unparsed', async () => {
      await serve(bind(Greet, async ({ name, count }) => ({ greeting: `hello ${name}`, count })));
      const text = await f.client.requestText(Greet, { name: 'ada', count: 3 });
      expect(text).toBe(JSON.stringify({ greeting: 'hello ada', count: 3 }));
    });

    it('rejects an invalid request with 400 VALIDATION_FAILED naming each field, without calling the handler', async () => {
      let calls = 0;
      await serve(
        bind(Greet, async ({ name, count }) => {
          calls++;
          return { greeting: name, count };
        }),
      );
      const err = await rejection(f.client.request(Greet, { name: '', count: 1.5 }));
      expect(err.status).toBe(400);
      expect(err.code).toBe('VALIDATION_FAILED');
      expect(err.validationErrors?.map((v) => v.field).sort()).toEqual(['/count', '/name']);
      const missing = await rejection(f.client.requestText(Greet, { name: 'x' } as never));
      expect(missing.validationErrors?.map((v) => v.field)).toEqual(['/count']);
      expect(calls).toBe(0);
    });

    it("carries a handler's AppError with its code, message, details and extra", async () => {
      const snapshot = { id: 't1', status: 'done', tags: ['q4'] };
      await serve(
        bind(Fail, async () => {
          throw new AppError('KANBAN_TASK_NOT_IN_SOURCE_COLUMN', {
            message: 'The card left the column',
            details: { boardId: 'b1' },
            extra: { task: snapshot },
          });
        }),
      );
      const err = await rejection(f.client.request(Fail, { kind: 'app' }));
      expect(err).toMatchObject({
        code: 'KANBAN_TASK_NOT_IN_SOURCE_COLUMN',
        status: 409,
        message: 'The card left the column',
        details: { boardId: 'b1' },
        extra: { task: snapshot },
      });
    });

    it('turns an unexpected error into 500 INTERNAL without leaking its message or stack', async () => {
      await serve(
        bind(Fail, async () => {
          throw new Error('db password is hunter2');
        }),
      );
      const err = await rejection(f.client.request(Fail, { kind: 'crash' }));
      expect(err.code).toBe('INTERNAL');
      expect(err.status).toBe(500);
      expect(`${err.message} ${String(err.stack)} ${JSON.stringify(err.toWire())}`).not.toContain('hunter2');
    });

    it('fails with 504 UPSTREAM_TIMEOUT after op.timeoutMs when the handler is slower', async () => {
      let release = () => {};
      const gate = new Promise<void>((r) => (release = r));
      await serve(bind(Slow, async () => (await gate, null)));
      try {
        const err = await rejection(f.client.request(Slow, {}));
        expect(err).toMatchObject({ code: 'UPSTREAM_TIMEOUT', status: 504, details: { subject: Slow.subject, timeoutMs: 200 } });
      } finally {
        release();
      }
    });

    it('fails with 503 SERVICE_UNAVAILABLE when nothing serves the subject', async () => {
      const err = await rejection(f.client.request(Nobody, {}));
      expect(err).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503, details: { subject: Nobody.subject } });
      expect(isNoResponders(err), 'told apart from a closed or disconnected bus (the metrics outcome no_responders)').toBe(true);
    });

    it('passes request id, user id, traceparent and source address to ctx; generates a request id when absent', async () => {
      await serve(
        bind(Context, async (_, ctx) => ({
          requestId: ctx.requestId,
          userId: ctx.userId,
          traceparent: ctx.traceparent,
          sourceAddress: ctx.sourceAddress,
          subject: ctx.subject,
        })),
      );
      const meta = { requestId: 'req-42', userId: 'user-7', traceparent: TRACEPARENT, sourceAddress: '203.0.113.9' };
      expect(await f.client.request(Context, {}, meta)).toEqual({ ...meta, subject: Context.subject });
      const anonymous = await f.client.request(Context, {});
      expect(anonymous.requestId).toMatch(/\S/);
      expect(anonymous.userId).toBeUndefined();
      expect(anonymous.sourceAddress).toBeUndefined();
    });

    it("binds the request id and subject to every line of the handler's ctx.log", async () => {
      const { log, lines } = captureLog();
      const add = bind(Add, async ({ a, b }, ctx) => {
        ctx.log.info('adding');
        return { sum: a + b };
      });
      await f.server.serve([add], { queue: 'contract', log });
      await f.client.request(Add, { a: 1, b: 1 }, { requestId: 'req-log' });
      expect(lines()).toContainEqual(expect.objectContaining({ msg: 'adding', reqId: 'req-log', subject: Add.subject }));
    });

    describe('queue group', () => {
      const N = 40;
      const answered: string[] = [];
      const who = (by: string) =>
        bind(Who, async ({ n }) => {
          answered.push(by);
          return { by, n };
        });
      const askAll = () => Promise.all(Array.from({ length: N }, (_, n) => f.client.request(Who, { n })));
      beforeEach(() => void answered.splice(0));

      it('shares requests between responders: each request answered once, both take some', async () => {
        await serve(who('one'));
        await (f.server2 ?? f.server).serve([who('two')], serveOpts);
        const replies = await askAll();
        expect(replies.map((r) => r.n)).toEqual(Array.from({ length: N }, (_, n) => n));
        expect(answered).toHaveLength(N);
        expect(new Set(answered)).toEqual(new Set(['one', 'two']));
      });

      it('hands all requests to the peer once a responder closes; 503 once none is left', async () => {
        const one = await serve(who('one'));
        const two = await (f.server2 ?? f.server).serve([who('two')], serveOpts);
        await one.close();
        expect(new Set((await askAll()).map((r) => r.by))).toEqual(new Set(['two']));
        await two.close();
        expect((await rejection(f.client.request(Who, { n: 0 }))).code).toBe('SERVICE_UNAVAILABLE');
      });
    });

    it('a shutdown (Served.close, then bus close) still answers the requests in flight', async () => {
      let entered = () => {};
      const inHandler = new Promise<void>((r) => (entered = r));
      let release = () => {};
      const gate = new Promise<void>((r) => (release = r));
      const served = await serve(
        bind(Add, async ({ a, b }) => {
          entered();
          await gate;
          return { sum: a + b };
        }),
      );
      const reply = f.client.request(Add, { a: 1, b: 2 });
      await inHandler;
      const shutdown = served.close().then(() => f.server.close());
      setTimeout(release, 100); // long after an unguarded shutdown would have dropped the reply
      expect(await reply).toEqual({ sum: 3 });
      await shutdown;
    });

    it('a payload JSON cannot carry fails with 500 INTERNAL before anything is sent', async () => {
      let calls = 0;
      await serve(
        bind(Add, async ({ a, b }) => {
          calls++;
          return { sum: a + b };
        }),
      );
      expect((await rejection(f.client.request(Add, { a: 1n, b: 2 } as never))).code).toBe('INTERNAL');
      expect(calls).toBe(0);
    });

    it('a closed bus answers 503 to request, serve and ping; close is idempotent', async () => {
      await f.client.ping();
      await f.client.close();
      await f.client.close();
      expect((await rejection(f.client.request(Add, { a: 1, b: 1 }))).code).toBe('SERVICE_UNAVAILABLE');
      expect((await rejection(f.client.serve([bind(Nobody, async () => null)], serveOpts))).code).toBe('SERVICE_UNAVAILABLE');
      expect((await rejection(f.client.ping())).code).toBe('SERVICE_UNAVAILABLE');
    });
  });
}
