import { constants } from 'node:zlib';
import fastifyCompress from '@fastify/compress';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';

/**
 * Answers smaller than this many bytes are sent as they are: a card, a move result or an error
 * body costs more to compress than it saves on the wire (docs/http.md "Compression").
 */
export const COMPRESS_THRESHOLD_BYTES = 2048;

/**
 * Brotli quality for answers compressed on the fly (0–11). 1, not the plugin's default of 4: on
 * the board's JSON, quality 1 costs a fifth to a half of quality 4's CPU (a 48 KB answer: about
 * 0.34 ms against 0.59 ms; 815 KB: 1.7 ms against 7.9 ms) for answers still 30–50× smaller than
 * the JSON (docs/bench.md "Compression"). 11 is only worth it ahead of time: the web bundle is
 * pre-compressed at build time with it (web/vite.config.ts).
 */
export const BROTLI_QUALITY = 1;
/** gzip level for clients that do not accept brotli: 1, the cheapest, for the same reason. */
export const GZIP_LEVEL = 1;

/**
 * True when `payload` is a text or bytes of fewer than {@link COMPRESS_THRESHOLD_BYTES} bytes,
 * without encoding a text to count them when its length decides (a UTF-16 unit is 1–3 UTF-8 bytes).
 */
export function belowThreshold(payload: unknown): boolean {
  if (typeof payload === 'string') {
    const n = payload.length;
    return n < COMPRESS_THRESHOLD_BYTES && (n * 3 < COMPRESS_THRESHOLD_BYTES || Buffer.byteLength(payload) < COMPRESS_THRESHOLD_BYTES);
  }
  return payload instanceof Uint8Array && payload.length < COMPRESS_THRESHOLD_BYTES;
}

type OnSend = (this: unknown, req: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void) => void;

/**
 * Compresses answers by the request's `Accept-Encoding` with `@fastify/compress`: brotli, then
 * gzip (the first the client accepts in that order of preference), at the cheapest levels
 * ({@link BROTLI_QUALITY}, {@link GZIP_LEVEL}), for JSON and text answers of at least
 * {@link COMPRESS_THRESHOLD_BYTES}. The event stream and the MCP stream write to the raw
 * socket (`reply.hijack()`), so they are never buffered by it; `text/event-stream` is excluded
 * by the plugin too. An answer that already carries `Content-Encoding` (a pre-compressed file of
 * the web board served by `@fastify/static`) is left alone. Registered before any route, since the
 * plugin attaches itself to each route as it is declared.
 *
 * Most answers (a card, a detail, an error) are below the threshold, where the plugin sends them
 * as they are after reading the request's and the reply's headers: each route's `onSend` hook of
 * the plugin is wrapped so that an empty answer or one below the threshold passes at once (what
 * the plugin does with it too), and only a larger one or a stream reaches the plugin. The
 * plugin's `onRequest` hook, which only sets `reply.compress` (the plugin's way for a handler to
 * compress what it sends itself; no handler here uses it: answers are compressed by the `onSend`
 * hook), is left off the routes, and so is its request decompression on GET and HEAD routes,
 * whose requests Fastify reads no body of.
 */
export async function registerCompression(app: FastifyInstance): Promise<void> {
  // the route's own hooks before the plugin's `onRoute` hook adds its own
  const before = new WeakMap<object, { onRequest: readonly unknown[]; onSend: readonly unknown[] }>();
  const hooksOf = (route: RouteOptions, name: 'onRequest' | 'onSend'): unknown[] => {
    const h = route[name];
    return h === undefined ? [] : Array.isArray(h) ? h : [h];
  };
  app.addHook('onRoute', (route) => {
    before.set(route, { onRequest: [...hooksOf(route, 'onRequest')], onSend: [...hooksOf(route, 'onSend')] });
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (route.decompress === undefined && methods.every((m) => m === 'GET' || m === 'HEAD')) route.decompress = false;
  });
  await app.register(fastifyCompress, {
    global: true,
    encodings: ['br', 'gzip'],
    threshold: COMPRESS_THRESHOLD_BYTES,
    brotliOptions: { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } },
    zlibOptions: { level: GZIP_LEVEL },
  });
  app.addHook('onRoute', (route) => {
    const had = before.get(route);
    if (!had) return;
    const onRequest = hooksOf(route, 'onRequest');
    if (onRequest.length > had.onRequest.length) route.onRequest = onRequest.filter((h) => had.onRequest.includes(h)) as RouteOptions['onRequest'];
    const onSend = hooksOf(route, 'onSend');
    if (onSend.length === had.onSend.length) return;
    route.onSend = onSend.map((h) => {
      if (had.onSend.includes(h)) return h;
      const plugin = h as OnSend;
      const smallFirst: OnSend = function (req, reply, payload, done) {
        if (payload === null || payload === undefined || belowThreshold(payload)) return done(null, payload);
        plugin.call(this, req, reply, payload, done);
      };
      return smallFirst;
    }) as RouteOptions['onSend'];
  });
}
