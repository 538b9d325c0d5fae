import { Type } from '@sinclair/typebox';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bind, Headers, NatsBus, OK_PREFIX } from '@app/shared/bus';
import { op } from '@app/shared/contracts';
import { silentLogger } from '@app/shared/log';
import { busContract, rejection, startNatsServer, uniquePrefix, type NatsServer } from '@app/shared/testing';

const log = silentLogger();
const Which = op({ subject: 'itest.which', request: Type.Object({}), response: Type.Object({ side: Type.String() }), timeoutMs: 1_000 });
const Text = op({ subject: 'itest.text', request: Type.Object({ text: Type.String() }), response: Type.Object({ text: Type.String() }), timeoutMs: 10_000 });
const Hang = op({ subject: 'itest.hang', request: Type.Object({}), response: Type.Null(), timeoutMs: 300 });

let nats: NatsServer;
beforeAll(async () => {
  nats = await startNatsServer();
});
afterAll(async () => {
  await nats?.stop();
});

const connectBus = (servers: string, prefix: string) => NatsBus.connect({ servers, prefix, name: 'itest', log });

busContract('NatsBus', async () => {
  const prefix = uniquePrefix();
  const [client, server, server2] = await Promise.all([1, 2, 3].map(() => connectBus(nats.url, prefix)));
  return {
    client: client!,
    server: server!,
    server2: server2!,
    dispose: async () => void (await Promise.all([client!.close(), server!.close(), server2!.close()])),
  };
});

describe('NatsBus only', () => {
  it('keeps two prefixes on one server apart', async () => {
    const [a, b] = await Promise.all([connectBus(nats.url, uniquePrefix()), connectBus(nats.url, uniquePrefix())]);
    try {
      await a.serve([bind(Which, async () => ({ side: 'a' }))], { queue: 'itest', log });
      expect(await a.request(Which, {})).toEqual({ side: 'a' });
      expect((await rejection(b.request(Which, {}))).code).toBe('SERVICE_UNAVAILABLE');
      await b.serve([bind(Which, async () => ({ side: 'b' }))], { queue: 'itest', log });
      const sides = await Promise.all([a, b, a, b, a, b].map(async (bus) => (await bus.request(Which, {})).side));
      expect(sides).toEqual(['a', 'b', 'a', 'b', 'a', 'b']);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  describe('wire format', () => {
    let raw: NatsConnection;
    beforeAll(async () => {
      raw = await connect({ servers: nats.url });
    });
    afterAll(async () => {
      await raw.close();
    });

    it('sends `<prefix>.<subject>` with a JSON body and the x-request-id, x-user-id and traceparent headers', async () => {
      const prefix = uniquePrefix();
      const bus = await connectBus(nats.url, prefix);
      const seen: Array<{ subject: string; body: string; headers: Record<string, string> }> = [];
      raw.subscribe(`${prefix}.${Which.subject}`, {
        callback: (_, msg) => {
          const h = msg.headers;
          seen.push({
            subject: msg.subject,
            body: msg.string(),
            headers: Object.fromEntries([Headers.requestId, Headers.userId, Headers.traceparent].map((k) => [k, h?.get(k) ?? ''])),
          });
          msg.respond(JSON.stringify({ ok: true, data: { side: 'raw' } }));
        },
      });
      await raw.flush();
      try {
        const meta = { requestId: 'req-1', userId: 'user-1', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
        expect(await bus.request(Which, {}, meta)).toEqual({ side: 'raw' });
        await bus.request(Which, {});
        expect(seen[0]).toEqual({
          subject: `${prefix}.itest.which`,
          body: '{}',
          headers: { 'x-request-id': 'req-1', 'x-user-id': 'user-1', traceparent: meta.traceparent },
        });
        expect(seen[1]?.headers['x-request-id']).toMatch(/\S/);
      } finally {
        await bus.close();
      }
    });

    it('replies with the {ok, data} / {ok, error} envelope to any NATS client', async () => {
      const prefix = uniquePrefix();
      const bus = await connectBus(nats.url, prefix);
      try {
        await bus.serve([bind(Which, async (_, ctx) => ({ side: ctx.userId ?? 'nobody' }))], { queue: 'itest', log });
        const h = headers();
        h.set(Headers.userId, 'user-9');
        const ok = await raw.request(`${prefix}.itest.which`, '{}', { timeout: 1_000, headers: h });
        expect(ok.string()).toBe(`${OK_PREFIX}{"side":"user-9"}}`);
        const bad = await raw.request(`${prefix}.itest.which`, 'not json', { timeout: 1_000 });
        expect(JSON.parse(bad.string())).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
      } finally {
        await bus.close();
      }
    });
  });

  it('answers 413 to a request over the server max_payload and 503 at once to a reply over it', async () => {
    const bus = await connectBus(nats.url, uniquePrefix());
    const big = 'x'.repeat(1_100_000);
    try {
      const echo = bind(Text, async ({ text }) => ({ text: text === 'big' ? big : text }));
      await bus.serve([echo], { queue: 'itest', log });
      expect((await rejection(bus.request(Text, { text: big }))).code).toBe('PAYLOAD_TOO_LARGE');
      const tooBig = await rejection(bus.request(Text, { text: 'big' }));
      expect(tooBig).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503, details: { subject: Text.subject } });
      expect((tooBig.details as { replyBytes: number }).replyBytes).toBeGreaterThan(1_100_000);
      expect(await bus.request(Text, { text: 'small' })).toEqual({ text: 'small' });
    } finally {
      await bus.close();
    }
  });

  it('rejects connect with 503 when no server listens', async () => {
    const dead = await startNatsServer();
    await dead.stop();
    const err = await rejection(NatsBus.connect({ servers: dead.url, log, connectTimeoutMs: 1_000 }));
    expect(err.code).toBe('SERVICE_UNAVAILABLE');
  });

  it('fails requests with 503/504 within the timeout when the server is killed mid-request (never hangs)', async () => {
    const own = await startNatsServer();
    const [client, server] = await Promise.all([connectBus(own.url, ''), connectBus(own.url, '')]);
    let entered = () => {};
    const inHandler = new Promise<void>((r) => (entered = r));
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    try {
      await server.serve([bind(Hang, async () => (entered(), await gate, null))], { queue: 'itest', log });
      const inflight = rejection(client.request(Hang, {}));
      await inHandler;
      await own.stop();
      expect([503, 504]).toContain((await inflight).status);
      expect([503, 504]).toContain((await rejection(client.request(Hang, {}))).status);
      expect((await rejection(client.ping())).code).toBe('SERVICE_UNAVAILABLE');
    } finally {
      release();
      await Promise.all([client.close(), server.close()]);
      await own.stop();
    }
  }, 15_000);
});
