import { Type } from '@sinclair/typebox';
import { AppError } from '@app/shared/errors';
import { bearerMatches, publicMetricsAccess } from '@app/shared/observability';
import { APP_NAME } from '../config.js';
import type { LocalRoute } from './local.js';

/** Upper bound of one readiness check in milliseconds: a probe answers, it never hangs. */
export const READY_CHECK_TIMEOUT_MS = 2_000;

/** Runs one readiness check: `'ok'`, or the catalogue code of its failure (`UPSTREAM_TIMEOUT` when too slow). */
async function check(ping: () => Promise<void>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const slow = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new AppError('UPSTREAM_TIMEOUT')), READY_CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([ping(), slow]);
    return 'ok';
  } catch (e) {
    return AppError.from(e).code;
  } finally {
    clearTimeout(timer);
  }
}

const Checks = Type.Object({ bus: Type.String(), store: Type.String() });

/** Health, readiness and version (docs/architecture.md §5: public). */
export const healthRoutes: LocalRoute[] = [
  {
    method: 'GET',
    url: '/health',
    summary: 'Liveness: the process answers',
    tag: 'health',
    response: Type.Object({ status: Type.Literal('ok') }),
    handle: async () => ({ status: 'ok' }),
  },
  {
    method: 'GET',
    url: '/health/ready',
    summary: 'Readiness: bus and store answer a ping; 503 (details.checks names the failing one) otherwise',
    tag: 'health',
    response: Type.Object({ status: Type.Literal('ready'), checks: Checks }),
    async handle(_req, { bus, store }) {
      const [busCheck, storeCheck] = await Promise.all([check(() => bus.ping()), check(() => store.ping())]);
      const checks = { bus: busCheck, store: storeCheck };
      if (busCheck === 'ok' && storeCheck === 'ok') return { status: 'ready', checks };
      throw new AppError(busCheck === 'ok' ? 'STORE_UNAVAILABLE' : 'SERVICE_UNAVAILABLE', {
        message: `Not ready: ${busCheck === 'ok' ? 'store' : 'bus'} unavailable`,
        details: { checks },
      });
    },
  },
  {
    method: 'GET',
    url: '/metrics',
    summary:
      'Prometheus metrics of this process (text format; docs/observability.md). 404 when metrics are off, served on METRICS_PORT, or in production without METRICS_TOKEN; 401 without the METRICS_TOKEN bearer token when one is set',
    tag: 'health',
    produces: ['text/plain'],
    headers: Type.Object({ authorization: Type.Optional(Type.String({ description: '`Bearer <METRICS_TOKEN>` when that token is set' })) }),
    response: Type.String({ description: 'Prometheus text exposition format 0.0.4' }),
    async stream(req, reply, { metrics, config }) {
      const access = publicMetricsAccess(config);
      if (!metrics || access === 'off') throw new AppError('NOT_FOUND', { message: 'Metrics are not served here' });
      if (access === 'token' && !bearerMatches(req.headers.authorization, config.METRICS_TOKEN!)) {
        throw new AppError('UNAUTHORIZED', { message: 'Metrics need the METRICS_TOKEN bearer token' });
      }
      const text = await metrics.text();
      await reply.header('content-type', metrics.contentType).send(text);
    },
  },
  {
    method: 'GET',
    url: '/version',
    summary: 'Product name and version',
    tag: 'health',
    response: Type.Object({ name: Type.String(), version: Type.String() }),
    handle: async (_req, { config }) => ({ name: APP_NAME, version: config.APP_VERSION }),
  },
];
