import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Where `npm run build` puts the web board: `<repo>/web/dist`. The same relative path
 * works from `services/gateway/src/plugins` (vitest) and `services/gateway/dist/plugins` (built).
 */
export const DEFAULT_WEB_ROOT = fileURLToPath(new URL('../../../../web/dist/', import.meta.url));

/**
 * Path prefixes the SPA fallback never answers: an unknown path below one of them is the
 * JSON 404 of the error catalogue, never the board's index.html.
 */
export const RESERVED_PREFIXES = ['/api', '/auth', '/health', '/docs', '/version', '/mcp', '/.well-known', '/metrics'] as const;

/** `Cache-Control` of Vite's content-hashed files under `/assets/`: a year, never revalidated. */
export const HASHED_CACHE = 'public, max-age=31536000, immutable';
/** `Cache-Control` of index.html and every other unhashed file: always revalidated. */
export const NO_CACHE = 'no-cache';

/**
 * The page's Content-Security-Policy: scripts only from the gateway itself (a card's markdown is
 * sanitized too, so two fences stand between a card and script execution, docs/web.md).
 */
export const WEB_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: https:; " +
  "connect-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'; form-action 'self'";

/** Answered at `/` and SPA paths when `web/dist` has no index.html (the gateway still starts). */
export const NOT_BUILT_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Web board not built</title></head>' +
  '<body><h1>The web board is not built</h1><p>Run <code>npm run build</code> (or <code>npm start</code>, which builds ' +
  'first) in the repository, then reload. The API is served as usual under <code>/api/v1</code>; its documentation is at ' +
  '<a href="/docs">/docs</a>.</p></body></html>';

/**
 * True when `url` (path only) is one of {@link RESERVED_PREFIXES} or below one, in any letter
 * case (`/METRICS`, `/.Well-Known/x` are API paths a client mistyped, never a page of the board).
 */
export function isReservedPath(path: string): boolean {
  const lower = path.toLowerCase();
  return RESERVED_PREFIXES.some((p) => lower === p || lower.startsWith(`${p}/`));
}

/**
 * Decides the SPA fallback for a request no route matched: true (and the reply is sent) when it is
 * a GET/HEAD of a client-side route: not reserved, and its last segment has no file extension (a
 * missing `/assets/x.js` stays a 404). Returns false to let the caller send the JSON 404.
 */
export type SpaFallback = (req: FastifyRequest, reply: FastifyReply) => boolean;

/**
 * Serves the built web board (docs/web.md) from `root` with `@fastify/static`:
 * every built file gets its own GET/HEAD route (`wildcard: false`, so no catch-all route exists to
 * shadow the API), hashed `/assets/*` files are cached for a year, everything else (index.html)
 * is `no-cache`; `/` and client-side routes answer index.html through the returned
 * {@link SpaFallback}, which the 404 handler consults. When `root` holds no index.html, `/` and
 * client-side routes answer {@link NOT_BUILT_PAGE} and the gateway runs as usual.
 */
export async function registerWeb(app: FastifyInstance, root: string = DEFAULT_WEB_ROOT): Promise<SpaFallback> {
  const indexPath = `${root.replace(/\/$/, '')}/index.html`;
  const built = existsSync(indexPath);
  const page = built ? readFileSync(indexPath) : Buffer.from(NOT_BUILT_PAGE);
  if (built) {
    await app.register(fastifyStatic, {
      root,
      prefix: '/',
      wildcard: false,
      index: false,
      decorateReply: false,
      cacheControl: false,
      // `x.js.br` / `x.js.gz` written next to each asset at build time (web/vite.config.ts) are sent
      // for `x.js` by Accept-Encoding; they get no route of their own
      preCompressed: true,
      globIgnore: ['**/*.br', '**/*.gz'],
      setHeaders(res, filePath) {
        res.header('cache-control', filePath.includes('/assets/') ? HASHED_CACHE : NO_CACHE);
        if (filePath.endsWith('.html')) res.header('content-security-policy', WEB_CSP);
      },
    });
  }
  const sendPage = (reply: FastifyReply) =>
    reply
      .code(200)
      .header('cache-control', NO_CACHE)
      .header('content-security-policy', WEB_CSP)
      .type('text/html; charset=utf-8')
      .send(page);
  app.get('/', { schema: { hide: true } }, (_req, reply) => sendPage(reply));
  return (req, reply) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const path = req.url.split('?')[0]!;
    if (isReservedPath(path)) return false;
    const last = path.slice(path.lastIndexOf('/') + 1);
    if (last.includes('.')) return false;
    void sendPage(reply);
    return true;
  };
}
