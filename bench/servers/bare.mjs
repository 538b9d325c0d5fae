// Baseline: a bare Fastify route returning the same JSON the task detail returns (BODY env).
import Fastify from 'fastify';
const body = process.env.BODY ?? '{}';
const app = Fastify({ logger: false });
app.get('/api/v1/tasks/:id', async (_req, reply) => reply.type('application/json').send(body));
await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`READY ${JSON.stringify({ port: app.server.address().port })}`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
