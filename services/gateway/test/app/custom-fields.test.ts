import { describe, expect, it } from 'vitest';
import { expectError, system, type User } from './system.js';

/**
 * Custom fields through HTTP (docs/custom-fields.md): definitions, the value check on every task
 * write, type-aware queries and sorts, per-type operators, type changes and deletes.
 */

const PRIORITY = {
  key: 'cf.priority', name: 'Priority', type: 'select',
  options: [
    { id: 'p0', label: 'P0', color: '#d73a4a' }, { id: 'p1', label: 'P1', color: '#e99695' },
    { id: 'p2', label: 'P2', color: '#fbca04' }, { id: 'p3', label: 'P3' },
  ],
};

async function fixture() {
  const sys = await system();
  const alice = await sys.user('alice');
  const define = async (as: User, body: Record<string, unknown>) => {
    const res = await sys.call('POST', '/api/v1/custom-fields', as, body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; version: number };
  };
  const task = async (as: User, metadata: Record<string, unknown>, title = 'task') => {
    const res = await sys.call('POST', '/api/v1/tasks', as, { title, metadata });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; metadata: Record<string, unknown> };
  };
  const query = async (as: User, q: string) => {
    const res = await sys.call('POST', '/api/v1/tasks/query', as, { query: q, pageSize: 200 });
    return res;
  };
  const titles = async (as: User, q: string) => {
    const res = await query(as, q);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body.data as Array<{ title: string }>).map((t) => t.title);
  };
  const count = async (as: User) => (await sys.call('POST', '/api/v1/tasks/query', as, { query: '' })).body.total as number;
  return { sys, alice, define, task, query, titles, count, [Symbol.asyncDispose]: () => sys[Symbol.asyncDispose]() };
}

describe('custom field definitions', () => {
  it('are created, listed, read, renamed and deleted by their owner; keys are unique per owner', async () => {
    await using f = await fixture();
    const created = await f.sys.call('POST', '/api/v1/custom-fields', f.alice, PRIORITY);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ key: 'cf.priority', name: 'Priority', type: 'select', required: false, owner_id: f.alice.id, can_edit: true, version: 1 });
    expect(created.body.options.map((o: { id: string }) => o.id)).toEqual(['p0', 'p1', 'p2', 'p3']);
    const again = expectError(await f.sys.call('POST', '/api/v1/custom-fields', f.alice, { ...PRIORITY, name: 'Other' }), 409, 'CUSTOM_FIELD_KEY_TAKEN');
    expect(again.details).toMatchObject({ key: 'cf.priority', fieldId: created.body.id });

    // another user may define the same key for their own tasks
    const bob = await f.sys.call('POST', '/api/v1/custom-fields', await f.sys.user('bob'), PRIORITY);
    expect(bob.status).toBe(201);
    expectError(await f.sys.call('GET', `/api/v1/custom-fields/${bob.body.id}`, f.alice), 404, 'CUSTOM_FIELD_NOT_FOUND');

    const listed = await f.sys.call('GET', '/api/v1/custom-fields', f.alice);
    expect(listed.body.data.map((d: { id: string }) => d.id)).toEqual([created.body.id]);
    const renamed = await f.sys.call('PATCH', `/api/v1/custom-fields/${created.body.id}`, f.alice, { name: 'Urgency' }, { 'if-match': '"1"' });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(renamed.body).toMatchObject({ key: 'cf.priority', name: 'Urgency', version: 2 });
    expectError(await f.sys.call('DELETE', `/api/v1/custom-fields/${created.body.id}`, f.alice, undefined, { 'if-match': '"1"' }), 412, 'PRECONDITION_FAILED');
    expect((await f.sys.call('DELETE', `/api/v1/custom-fields/${created.body.id}`, f.alice)).status).toBe(204);
    expectError(await f.sys.call('GET', `/api/v1/custom-fields/${created.body.id}`, f.alice), 404, 'CUSTOM_FIELD_NOT_FOUND');
  });

  it('keys stay unique per owner under concurrent creates: one wins, the others are 409', async () => {
    await using f = await fixture();
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => f.sys.call('POST', '/api/v1/custom-fields', f.alice, { key: 'cf.size', name: `Size ${i}`, type: 'text' })),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 201)) {
      expect(a.status).toBe(409);
      expect(['CUSTOM_FIELD_KEY_TAKEN', 'CONFLICT']).toContain(a.body.code);
    }
    expect((await f.sys.call('GET', '/api/v1/custom-fields', f.alice)).body.data).toHaveLength(1);
  });

  it('refuse bad definitions naming the field: options only on select kinds, distinct option ids, a default of the type', async () => {
    await using f = await fixture();
    const post = (body: Record<string, unknown>) => f.sys.call('POST', '/api/v1/custom-fields', f.alice, body);
    expect(expectError(await post({ key: 'cf.x', name: 'X', type: 'select' }), 400, 'VALIDATION_FAILED').validationErrors[0].field).toBe('/options');
    expect(expectError(await post({ key: 'cf.x', name: 'X', type: 'number', options: [{ id: 'a', label: 'A' }] }), 400, 'VALIDATION_FAILED').validationErrors[0].field).toBe('/options');
    const dup = await post({ key: 'cf.x', name: 'X', type: 'select', options: [{ id: 'a', label: 'A' }, { id: 'a', label: 'B' }] });
    expect(expectError(dup, 400, 'VALIDATION_FAILED').validationErrors[0].field).toBe('/options/1/id');
    expect(expectError(await post({ key: 'cf.x', name: 'X', type: 'number', default: 'three' }), 400, 'VALIDATION_FAILED').validationErrors[0].field).toBe('/default');
    expectError(await post({ key: 'priority', name: 'X', type: 'text' }), 400, 'VALIDATION_FAILED');
    expectError(await post({ key: 'cf.x', name: 'X', type: 'money' }), 400, 'VALIDATION_FAILED');
    expect((await f.sys.call('GET', '/api/v1/custom-fields', f.alice)).body.data).toEqual([]);
  });

  it("a group's fields are read by its members, edited by its owner and admins only, and type the group's tasks", async () => {
    await using f = await fixture();
    const bob = await f.sys.user('bob');
    const carol = await f.sys.user('carol');
    const group = await f.sys.call('POST', '/api/v1/groups', f.alice, { name: 'crew' });
    await f.sys.call('POST', `/api/v1/groups/${group.body.id}/members`, f.alice, { user_id: bob.id });
    expectError(await f.sys.call('POST', '/api/v1/custom-fields', bob, { ...PRIORITY, group_id: group.body.id }), 403, 'FORBIDDEN');
    expectError(await f.sys.call('POST', '/api/v1/custom-fields', carol, { ...PRIORITY, group_id: group.body.id }), 404, 'GROUP_NOT_FOUND');
    const def = await f.define(f.alice, { key: 'cf.estimate', name: 'Estimate', type: 'number', group_id: group.body.id });
    const seen = await f.sys.call('GET', `/api/v1/custom-fields/${def.id}`, bob);
    expect(seen.body).toMatchObject({ group_id: group.body.id, can_edit: false });
    expectError(await f.sys.call('PATCH', `/api/v1/custom-fields/${def.id}`, bob, { name: 'mine' }), 403, 'FORBIDDEN');
    expectError(await f.sys.call('GET', `/api/v1/custom-fields/${def.id}`, carol), 404, 'CUSTOM_FIELD_NOT_FOUND');

    const board = await f.sys.call('POST', '/api/v1/boards', f.alice, { name: 'Crew', board_type: 'private' });
    await f.sys.call('POST', `/api/v1/boards/${board.body.id}/share`, f.alice, { group_id: group.body.id, permission: 'rw' });
    const inScope = await f.sys.call('GET', `/api/v1/custom-fields?board_id=${board.body.id}`, bob);
    expect(inScope.body.data.map((d: { key: string }) => d.key)).toEqual(['cf.estimate']);
    // a card of the shared board is typed by the group's definition; bob's private tasks are not
    const bad = expectError(await f.sys.call('POST', `/api/v1/boards/${board.body.id}/tasks`, bob, { title: 'card', metadata: { 'cf.estimate': 'big' } }), 400, 'CUSTOM_FIELD_VALUE_INVALID');
    expect(bad.details).toMatchObject({ field: 'metadata.cf.estimate', type: 'number', value: 'big' });
    expect((await f.task(bob, { 'cf.estimate': 'big' })).metadata['cf.estimate']).toBe('big');
  });
});

describe('values on write', () => {
  it('each type takes its values and refuses others, naming the field, the type and the value; nothing is written', async () => {
    await using f = await fixture();
    await f.sys.user('dora');
    const defs: Array<[Record<string, unknown>, unknown[], unknown[]]> = [
      [{ key: 'cf.note', name: 'Note', type: 'text' }, ['hello'], [3, true, ['a']]],
      [{ key: 'cf.estimate', name: 'Estimate', type: 'number' }, [3, 2.5, 0], ['3', true, [1]]],
      [{ key: 'cf.due', name: 'Due', type: 'date' }, ['2026-03-15'], ['2026-02-30', '15/03/2026', 20260315]],
      [{ key: 'cf.at', name: 'At', type: 'datetime' }, ['2026-03-15T10:00:00+01:00', '2026-03-15'], ['2026-03-15T10:00', 'soon']],
      [{ key: 'cf.done', name: 'Done', type: 'boolean' }, [true, false], ['true', 1]],
      [PRIORITY, ['p1'], ['P9', 'nope', ['p1']]],
      [{ key: 'cf.labels', name: 'Labels', type: 'multi_select', options: [{ id: 'ui', label: 'UI' }, { id: 'api', label: 'API' }] }, [['ui', 'api'], []], ['ui', ['ui', 'db']]],
      [{ key: 'cf.owner', name: 'Owner', type: 'user' }, [f.alice.id], ['nobody-with-this-id', 7]],
      [{ key: 'cf.link', name: 'Link', type: 'url' }, ['https://example.com/x'], ['example.com', 'javascript:alert(1)', 5]],
    ];
    for (const [def] of defs) await f.define(f.alice, def);
    for (const [def, good, bad] of defs) {
      for (const value of good) {
        const res = await f.sys.call('POST', '/api/v1/tasks', f.alice, { title: 'ok', metadata: { [def.key as string]: value } });
        expect(res.status, `${def.key} = ${JSON.stringify(value)}: ${JSON.stringify(res.body)}`).toBe(201);
      }
      for (const value of bad) {
        const before = await f.count(f.alice);
        const res = await f.sys.call('POST', '/api/v1/tasks', f.alice, { title: 'bad', metadata: { [def.key as string]: value } });
        const err = expectError(res, 400, 'CUSTOM_FIELD_VALUE_INVALID');
        expect(err.details, `${def.key} = ${JSON.stringify(value)}`).toMatchObject({ field: `metadata.${def.key}`, type: def.type, value });
        expect(err.message).toContain(`metadata.${def.key}`);
        expect(await f.count(f.alice)).toBe(before);
      }
    }
    // stored in the field's form: the datetime in UTC, repeated options once
    const t = await f.task(f.alice, { 'cf.at': '2026-03-15T10:00:00+01:00', 'cf.labels': ['ui', 'ui'] });
    expect(t.metadata).toMatchObject({ 'cf.at': '2026-03-15T09:00:00.000Z', 'cf.labels': ['ui'] });
    // keys without a definition stay free-form
    expect((await f.task(f.alice, { 'cf.anything': { any: ['json'] }, 'app.points': 'x' })).metadata['cf.anything']).toEqual({ any: ['json'] });
  });

  it('PATCH, the metadata PATCH, batches and card create from a column all run the same check', async () => {
    await using f = await fixture();
    await f.define(f.alice, PRIORITY);
    await f.define(f.alice, { key: 'cf.estimate', name: 'Estimate', type: 'number' });
    const t = await f.task(f.alice, { 'cf.estimate': 1 });
    const get = async () => (await f.sys.call('GET', `/api/v1/tasks/${t.id}`, f.alice)).body;

    let err = expectError(await f.sys.call('PATCH', `/api/v1/tasks/${t.id}`, f.alice, { title: 'new', metadata: { 'cf.estimate': 'x' } }), 400, 'CUSTOM_FIELD_VALUE_INVALID');
    expect(err.details.field).toBe('metadata.cf.estimate');
    err = expectError(await f.sys.call('PATCH', `/api/v1/tasks/${t.id}/metadata`, f.alice, { key: 'cf.priority', value: 'urgent' }), 400, 'CUSTOM_FIELD_VALUE_INVALID');
    expect(err.details).toMatchObject({ field: 'metadata.cf.priority', type: 'select', value: 'urgent' });
    const batch = await f.sys.call('PATCH', '/api/v1/tasks/batch', f.alice, { updates: [{ id: t.id, changes: { metadata: { 'cf.estimate': '5' } } }] });
    expect(batch.status, JSON.stringify(batch.body)).toBe(200);
    expect(JSON.stringify(batch.body)).toContain('CUSTOM_FIELD_VALUE_INVALID');
    const created = await f.sys.call('POST', '/api/v1/tasks/batch', f.alice, { tasks: [{ title: 'b', metadata: { 'cf.priority': 'p9' } }] });
    expect(JSON.stringify(created.body)).toContain('CUSTOM_FIELD_VALUE_INVALID');
    const same = await f.sys.call('POST', '/api/v1/tasks/batch-update', f.alice, { ids: [t.id], updates: { metadata: { 'cf.estimate': false } } });
    expect(same.body.failCount).toBe(1);
    const after = await get();
    expect(after).toMatchObject({ title: 'task', version: 1 });
    expect(after.metadata['cf.estimate']).toBe(1);
    expect((await f.sys.call('PATCH', `/api/v1/tasks/${t.id}/metadata`, f.alice, { key: 'cf.priority', value: 'p2' })).status).toBe(200);

    // a column query `cf.priority = 'P1'` (a label): its enter action sets the option id
    const board = await f.sys.call('POST', '/api/v1/boards', f.alice, {
      name: 'B', board_type: 'private', columns: [{ name: 'Hot', query: "cf.priority = 'P1'" }, { name: 'All', query: '' }],
    });
    expect(board.status, JSON.stringify(board.body)).toBe(201);
    const hot = board.body.columns[0];
    expect(hot.actions).toEqual([expect.objectContaining({ field: 'metadata.cf.priority', operation: 'set', value: 'P1' })]);
    const card = await f.sys.call('POST', `/api/v1/boards/${board.body.id}/tasks`, f.alice, { title: 'card', column_id: hot.id });
    expect(card.status, JSON.stringify(card.body)).toBe(201);
    expect(card.body.metadata['cf.priority']).toBe('p1');
    const read = await f.sys.call('POST', `/api/v1/boards/${board.body.id}/columns/${hot.id}/query`, f.alice, {});
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    expect(read.body.data.map((c: { title: string }) => c.title)).toEqual(['card']);
    // a move into the column sets it too
    const all = board.body.columns[1];
    const loose = await f.sys.call('POST', `/api/v1/boards/${board.body.id}/tasks`, f.alice, { title: 'loose', column_id: all.id });
    const moved = await f.sys.call('POST', `/api/v1/boards/${board.body.id}/tasks/${loose.body.id}/move`, f.alice, { from_column_id: all.id, to_column_id: hot.id });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect((await f.sys.call('GET', `/api/v1/tasks/${loose.body.id}`, f.alice)).body.metadata['cf.priority']).toBe('p1');
    // a column action value the field cannot hold is refused at its position
    const badBoard = await f.sys.call('POST', '/api/v1/boards', f.alice, { name: 'C', board_type: 'private', columns: [{ name: 'Big', query: "cf.estimate = 'huge'" }] });
    expect(expectError(badBoard, 400, 'VALIDATION_FAILED').validationErrors[0].field).toBe('/columns/0/actions/0/value');
  });

  it('a required field takes its default on create, or is refused without one', async () => {
    await using f = await fixture();
    await f.define(f.alice, { key: 'cf.size', name: 'Size', type: 'select', options: [{ id: 's', label: 'S' }, { id: 'm', label: 'M' }], required: true, default: 'm' });
    expect((await f.task(f.alice, {})).metadata['cf.size']).toBe('m');
    await f.define(f.alice, { key: 'cf.team', name: 'Team', type: 'text', required: true });
    const err = expectError(await f.sys.call('POST', '/api/v1/tasks', f.alice, { title: 'x' }), 400, 'CUSTOM_FIELD_VALUE_INVALID');
    expect(err.details.field).toBe('metadata.cf.team');
    expect((await f.task(f.alice, { 'cf.team': 'core' })).metadata).toMatchObject({ 'cf.team': 'core', 'cf.size': 'm' });
  });
});

describe('queries on custom fields', () => {
  it('compare by type: numbers numerically, dates as dates, selects by option (label or id), multi_select with array operators', async () => {
    await using f = await fixture();
    await f.define(f.alice, { key: 'cf.estimate', name: 'Estimate', type: 'number' });
    await f.define(f.alice, { key: 'cf.due', name: 'Due', type: 'date' });
    await f.define(f.alice, PRIORITY);
    await f.define(f.alice, { key: 'cf.labels', name: 'Labels', type: 'multi_select', options: [{ id: 'ui', label: 'UI' }, { id: 'api', label: 'API' }, { id: 'db', label: 'DB' }] });
    await f.task(f.alice, { 'cf.estimate': 2, 'cf.due': '2026-03-01', 'cf.priority': 'p2', 'cf.labels': ['ui'] }, 'two');
    await f.task(f.alice, { 'cf.estimate': 10, 'cf.due': '2026-03-10', 'cf.priority': 'p0', 'cf.labels': ['ui', 'api'] }, 'ten');
    await f.task(f.alice, {}, 'none');
    expect(await f.titles(f.alice, 'cf.estimate < 10')).toEqual(['two']);
    expect(await f.titles(f.alice, "cf.estimate > '3'")).toEqual(['ten']);
    expect(await f.titles(f.alice, 'cf.estimate BETWEEN 2 AND 9')).toEqual(['two']);
    expect(await f.titles(f.alice, 'cf.due < 2026-03-05')).toEqual(['two']);
    expect(await f.titles(f.alice, "cf.due >= '2026-03-05'")).toEqual(['ten']);
    expect(await f.titles(f.alice, 'cf.due = 2026-03-10T15:00Z')).toEqual(['ten']);
    expect(await f.titles(f.alice, "cf.priority = 'P2'")).toEqual(['two']);
    expect(await f.titles(f.alice, "cf.priority IN ('p0', 'P2') ORDER BY title ASC")).toEqual(['ten', 'two']);
    expect(await f.titles(f.alice, "cf.priority != 'p0' ORDER BY title ASC")).toEqual(['none', 'two']);
    expect(await f.titles(f.alice, "cf.labels CONTAINS 'api'")).toEqual(['ten']);
    expect(await f.titles(f.alice, "cf.labels CONTAINS_ALL ('ui', 'API')")).toEqual(['ten']);
    expect(await f.titles(f.alice, "cf.labels = 'ui' ORDER BY title ASC")).toEqual(['ten', 'two']);
    expect(await f.titles(f.alice, 'cf.labels IS NULL')).toEqual(['none']);
  });

  it('ORDER BY a select field follows the options\' order, not their spelling, and pages across options', async () => {
    await using f = await fixture();
    await f.define(f.alice, { key: 'cf.stage', name: 'Stage', type: 'select', options: [{ id: 'zeta', label: 'First' }, { id: 'alpha', label: 'Second' }, { id: 'mid', label: 'Third' }] });
    for (const [title, stage] of [['a', 'mid'], ['b', 'zeta'], ['c', 'alpha'], ['d', undefined], ['e', 'zeta']] as const) {
      await f.task(f.alice, stage ? { 'cf.stage': stage } : {}, title);
    }
    expect(await f.titles(f.alice, 'ORDER BY cf.stage ASC, title ASC')).toEqual(['d', 'b', 'e', 'c', 'a']);
    expect(await f.titles(f.alice, 'ORDER BY cf.stage DESC, title ASC')).toEqual(['a', 'c', 'b', 'e', 'd']);
    const pages: string[] = [];
    for (const page of [1, 2, 3]) {
      const res = await f.sys.call('POST', '/api/v1/tasks/query', f.alice, { query: 'ORDER BY cf.stage ASC, title ASC', page, pageSize: 2 });
      expect(res.body.total).toBe(5);
      pages.push(...res.body.data.map((t: { title: string }) => t.title));
    }
    expect(pages).toEqual(['d', 'b', 'e', 'c', 'a']);
    // untyped, the same key sorts by the ids' spelling
    await f.sys.call('DELETE', `/api/v1/custom-fields/${(await f.sys.call('GET', '/api/v1/custom-fields', f.alice)).body.data[0].id}`, f.alice);
    expect(await f.titles(f.alice, 'ORDER BY cf.stage ASC, title ASC')).toEqual(['d', 'c', 'a', 'b', 'e']);
  });

  it('an operator or value a type lacks is a 400 at its position; validate says so and suggests defined fields', async () => {
    await using f = await fixture();
    await f.define(f.alice, { key: 'cf.estimate', name: 'Estimate', type: 'number' });
    await f.define(f.alice, PRIORITY);
    await f.define(f.alice, { key: 'cf.done', name: 'Done', type: 'boolean' });
    const cases: Array<[string, number]> = [
      ["status = 'todo' AND cf.estimate LIKE '3%'", 32],
      ["cf.priority > 'P1'", 12],
      ['cf.done ~ \'t\'', 8],
      ["cf.estimate = 'three'", 0],
      ["cf.priority = 'P7'", 0],
    ];
    for (const [q, position] of cases) {
      const err = expectError(await f.query(f.alice, q), 400, 'QUERY_OPERATOR_NOT_FOR_TYPE');
      expect(err.details.position, q).toBe(position);
      const v = await f.sys.call('POST', '/api/v1/tasks/query/validate', f.alice, { query: q });
      expect(v.body).toMatchObject({ valid: false, errors: [{ code: 'QUERY_OPERATOR_NOT_FOR_TYPE', position }] });
    }
    const suggested = await f.sys.call('POST', '/api/v1/tasks/query/validate', f.alice, { query: "Priority = 'P1'" });
    expect(suggested.body.errors[0]).toMatchObject({ code: 'QUERY_UNKNOWN_FIELD', suggestion: 'cf.priority', position: 0 });
    expect((await f.sys.call('POST', '/api/v1/tasks/query/validate', f.alice, { query: "cf.priority = 'P1'" })).body.valid).toBe(true);
    // an undefined key keeps every operator
    expect((await f.query(f.alice, "cf.other LIKE '3%'")).status).toBe(200);
  });
});

describe('changing and deleting a definition', () => {
  it('a type change is refused while values the new type cannot hold exist (counted), converted where it can', async () => {
    await using f = await fixture();
    const def = await f.define(f.alice, { key: 'cf.size', name: 'Size', type: 'text' });
    const a = await f.task(f.alice, { 'cf.size': '3' });
    await f.task(f.alice, { 'cf.size': 'large' });
    await f.task(f.alice, { 'cf.size': 'huge' });
    const err = expectError(await f.sys.call('PATCH', `/api/v1/custom-fields/${def.id}`, f.alice, { type: 'number' }), 409, 'CUSTOM_FIELD_TYPE_CONFLICT');
    expect(err.details).toMatchObject({ incompatible: 2, type: 'number' });
    expect(err.details.examples).toHaveLength(2);
    expect((await f.sys.call('GET', `/api/v1/custom-fields/${def.id}`, f.alice)).body).toMatchObject({ type: 'text', version: 1 });
    expect((await f.sys.call('GET', `/api/v1/tasks/${a.id}`, f.alice)).body.metadata['cf.size']).toBe('3');

    // to a select whose labels match: converted to the option ids
    const sel = await f.sys.call('PATCH', `/api/v1/custom-fields/${def.id}`, f.alice, {
      type: 'select', options: [{ id: 's3', label: '3' }, { id: 'l', label: 'Large' }, { id: 'h', label: 'Huge' }],
    });
    expect(sel.status, JSON.stringify(sel.body)).toBe(200);
    expect(sel.body).toMatchObject({ type: 'select', converted: 3, version: 2 });
    const after = await f.sys.call('GET', `/api/v1/tasks/${a.id}`, f.alice);
    expect(after.body).toMatchObject({ version: 2 });
    expect(after.body.metadata['cf.size']).toBe('s3');
    // removing an option in use is the same conflict
    const drop = await f.sys.call('PATCH', `/api/v1/custom-fields/${def.id}`, f.alice, { options: [{ id: 'l', label: 'Large' }, { id: 'h', label: 'Huge' }] });
    expect(expectError(drop, 409, 'CUSTOM_FIELD_TYPE_CONFLICT').details.incompatible).toBe(1);
  });

  it('deleting a definition keeps the stored values as untyped metadata', async () => {
    await using f = await fixture();
    const def = await f.define(f.alice, { key: 'cf.estimate', name: 'Estimate', type: 'number' });
    const t = await f.task(f.alice, { 'cf.estimate': 5 });
    expect((await f.sys.call('DELETE', `/api/v1/custom-fields/${def.id}`, f.alice)).status).toBe(204);
    expect((await f.sys.call('GET', `/api/v1/tasks/${t.id}`, f.alice)).body.metadata['cf.estimate']).toBe(5);
    expect((await f.sys.call('PATCH', `/api/v1/tasks/${t.id}/metadata`, f.alice, { key: 'cf.estimate', value: 'any text now' })).status).toBe(200);
    expect((await f.query(f.alice, "cf.estimate LIKE 'any%'")).body.total).toBe(1);
  });
});
