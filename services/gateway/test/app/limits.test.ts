import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, system, type Answer, type System, type User } from './system.js';

/**
 * Input limits through HTTP (docs/http.md "Limits"): a body nested thousands of levels
 * deep is a 400 naming the field, never a 500; metadata values are capped in depth (32) and size
 * (64 KiB) on every route that takes them; nothing refused is written.
 */

let sys: System;
let alice: User;

beforeAll(async () => {
  sys = await system();
  alice = await sys.user('alice');
});
afterAll(async () => {
  await sys?.[Symbol.asyncDispose]();
});

/** Sends raw JSON text (a value too deep for the test's own JSON.stringify is never built). */
async function raw(method: 'POST' | 'PATCH' | 'PUT', url: string, text: string): Promise<Answer> {
  const res = await sys.app.inject({ method, url, headers: { ...alice.headers, 'content-type': 'application/json' }, payload: text });
  return { status: res.statusCode, headers: res.headers, body: res.body === '' ? undefined : res.json() };
}

/** `{"a":{"a":…1…}}` with `levels` objects, as JSON text. */
const nestedText = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
/** The same as a value (only for depths JSON.stringify handles). */
const nested = (levels: number): unknown => JSON.parse(nestedText(levels));

/** Asserts a 400 `VALIDATION_FAILED` naming exactly `field` first; returns the body. */
function expectField(res: Answer, field: string): any {
  const body = expectError(res, 400, 'VALIDATION_FAILED');
  expect(body.validationErrors[0].field).toBe(field);
  expect(body.message).toContain(field.slice(1));
  return body;
}

async function taskCount(): Promise<number> {
  return (await sys.call('POST', '/api/v1/tasks/query', alice, {})).body.total;
}

/** The boards alice owns (the system is shared by the file's tests: compare counts, never assume none). */
async function boardCount(): Promise<number> {
  return (await sys.call('GET', '/api/v1/boards', alice)).body.owned_boards.length;
}

describe('body depth', () => {
  it('a body nested 5,000 levels deep is a 400 naming the field, not a 500; nothing is written', async () => {
    const before = await taskCount();
    const res = await raw('POST', '/api/v1/tasks', `{"title":"x","metadata":${nestedText(5000)}}`);
    const body = expectField(res, '/metadata/a');
    expect(body.message).toMatch(/deeper than 64 levels/);
    expect(await taskCount()).toBe(before);
  });

  it('applies to every JSON body, even to fields the schema would strip', async () => {
    expectField(await raw('POST', '/api/v1/boards', `{"name":"b","board_type":"private","junk":[${nestedText(100)}]}`), '/junk/0');
    expectField(await raw('POST', '/api/v1/tasks/query', `{"query":"","sort":${nestedText(70)}}`), '/sort/a');
  });
});

describe('metadata limits', () => {
  it('a metadata value nests at most 32 levels, on task create, task PATCH and the metadata PATCH', async () => {
    const ok = await sys.call('POST', '/api/v1/tasks', alice, { title: 'deep enough', metadata: { 'cf.tree': nested(32) } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    const before = await taskCount();
    expect(expectField(await sys.call('POST', '/api/v1/tasks', alice, { title: 'too deep', metadata: { 'cf.tree': nested(33) } }), '/metadata/cf.tree').message)
      .toMatch(/deeper than 32 levels/);
    expect(await taskCount()).toBe(before);

    expectField(await sys.call('PATCH', `/api/v1/tasks/${ok.body.id}`, alice, { metadata: { 'a/b': nested(33) } }), '/metadata/a~1b');
    expectField(await sys.call('PATCH', `/api/v1/tasks/${ok.body.id}/metadata`, alice, { key: 'cf.tree', value: nested(33) }), '/value');
    const unchanged = await sys.call('GET', `/api/v1/tasks/${ok.body.id}`, alice);
    expect(unchanged.body.metadata).toEqual({ 'cf.tree': nested(32) });
  });

  it('a metadata value is at most 64 KiB of JSON', async () => {
    const fits = 'x'.repeat(64 * 1024 - 2); // the quotes make it exactly 65,536 bytes
    const ok = await sys.call('POST', '/api/v1/tasks', alice, { title: 'big', metadata: { blob: fits } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    const body = expectField(await sys.call('PATCH', `/api/v1/tasks/${ok.body.id}/metadata`, alice, { key: 'blob', value: `${fits}é` }), '/value');
    expect(body.message).toMatch(/65538 bytes/);
  });

  it('board metadata and column action values have the same limits', async () => {
    const before = await boardCount();
    expectField(await sys.call('POST', '/api/v1/boards', alice, { name: 'b', board_type: 'private', metadata: { ui: nested(33) } }), '/metadata/ui');
    const columns = [{ name: 'A', query: '', actions: [{ trigger: 'enter', field: 'cf.x', operation: 'set', value: nested(33) }] }];
    expectField(await sys.call('POST', '/api/v1/boards', alice, { name: 'b', board_type: 'private', columns }), '/columns/0/actions/0/value');
    expect(await boardCount()).toBe(before);
  });
});

describe('metadata keys MongoDB cannot store', () => {
  const NUL = '\u0000';

  it('a NUL byte in a metadata key is a 400 naming the key on task create, PATCH, metadata PATCH and board card create; nothing is written', async () => {
    const before = await taskCount();
    expectField(await sys.call('POST', '/api/v1/tasks', alice, { title: 'x', metadata: { [`cf.a${NUL}b`]: 1 } }), `/metadata/cf.a${NUL}b`);
    const board = (await sys.call('POST', '/api/v1/boards', alice, { name: 'keys', board_type: 'private' })).body;
    expectField(await sys.call('POST', `/api/v1/boards/${board.id}/tasks`, alice, { title: 'card', metadata: { [`k${NUL}`]: 1 } }), `/metadata/k${NUL}`);
    expect(await taskCount()).toBe(before);

    const task = (await sys.call('POST', '/api/v1/tasks', alice, { title: 'kept', metadata: { ok: 1 } })).body;
    expectField(await sys.call('PATCH', `/api/v1/tasks/${task.id}`, alice, { metadata: { [`${NUL}`]: 1 } }), `/metadata/${NUL}`);
    expectField(await sys.call('PATCH', `/api/v1/tasks/${task.id}/metadata`, alice, { key: `a${NUL}`, value: 1 }), '/key');
    expect((await sys.call('GET', `/api/v1/tasks/${task.id}`, alice)).body).toMatchObject({ metadata: { ok: 1 }, version: 1 });
  });

  it('a field name with a NUL byte inside a metadata value is a 400 naming the metadata entry', async () => {
    expectField(await sys.call('POST', '/api/v1/tasks', alice, { title: 'x', metadata: { 'cf.tree': { a: [{ [`b${NUL}`]: 1 }] } } }), '/metadata/cf.tree');
    const task = (await sys.call('POST', '/api/v1/tasks', alice, { title: 'values' })).body;
    expectField(await sys.call('PATCH', `/api/v1/tasks/${task.id}/metadata`, alice, { key: 'cf.x', value: { [`n${NUL}`]: 1 } }), '/value');
    // a leading $ or a dot in the key is fine (keys are escaped for storage), and so is a $-prefixed name inside a value
    const ok = await sys.call('PATCH', `/api/v1/tasks/${task.id}/metadata`, alice, { key: '$cf.x', value: { $plain: 1 } });
    expect(ok.status).toBe(200);
    expect(ok.body.metadata).toEqual({ '$cf.x': { $plain: 1 } });
  });

  it('a batch answers the item with the bad key 400 naming it, and writes the others', async () => {
    const res = await sys.call('POST', '/api/v1/tasks/batch', alice, { tasks: [{ title: 'good' }, { title: 'bad', metadata: { [`x${NUL}`]: true } }] });
    expect(res.status).toBe(200);
    expect(res.body.results[0].task).toMatchObject({ title: 'good' });
    expect(res.body.results[1].error).toMatchObject({ code: 'VALIDATION_FAILED', validationErrors: [{ field: `/metadata/x${NUL}` }] });
  });

  it('board metadata and metadata column actions are checked the same way', async () => {
    const before = await boardCount();
    expectField(await sys.call('POST', '/api/v1/boards', alice, { name: 'b', board_type: 'private', metadata: { [`ui${NUL}`]: 1 } }), `/metadata/ui${NUL}`);
    const columns = [{ name: 'A', query: '', actions: [{ trigger: 'enter', field: `cf.x${NUL}`, operation: 'set', value: 1 }] }];
    expectField(await sys.call('POST', '/api/v1/boards', alice, { name: 'b', board_type: 'private', columns }), '/columns/0/actions/0/field');
    const valued = [{ name: 'A', query: '', actions: [{ trigger: 'enter', field: 'cf.x', operation: 'set', value: { [`a${NUL}`]: 1 } }] }];
    expectField(await sys.call('POST', '/api/v1/boards', alice, { name: 'b', board_type: 'private', columns: valued }), '/columns/0/actions/0/value');
    expect(await boardCount()).toBe(before);
  });
});

describe('field and task sizes (every event fits what the stream and the bus carry)', () => {
  it('status has at most 64 characters: 1,000,000 is a 400 naming /status on create, PATCH and a column action', async () => {
    const before = await taskCount();
    expectField(await sys.call('POST', '/api/v1/tasks', alice, { title: 'x', status: 's'.repeat(1_000_000) }), '/status');
    expectField(await sys.call('POST', '/api/v1/tasks', alice, { title: 'x', status: 's'.repeat(65) }), '/status');
    expect(await taskCount()).toBe(before);
    const ok = await sys.call('POST', '/api/v1/tasks', alice, { title: 'x', status: 's'.repeat(64) });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expectField(await sys.call('PATCH', `/api/v1/tasks/${ok.body.id}`, alice, { status: 's'.repeat(65) }), '/status');
    const columns = [{ name: 'A', query: '', actions: [{ trigger: 'enter', field: 'status', operation: 'set', value: 's'.repeat(65) }] }];
    expectField(await sys.call('POST', '/api/v1/boards', alice, { name: 'b', board_type: 'private', columns }), '/columns/0/actions/0/value');
  });

  it('a metadata key has at most 256 characters: a 1 MB key is a 400 naming it on create, PATCH and the metadata PATCH', async () => {
    const before = await taskCount();
    const huge = 'k'.repeat(1_000_000);
    const res = await sys.call('POST', '/api/v1/tasks', alice, { title: 'x', metadata: { [huge]: 1 } });
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(400);
    expect(res.body.validationErrors[0].field).toBe(`/metadata/${huge}`);
    expect(await taskCount()).toBe(before);
    const ok = await sys.call('POST', '/api/v1/tasks', alice, { title: 'x', metadata: { ['k'.repeat(256)]: 1 } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expectField(await sys.call('PATCH', `/api/v1/tasks/${ok.body.id}`, alice, { metadata: { ['k'.repeat(257)]: 1 } }), `/metadata/${'k'.repeat(257)}`);
    expectField(await sys.call('PATCH', `/api/v1/tasks/${ok.body.id}/metadata`, alice, { key: 'k'.repeat(257), value: 1 }), '/key');
    expect((await sys.call('GET', `/api/v1/tasks/${ok.body.id}`, alice)).body.version).toBe(1);
  });

  it('a description of 100,000 U+0002 characters (600 KB of JSON) on a board card is a 413 naming /description; nothing is written', async () => {
    const board = (await sys.call('POST', '/api/v1/boards', alice, { name: 'sizes', board_type: 'private' })).body;
    const card = (await sys.call('POST', `/api/v1/boards/${board.id}/tasks`, alice, { title: 'card' })).body;
    const res = await sys.call('PATCH', `/api/v1/tasks/${card.id}`, alice, { description: '\u0002'.repeat(100_000) });
    const body = expectError(res, 413, 'PAYLOAD_TOO_LARGE');
    expect(body.details).toMatchObject({ field: '/description', max_bytes: 256 * 1024 });
    expect(body.message).toMatch(/^description: /);
    const after = (await sys.call('GET', `/api/v1/tasks/${card.id}`, alice)).body;
    expect(after.version).toBe(1);
    expect(after.description ?? '').toBe('');
    // the longest description of plain text still fits
    const long = await sys.call('PATCH', `/api/v1/tasks/${card.id}`, alice, { description: 'd'.repeat(200_000) });
    expect(long.status).toBe(200);
  });

  it('a task grown past 256 KiB by metadata writes is a 413 naming /metadata; the task keeps its last accepted state', async () => {
    const task = (await sys.call('POST', '/api/v1/tasks', alice, { title: 'grows' })).body;
    const value = 'v'.repeat(60_000);
    let last = 0;
    for (let i = 0; i < 4; i++) {
      const ok = await sys.call('PATCH', `/api/v1/tasks/${task.id}/metadata`, alice, { key: `cf.k${i}`, value });
      expect(ok.status).toBe(200);
      last = ok.body.version;
    }
    const body = expectError(await sys.call('PATCH', `/api/v1/tasks/${task.id}`, alice, { metadata: { 'cf.k4': value } }), 413, 'PAYLOAD_TOO_LARGE');
    expect(body.details.field).toBe('/metadata');
    const now = (await sys.call('GET', `/api/v1/tasks/${task.id}`, alice)).body;
    expect(now.version).toBe(last);
    expect(Object.keys(now.metadata)).toEqual(['cf.k0', 'cf.k1', 'cf.k2', 'cf.k3']);
  });

  it('a write whose event would pass 960 KiB (a board with 15 metadata values of 64 KiB) is a 413 naming the event; nothing is written', async () => {
    const metadata = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`ui.${i}`, 'x'.repeat(64 * 1024 - 2)]));
    const before = await boardCount();
    const body = expectError(await sys.call('POST', '/api/v1/boards', alice, { name: 'heavy', board_type: 'private', metadata }), 413, 'PAYLOAD_TOO_LARGE');
    expect(body.details).toMatchObject({ event_type: 'board.created', max_bytes: 960 * 1024 });
    expect(await boardCount()).toBe(before);
  });
});
