import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Api, type SessionStore } from '../src/api/client.js';
import { openEventStream, pollInterval, POLL_MS, type BoardEvent } from '../src/board/live.js';

/** An in-memory SessionStore holding a fresh session, so the client sends a bearer token. */
function memoryStore(): SessionStore {
  const m = new Map<string, string>();
  m.set('board.session', JSON.stringify({ accessToken: 'tok-1', refreshToken: 'r', expiresAt: Date.now() + 3_600_000, userId: 'u', userName: 'ada' }));
  return { getItem: (k) => m.get(k) ?? null, setItem: (k, v) => void m.set(k, v), removeItem: (k) => void m.delete(k) };
}

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = undefined;
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Api> {
  server = createServer(handler);
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return new Api(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, memoryStore());
}

describe('live updates: the event stream client', () => {
  it('reads SSE frames with the bearer token and Last-Event-ID, and ends when the server closes', async () => {
    const seen: Array<{ auth?: string; last?: string; url?: string }> = [];
    const api = await serve((req, res) => {
      seen.push({ auth: req.headers.authorization, last: req.headers['last-event-id'] as string, url: req.url });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': heartbeat\n\n');
      res.write(`id: 7\nevent: card.moved\ndata: ${JSON.stringify({ id: 'e7', seq: 7, type: 'card.moved', board_id: 'b1', task_id: 't1' })}\n\n`);
      // A frame split across two writes is still one event.
      res.write(`id: 8\nevent: task.updated\ndata: {"id":"e8","seq":8,"type":"task.upd`);
      setTimeout(() => res.end(`ated","task_id":"t2"}\n\n`), 20);
    });
    const events: Array<[BoardEvent, string | undefined]> = [];
    let opened = 0;
    const outcome = await openEventStream(api, {
      boardId: 'b1',
      lastEventId: '6',
      signal: new AbortController().signal,
      onOpen: () => opened++,
      onEvent: (e, id) => events.push([e, id]),
    });
    expect(outcome).toBe('ended');
    expect(opened).toBe(1);
    expect(seen).toEqual([{ auth: 'Bearer tok-1', last: '6', url: '/api/v1/events/stream?board_id=b1' }]);
    expect(events.map(([e, id]) => [e.type, e.board_id, e.task_id, id])).toEqual([
      ['card.moved', 'b1', 't1', '7'],
      ['task.updated', undefined, 't2', '8'],
    ]);
  });

  it("reports 'absent' when the gateway has no stream (404 JSON), so the page keeps polling", async () => {
    const api = await serve((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: 'NOT_FOUND', message: 'No route GET /api/v1/events/stream' }));
    });
    const outcome = await openEventStream(api, { boardId: 'b1', signal: new AbortController().signal, onOpen: () => {}, onEvent: () => {} });
    expect(outcome).toBe('absent');
  });

  it("reports 'failed' for a server error or no server at all", async () => {
    const api = await serve((_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{"code":"SERVICE_UNAVAILABLE","message":"down"}');
    });
    expect(await openEventStream(api, { boardId: 'b', signal: new AbortController().signal, onOpen: () => {}, onEvent: () => {} })).toBe('failed');
    const nowhere = new Api('http://127.0.0.1:9', memoryStore());
    expect(await openEventStream(nowhere, { boardId: 'b', signal: new AbortController().signal, onOpen: () => {}, onEvent: () => {} })).toBe('failed');
  });

  it('polls every 5 s unless localStorage board.pollMs holds another period of at least 1 s', () => {
    expect(pollInterval()).toBe(POLL_MS); // no localStorage at all (Node)
    const store = memoryStore();
    vi.stubGlobal('localStorage', store);
    try {
      expect(pollInterval()).toBe(5_000);
      store.setItem('board.pollMs', '60000');
      expect(pollInterval()).toBe(60_000);
      store.setItem('board.pollMs', '10');
      expect(pollInterval()).toBe(5_000);
      store.setItem('board.pollMs', 'soon');
      expect(pollInterval()).toBe(5_000);
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
