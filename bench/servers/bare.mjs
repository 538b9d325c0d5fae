// Baseline: a bare Fastify process answering the task routes with canned JSON (no auth, no bus,
// no store). BODY = the task detail JSON (GET), CREATED = a created task JSON (POST, 201).
import Fastify from 'fastify';

const detail = process.env.BODY ?? '{}';
const created = process.env.CREATED ?? detail;
const app = Fastify({ logger: false });
app.get('/api/v1/tasks/:id', async (_req, reply) => reply.type('application/json').send(detail));
app.post('/api/v1/tasks', async (_req, reply) => reply.code(201).type('application/json').send(created));
await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`READY ${JSON.stringify({ port: app.server.address().port })}`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
