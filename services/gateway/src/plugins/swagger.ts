import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { ErrorBodySchema } from '../http/error-mapping.js';
import { swagger2Transform, toSwagger2Document } from '../http/swagger2.js';
import { BEARER } from '../routes/register.js';

/** Where the Swagger 2.0 document is served (docs/architecture.md §9); the UI lives at `/docs`. */
export const SWAGGER_PATH = '/api/v1/swagger.json';

/**
 * Registers @fastify/swagger in Swagger 2.0 mode (with the compat transform) and the UI. Must run
 * before any route is added: the plugin collects routes as they are registered.
 */
export async function registerSwagger(app: FastifyInstance, info: { title: string; version: string }): Promise<void> {
  app.addSchema(ErrorBodySchema);
  await app.register(fastifySwagger, {
    swagger: {
      info: { ...info, description: 'Boards, columns, cards (tasks), sprints and the task query gates. Paths under /api/v1 need a bearer JWT from POST /auth/v2/login or a personal access token (bts_…, POST /api/v1/tokens).' },
      consumes: ['application/json'],
      produces: ['application/json'],
      securityDefinitions: {
        [BEARER]: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Bearer <JWT or personal access token bts_…>' },
      },
    },
    transform: swagger2Transform,
    transformObject: (docs) => toSwagger2Document('swaggerObject' in docs ? (docs.swaggerObject as Record<string, unknown>) : {}),
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });
  app.get(SWAGGER_PATH, { schema: { hide: true } }, async () => app.swagger());
}
