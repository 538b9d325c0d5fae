import { describe, expect, test } from 'vitest';
import { QueryOps, type In } from '@app/shared/contracts';
import { rejection } from '@app/shared/testing';
import { ALICE, aTask, BOB, CAROL, queryFixture, team, TEAM } from './fixtures.js';

const ask = (f: Awaited<ReturnType<typeof queryFixture>>, userId: string, input: In<typeof QueryOps.tasks> = {}) =>
  f.bus.request(QueryOps.tasks, input, { userId });

describe('POST /tasks/query: scope', () => {
  async function seeded() {
    const f = await queryFixture();
    const own = aTask({ title: 'alice own' });
    const bobs = aTask({ title: 'bob private', created_by: BOB });
    const shared = aTask({ title: 'carol in team', created_by: CAROL, groupId: TEAM, groupPermission: 'r' });
    const gone = aTask({ title: 'alice deleted', deleted: true, deleted_at: '2026-03-01T00:00:00.000Z' });
    await f.groups(team());
    await f.tasks(own, bobs, shared, gone);
    return { f, own, bobs, shared, gone };
  }

  test('a caller sees its own and its groups’ live tasks, never others’ or soft-deleted ones', async () => {
    const { f, own, bobs, shared } = await seeded();
    await using _ = f;
    const ids = async (user: string) => (await ask(f, user)).data.map((t) => t.id).sort();
    expect(await ids(ALICE)).toEqual([own._id, shared._id].sort());
    expect(await ids(BOB)).toEqual([bobs._id, shared._id].sort());
    expect(await ids(CAROL)).toEqual([shared._id]); // its own task, though not a member of the group
  });

  test('query text only narrows: an OR on another owner does not reach that owner’s tasks', async () => {
    const { f, own, bobs } = await seeded();
    await using _ = f;
    const res = await ask(f, ALICE, { query: `title = 'alice own' OR created_by = '${BOB}' OR title = 'bob private'` });
    expect(res.data.map((t) => t.id)).toEqual([own._id]);
    expect(res.total).toBe(1);
    expect(res.data.some((t) => t.id === bobs._id)).toBe(false);
  });

  test('a soft-deleted task stays hidden even when the query names it', async () => {
    const { f } = await seeded();
    await using _ = f;
    const res = await ask(f, ALICE, { query: "title = 'alice deleted'" });
    expect(res).toMatchObject({ data: [], total: 0, totalPages: 0 });
  });
});

test('a request without a caller is 401, never an unscoped read', async () => {
  await using f = await queryFixture();
  await f.tasks(aTask());
  const err = await rejection(f.bus.request(QueryOps.tasks, {}));
  expect(err.code).toBe('UNAUTHORIZED');
});

describe('POST /tasks/query: view', () => {
  test('lite leaves description absent; "" and full carry it', async () => {
    await using f = await queryFixture();
    await f.tasks(aTask({ description: '# plan' }));
    const [lite] = (await ask(f, ALICE, { view: 'lite' })).data;
    expect(lite).toBeDefined();
    expect(Object.hasOwn(lite!, 'description')).toBe(false);
    expect(lite!.title).toBe('a task');
    for (const view of ['', 'full'] as const) expect((await ask(f, ALICE, { view })).data[0]!.description).toBe('# plan');
    expect((await ask(f, ALICE)).data[0]!.description).toBe('# plan');
  });

  test('the task object carries API metadata keys and no internal fields', async () => {
    await using f = await queryFixture();
    await f.tasks(aTask({ metadata: { 'app.sprint': 's1', order: 2 }, groupId: TEAM, boardId: 'b1' }));
    const [t] = (await ask(f, ALICE)).data;
    expect(t!.metadata).toEqual({ 'app.sprint': 's1', order: 2 });
    for (const internal of ['deleted', 'groupId', 'boardId', '_id']) expect(Object.hasOwn(t!, internal)).toBe(false);
  });
});

describe('POST /tasks/query: pages and sorting', () => {
  test('pages never overlap or skip when every sort key is equal: ties go by id ascending', async () => {
    await using f = await queryFixture();
    const docs = Array.from({ length: 45 }, () => aTask({ title: 'same', status: 'todo' }));
    await f.tasks(...docs.reverse()); // stored order differs from id order
    const byId = docs.map((d) => d._id).sort();
    const variants: In<typeof QueryOps.tasks>[] = [
      {},
      { query: "status = 'todo' ORDER BY status ASC" },
      { query: 'ORDER BY created_at ASC, title DESC' },
      { sort: { column: 'title', direction: 'desc' } },
    ];
    for (const variant of variants) {
      const seen: string[] = [];
      for (let page = 1; page <= 5; page++) {
        const res = await ask(f, ALICE, { ...variant, page, pageSize: 10 });
        expect(res).toMatchObject({ total: 45, page, pageSize: 10, totalPages: 5 });
        expect(res.data).toHaveLength(page === 5 ? 5 : 10);
        seen.push(...res.data.map((t) => t.id));
      }
      expect(seen).toEqual(byId);
      expect((await ask(f, ALICE, { ...variant, page: 6, pageSize: 10 })).data).toEqual([]);
    }
  });

  test('defaults: page 1, pageSize 20, newest first', async () => {
    await using f = await queryFixture();
    const old = aTask({ title: 'old', created_at: '2026-01-01T00:00:00.000Z' });
    const young = aTask({ title: 'young', created_at: '2026-03-01T00:00:00.000Z' });
    await f.tasks(old, young, ...Array.from({ length: 25 }, () => aTask({ created_at: '2026-02-01T00:00:00.000Z' })));
    const res = await ask(f, ALICE);
    expect(res).toMatchObject({ total: 27, page: 1, pageSize: 20, totalPages: 2 });
    expect(res.data[0]!.title).toBe('young');
    expect((await ask(f, ALICE, { page: 2 })).data.at(-1)!.title).toBe('old');
  });

  test('ORDER BY in the query orders the result; sort overrides it', async () => {
    await using f = await queryFixture();
    await f.tasks(...['b', 'a', 'c'].map((title) => aTask({ title, metadata: { 'cf.rank': title.charCodeAt(0) } })));
    const titles = async (input: In<typeof QueryOps.tasks>) => (await ask(f, ALICE, input)).data.map((t) => t.title);
    expect(await titles({ query: 'ORDER BY title ASC' })).toEqual(['a', 'b', 'c']);
    expect(await titles({ query: 'ORDER BY title ASC', sort: { column: 'title', direction: 'desc' } })).toEqual(['c', 'b', 'a']);
    expect(await titles({ sort: { column: 'cf.rank', direction: 'asc' } })).toEqual(['a', 'b', 'c']);
    expect(await titles({ sort: { column: 'metadata.cf.rank', direction: 'desc' } })).toEqual(['c', 'b', 'a']);
  });

  test('a sort column that is no field is a 400 naming sort.column', async () => {
    await using f = await queryFixture();
    const err = await rejection(ask(f, ALICE, { sort: { column: 'titel', direction: 'asc' } }));
    expect(err.code).toBe('VALIDATION_FAILED');
    expect(err.validationErrors?.[0]?.field).toBe('/sort/column');
    expect(err.message).toBe('sort/column: unknown column "titel"; did you mean "title"?');
  });

  test.each([
    [{ pageSize: 0 }, '/pageSize'],
    [{ pageSize: 201 }, '/pageSize'],
    [{ page: 0 }, '/page'],
    [{ view: 'compact' }, '/view'],
    [{ sort: { column: 'title', direction: 'up' } }, '/sort/direction'],
  ])('%j is a 400 naming %s, never clamped', async (input, field) => {
    await using f = await queryFixture();
    const err = await rejection(ask(f, ALICE, input as In<typeof QueryOps.tasks>));
    expect(err.code).toBe('VALIDATION_FAILED');
    expect(err.validationErrors?.map((v) => v.field)).toContain(field);
  });

  test('pageSize 200 is accepted', async () => {
    await using f = await queryFixture();
    expect((await ask(f, ALICE, { pageSize: 200 })).pageSize).toBe(200);
  });
});

describe('POST /tasks/query: query errors', () => {
  test('a syntax error is a 400 with the 0-based position of the fault', async () => {
    await using f = await queryFixture();
    const query = "status = 'todo' AND AND title ~ 'x'";
    const err = await rejection(ask(f, ALICE, { query }));
    expect(err.code).toBe('QUERY_SYNTAX');
    expect(err.status).toBe(400);
    expect(err.details?.position).toBe(query.indexOf('AND AND') + 4);
  });

  test('an unknown field is a 400 naming it and suggesting the closest', async () => {
    await using f = await queryFixture();
    const err = await rejection(ask(f, ALICE, { query: "staus = 'todo'" }));
    expect(err).toMatchObject({ code: 'QUERY_UNKNOWN_FIELD', details: { field: 'staus', position: 0, suggestion: 'status' } });
  });

  test('the query language filters tags, metadata and text', async () => {
    await using f = await queryFixture();
    const hit = aTask({ title: 'Fix Login page', tags: ['q4', 'web'], metadata: { 'cf.priority': 'high' } });
    await f.tasks(hit, aTask({ title: 'login copy', tags: ['q3'] }), aTask({ title: 'other', tags: ['q4'], metadata: { 'cf.priority': 'high' } }));
    const res = await ask(f, ALICE, { query: `'q4' IN tags AND cf.priority = 'high' AND title ~ "LOGIN"` });
    expect(res.data.map((t) => t.id)).toEqual([hit._id]);
  });
});

describe('POST /tasks/query: the encoded answer', () => {
  test('is the text JSON.stringify gives for the page object, in both views and for an empty page', async () => {
    await using f = await queryFixture();
    await f.tasks(aTask({ title: 'one', metadata: { 'cf%2Epriority': 2, order: 1 } }), aTask({ title: 'two "quoted" \u00e9', tags: ['a', 'b'] }), aTask({ title: 'three' }));
    for (const input of [{}, { view: 'lite' as const }, { pageSize: 2, page: 2 }, { query: "title = 'none'" }]) {
      const text = await f.bus.requestText(QueryOps.tasks, input, { userId: ALICE });
      const parsed = JSON.parse(text) as Record<string, unknown>;
      expect(text).toBe(JSON.stringify(parsed));
      expect(Object.keys(parsed)).toEqual(['data', 'total', 'page', 'pageSize', 'totalPages']);
    }
  });

  test('a task changed after a query is answered as it is now, not as first encoded', async () => {
    await using f = await queryFixture();
    const t = aTask({ title: 'before' });
    await f.tasks(t);
    expect((await ask(f, ALICE)).data[0]?.title).toBe('before');
    await f.store.collection('tasks').updateOne({ _id: t._id }, { $set: { title: 'after', 'metadata.x': 1 } });
    const [now] = (await ask(f, ALICE)).data;
    expect(now).toMatchObject({ title: 'after', metadata: { x: 1 } });
  });
});
