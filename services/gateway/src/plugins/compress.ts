import { constants } from 'node:zlib';
import fastifyCompress from '@fastify/compress';
import type { FastifyInstance } from 'fastify';

/**
 * Answers smaller than this many bytes are sent as they are: a card, a move result or an error
 * body costs more to compress than it saves on the wire (docs/http.md "Compression").
 */
export const COMPRESS_THRESHOLD_BYTES = 2048;

/**
 * Brotli quality for answers compressed on the fly (0–11). 4 is the plugin's own recommendation:
 * about gzip's CPU cost for a smaller result; 11 is only worth it ahead of time (the web bundle is
 * pre-compressed at build time with the maximum, web/vite.config.ts).
 */
export const BROTLI_QUALITY = 4;

/**
 * Compresses answers by the request's `Accept-Encoding` with `@fastify/compress`: brotli, then
 * gzip (the first the client accepts in that order of preference), for JSON and text answers of
 * at least {@link COMPRESS_THRESHOLD_BYTES}. The event stream and the MCP stream write to the raw
 * socket (`reply.hijack()`), so they are never buffered by it; `text/event-stream` is excluded
 * by the plugin too. An answer that already carries `Content-Encoding` (a pre-compressed file of
 * the web board served by `@fastify/static`) is left alone. Registered before any route, since the
 * plugin attaches itself to each route as it is declared.
 */
export async function registerCompression(app: FastifyInstance): Promise<void> {
  await app.register(fastifyCompress, {
    global: true,
    encodings: ['br', 'gzip'],
    threshold: COMPRESS_THRESHOLD_BYTES,
    brotliOptions: { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } },
    zlibOptions: { level: 6 },
  });
}
