import { createServer, type Server } from 'node:http';
import { sameSecret } from '../util/secrets.js';
import type { Metrics } from './metrics.js';

/**
 * How `GET /metrics` is answered on the public port (`PORT`) of the gateway (docs/observability.md
 * "Where metrics are served"): `off` (404) when `METRICS_PORT` moves the endpoint, or in production
 * (`NODE_ENV=production`) unless `METRICS_TOKEN` is set; `token` (a bearer token is required)
 * when `METRICS_TOKEN` is set; `open` otherwise (development).
 */
export type MetricsAccess = 'off' | 'open' | 'token';

/** The {@link MetricsAccess} of `/metrics` on the public port for a configuration. */
export function publicMetricsAccess(config: { NODE_ENV: string; METRICS_PORT?: number | undefined; METRICS_TOKEN?: string | undefined }): MetricsAccess {
  if (config.METRICS_PORT !== undefined) return 'off';
  if (config.METRICS_TOKEN !== undefined) return 'token';
  return config.NODE_ENV === 'production' ? 'off' : 'open';
}

/** True when an `Authorization` header carries `Bearer <token>` (compared in constant time: `sameSecret`). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer (.+)$/i.exec(header ?? '');
  return m !== null && sameSecret(m[1]!, token);
}

/** A listening metrics endpoint; `close` stops it. */
export interface MetricsServer {
  /** The port it listens on (the one asked for, or the one the OS gave for 0). */
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` (Prometheus text format) on `host:port` for a process (`METRICS_PORT`,
 * `METRICS_HOST`; docs/observability.md). With `token` (`METRICS_TOKEN`) a request without
 * `Authorization: Bearer <token>` is 401; without it the endpoint is open (bind it to an internal
 * interface). Every other path is 404, every other method 405. Rejects when the port cannot be bound.
 */
export async function serveMetrics(metrics: Metrics, opts: { port: number; host: string; token?: string | undefined }): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
      return;
    }
    if (opts.token !== undefined && !bearerMatches(req.headers.authorization, opts.token)) {
      res.writeHead(401, { 'www-authenticate': 'Bearer', 'content-type': 'text/plain' }).end('a bearer token (METRICS_TOKEN) is required\n');
      return;
    }
    metrics.text().then(
      (text) => res.writeHead(200, { 'content-type': metrics.contentType }).end(req.method === 'HEAD' ? undefined : text),
      () => res.writeHead(503, { 'content-type': 'text/plain' }).end('metrics unavailable\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : opts.port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
