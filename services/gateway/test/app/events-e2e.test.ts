import type { AddressInfo } from 'node:net';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { SseClient } from './sse-client.js';
import { system, type System } from './system.js';
import { Receiver } from './webhook-receiver.js';

/*
 * The events end to end: real writes through HTTP (task create and PATCH, board create, card move)
 * arrive on the feed, on the stream and at a webhook, each only for who may read them.
 */

const COLUMNS = [
  { name: 'To Do', query: "status = 'todo'" },
  { name: 'Done', query: "status = 'done'" },
];

let sys: System | undefined;
let receiver: Receiver | undefined;
let client: SseClient | undefined;

afterEach(async () => {
  client?.close();
  await sys?.[Symbol.asyncDispose]();
  await receiver?.close();
  sys = undefined;
  receiver = undefined;
  client = undefined;
});

describe('writes through HTTP reach every event surface', () => {
  it('task and board writes and a card move arrive on the feed, the stream and a webhook', async () => {
    sys = await system({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' }, webhooks: { tickMs: 20 }, clockAt: new Date().toISOString() });
    await sys.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(sys.app.server.address() as AddressInfo).port}`;
    receiver = await Receiver.start();
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');

    const hook = await sys.call('POST', '/api/v1/webhooks', alice, { url: receiver.url, events: ['task.updated', 'card.moved'], query: "status = 'done'" });
    expect(hook.status).toBe(201);
    client = await SseClient.open(`${base}/api/v1/events/stream`, alice.headers);
    await client.until((c) => c.frames.some((f) => f.comment === 'connected'));

    const task = await sys.call('POST', '/api/v1/tasks', alice, { title: 'write the docs', status: 'todo' });
    expect(task.status).toBe(201);
    await sys.call('PATCH', `/api/v1/tasks/${task.body.id}`, alice, { title: 'write the events docs' });
    await sys.call('PATCH', `/api/v1/tasks/${task.body.id}`, alice, { status: 'done' });
    const board = await sys.call('POST', '/api/v1/boards', alice, { name: 'B', board_type: 'private', columns: COLUMNS });
    expect(board.status).toBe(201);
    const card = await sys.call('POST', `/api/v1/boards/${board.body.id}/tasks`, alice, { title: 'card', status: 'todo' });
    const move = await sys.call('POST', `/api/v1/boards/${board.body.id}/tasks/${card.body.id}/move`, alice, { from_column_id: 'col-to-do', to_column_id: 'col-done' });
    expect(move.status).toBe(200);

    const expected = ['task.created', 'task.updated', 'task.updated', 'board.created', 'task.created', 'card.moved'];
    const feed = await sys.call('GET', '/api/v1/events', alice);
    expect(feed.body.data.map((e: any) => e.type)).toEqual(expected);
    const moved = feed.body.data[5];
    expect(moved).toMatchObject({
      task_id: card.body.id, board_id: board.body.id, actor: alice.id,
      data: { board_id: board.body.id, from_column_id: 'col-to-do', to_column_id: 'col-done', task: { id: card.body.id, status: 'done' } },
    });
    expect(feed.body.data[2].data.changes).toEqual([{ field: 'status', from: 'todo', to: 'done' }]);

    await client.until((c) => c.events.length === expected.length);
    expect(client.events.map((f) => f.event)).toEqual(expected);
    expect(client.events.map((f) => f.data)).toEqual(feed.body.data);

    // The webhook wants task.updated and card.moved where the task after the change is done.
    // deliveries keep the events' order and the move is the last event: nothing can come after it
    await receiver.until(2);
    expect(receiver.received.map((r) => r.json.id)).toEqual([feed.body.data[2].id, moved.id]);
    const signed = new StandardWebhook(hook.body.secret);
    for (const r of receiver.received) expect(signed.verify(r.body, r.headers as Record<string, string>)).toEqual(r.json);

    // Bob can read none of it.
    expect((await sys.call('GET', '/api/v1/events', bob)).body.data).toEqual([]);
  });

  it('an atomic batch create arrives as one task.created per task, in order, and a rolled-back batch as none', async () => {
    sys = await system();
    const alice = await sys.user('alice');
    const ok = await sys.call('POST', '/api/v1/tasks/batch', alice, { atomic: true, tasks: [{ title: 'Plan' }, { title: 'Build' }, { title: 'Ship' }] });
    expect(ok.status).toBeLessThan(300);
    const feed = await sys.call('GET', '/api/v1/events', alice);
    expect(feed.body.data.map((e: any) => [e.type, e.data.task.title])).toEqual([['task.created', 'Plan'], ['task.created', 'Build'], ['task.created', 'Ship']]);
    const bad = await sys.call('POST', '/api/v1/tasks/batch', alice, { atomic: true, tasks: [{ title: 'Fine' }, { title: '' }] });
    expect(JSON.stringify(bad.body), 'the batch failed as a whole').toContain('BATCH_ITEM_NOT_APPLIED');
    const after = await sys.call('GET', `/api/v1/events?after=${feed.body.next_after}`, alice);
    expect(after.body).toEqual({ data: [], next_after: feed.body.next_after });
  });
});
