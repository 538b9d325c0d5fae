import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskDoc } from '@app/shared/domain';
import { compileQuery, parseQuery } from '@app/shared/query';
import { EmbeddedStore, type Collection } from '@app/shared/store';
import { aTask, type TaskFields } from '@app/shared/testing';

// Semantic tests: every operator and field kind, compiled and run through the embedded store
// over 15 stored tasks. Expected ids are in result order; without ORDER BY that is newest first
// (created_at DESC), i.e. t15 … t01, since task n is created on 2026-03-n.

const NOW = new Date('2026-03-15T12:00:00.000Z');

function task(n: number, fields: TaskFields): TaskDoc {
  const nn = String(n).padStart(2, '0');
  return aTask({
    _id: `t${nn}`, title: `Task ${n}`, description: `Description of task ${n}`, at: `2026-03-${nn}T10:00:00.000Z`,
    created_by: n % 2 ? 'u1' : 'u2', updated_by: 'u1', ...fields,
  });
}

const TASKS: TaskDoc[] = [
  task(1, { title: 'Fix login bug', tags: ['bug', 'q4'], assignee: 'alice', deadline: '2026-03-15T09:00:00.000Z',
    updated_at: '2026-03-15T11:00:00.000Z', metadata: { order: 3, 'cf.priority': 'high', 'app.sprint': 's1', 'cf.points': 5 } }),
  task(2, { title: 'Write docs', status: 'doing', tags: ['docs'], path: '/team/docs', assignee: 'bob', checkInCount: 1,
    deadline: '2026-03-16T00:00:00.000Z', metadata: { order: 1, 'cf.priority': 'low', 'app.sprint': 's1', 'cf.points': 2 } }),
  task(3, { title: 'Release 1.0 (final)', status: 'done', tags: ['q4', 'release'], checkInCount: 2,
    deadline: '2026-03-14T23:59:59.999Z', metadata: { order: 2, 'cf.points': '8', 'app.sprint': 's2' } }),
  task(4, { title: 'Callback handler', kickoff: '2026-03-08T12:00:00.000Z', metadata: { order: 10, 'cf.priority': 'HIGH' } }),
  task(5, { title: 'refactor CALLBACKS', status: 'doing', tags: ['tech-debt'], path: '/eng', assignee: 'carol',
    metadata: { 'cf.done': true, 'cf.points': 3 } }),
  task(6, { title: '100% coverage', tags: ['test'], metadata: { 'cf.ratio': 0.5, 'cf.labels': ['x', 'y'] } }),
  task(7, { title: 'under_score task', status: 'blocked', tags: ['bug'], path: '/ops', deadline: '2026-04-15T00:00:00.000Z',
    metadata: { 'cf.priority': null } }),
  task(8, { title: 'Ünïcode título', assignee: 'dave', description: 'Has $where and {"$gt": ""} inside',
    metadata: { 'odd$key': 'v', 'a.b.c': 1, $lead: 'x' } }),
  task(9, { title: 'Deploy', status: 'done', tags: ['release'], checkInCount: 7, derivedFromId: 't01' }),
  task(10, { title: 'Plan sprint', tags: ['q4'], kickoff: '2026-03-16T09:00:00.000Z', metadata: { 'app.type': 'sprint' } }),
  task(11, { title: "It's quoted", tags: ["it's"], description: 'She said "hi"', metadata: { order: 4 } }),
  task(12, { title: 'a.b*c+?' }),
  task(13, { title: 'Bug bash', status: 'doing', tags: ['bug', 'q4', 'release'], assignee: 'alice', checkInCount: 3,
    deadline: '2026-03-20T00:00:00.000Z', metadata: { order: 5, 'cf.points': 13 } }),
  task(14, { title: 'Numbers', metadata: { order: -1, 'cf.points': 10 } }),
  task(15, { title: 'No metadata', status: 'doing' }),
];

/** `t15 … t01` without the listed ids. */
const allBut = (...ids: string[]): string[] => TASKS.map((t) => t._id).reverse().filter((id) => !ids.includes(id));

let store: EmbeddedStore;
let tasks: Collection<TaskDoc>;

beforeAll(async () => {
  store = EmbeddedStore.memory();
  tasks = store.collection<TaskDoc>('tasks');
  await tasks.insertMany(TASKS);
});
afterAll(() => store.close());

async function run(text: string): Promise<string[]> {
  const { filter, sort } = compileQuery(parseQuery(text), { now: NOW });
  return (await tasks.find(filter, { sort })).map((t) => t._id);
}

type Case = [query: string, ids: string[]];

function table(name: string, cases: Case[]): void {
  describe(name, () => {
    it.each(cases)('%s', async (query, ids) => {
      expect(await run(query)).toEqual(ids);
    });
  });
}

table('text builtins: = != < <= > >= IN BETWEEN', [
  ["status = 'todo'", ['t14', 't12', 't11', 't10', 't08', 't06', 't04', 't01']],
  ["status != 'todo'", ['t15', 't13', 't09', 't07', 't05', 't03', 't02']],
  ["status IN ('doing', 'blocked')", ['t15', 't13', 't07', 't05', 't02']],
  ["status NOT IN ('todo', 'doing')", ['t09', 't07', 't03']],
  ["status < 'doing'", ['t07']],
  ["status <= 'done'", ['t15', 't13', 't09', 't07', 't05', 't03', 't02']],
  ["status > 'doing'", ['t14', 't12', 't11', 't10', 't09', 't08', 't06', 't04', 't03', 't01']],
  ["status >= 'todo'", ['t14', 't12', 't11', 't10', 't08', 't06', 't04', 't01']],
  ["status BETWEEN 'doing' AND 'done'", ['t15', 't13', 't09', 't05', 't03', 't02']],
  ['title = "It\'s quoted"', ['t11']],
  ["title = 'It''s quoted'", ['t11']],
  ["title = 'It\\'s quoted'", ['t11']],
  ["id = 't03'", ['t03']],
  ["id IN ('t01', 't15')", ['t15', 't01']],
  ["derivedFromId = 't01'", ['t09']],
  ["created_by = 'u2'", ['t14', 't12', 't10', 't08', 't06', 't04', 't02']],
  ["description = '{\"$gt\": \"\"}'", []],
]);

table('missing fields: != and NOT IN match tasks without the field; IS [NOT] NULL', [
  ["assignee = 'alice'", ['t13', 't01']],
  ["assignee != 'alice'", allBut('t13', 't01')],
  ["NOT assignee = 'alice'", allBut('t13', 't01')],
  ["assignee NOT IN ('alice', 'bob')", allBut('t13', 't02', 't01')],
  ["assignee IN ('bob', 'carol')", ['t05', 't02']],
  ['assignee IS NULL', ['t15', 't14', 't12', 't11', 't10', 't09', 't07', 't06', 't04', 't03']],
  ['assignee IS NOT NULL', ['t13', 't08', 't05', 't02', 't01']],
  ['path IS NOT NULL', ['t07', 't05', 't02']],
  ["path = ''", allBut('t07', 't05', 't02')],
  ['path IS NULL', allBut('t07', 't05', 't02')],
  ["path LIKE '/team/%'", ['t02']],
]);

table('LIKE / ILIKE (% and _, \\ escapes, anchored, regex characters literal)', [
  ["title LIKE 'Bug%'", ['t13']],
  ["title LIKE '%bug'", ['t01']],
  ["title LIKE 'bug'", []],
  ["title ILIKE '%BUG%'", ['t13', 't01']],
  ["title NOT LIKE '%a%'", ['t14', 't11', 't09', 't08', 't02', 't01']],
  ["title NOT ILIKE '%A%'", ['t14', 't11', 't09', 't08', 't02', 't01']],
  ["title LIKE 'Dep_oy'", ['t09']],
  ["title LIKE 'Dep_y'", []],
  ["title LIKE 'under\\\\_score%'", ['t07']],
  ["title LIKE 'under\\\\_scor'", []],
  ["title LIKE '%\\\\%%'", ['t06']],
  ["title LIKE 'a.b*c+?'", ['t12']],
  ["title LIKE 'a_b_c__'", ['t12']],
  ["title LIKE 'a.b%'", ['t12']],
  ["title LIKE '%'", allBut()],
  ["title LIKE '%%o%%a%'", ['t15', 't07', 't06']],
]);

table('~ and !~ (case-insensitive substring, regex characters literal)', [
  ["title ~ 'callback'", ['t05', 't04']],
  ['title ~ "CallBack"', ['t05', 't04']],
  ["title !~ 'callback'", allBut('t05', 't04')],
  ["title ~ '.'", ['t12', 't03']],
  ["title ~ '(final)'", ['t03']],
  ["title ~ '.*'", []],
  ["title ~ 'TÍTULO'", ['t08']],
  ["description ~ '$where'", ['t08']],
  ["description ~ '\"hi\"'", ['t11']],
  ["tags ~ 'DEBT'", ['t05']],
]);

table('tags (array): = has, IN any of, CONTAINS, CONTAINS_ALL, value IN tags', [
  ["tags = 'bug'", ['t13', 't07', 't01']],
  ["'q4' IN tags", ['t13', 't10', 't03', 't01']],
  ['"it\'s" IN tags', ['t11']],
  ["tags CONTAINS 'release'", ['t13', 't09', 't03']],
  ["tags IN ('docs', 'test')", ['t06', 't02']],
  ["tags CONTAINS_ALL ('q4', 'release')", ['t13', 't03']],
  ["tags CONTAINS_ALL ('q4', 'docs')", []],
  ["tags != 'bug'", allBut('t13', 't07', 't01')],
  ["tags NOT IN ('q4', 'bug')", ['t15', 't14', 't12', 't11', 't09', 't08', 't06', 't05', 't04', 't02']],
  ['tags IS NULL', ['t15', 't14', 't12', 't08', 't04']],
  ['tags IS NOT NULL', allBut('t15', 't14', 't12', 't08', 't04')],
  ["tags LIKE 'q_'", ['t13', 't10', 't03', 't01']],
]);

table('numbers compare as numbers, strings as strings', [
  ['checkInCount > 2', ['t13', 't09']],
  ['checkInCount = 0', allBut('t13', 't09', 't03', 't02')],
  ['checkInCount BETWEEN 1 AND 3', ['t13', 't03', 't02']],
  ['checkInCount IN (1, 7)', ['t09', 't02']],
  ["checkInCount = '7'", []],
  ['cf.points > 4', ['t14', 't13', 't01']],
  ["cf.points > '4'", ['t03']],
  ['cf.points BETWEEN 2 AND 5', ['t05', 't02', 't01']],
  ['cf.points IN (2, 13)', ['t13', 't02']],
  ['cf.points = 8', []],
  ["cf.points = '8'", ['t03']],
  ['cf.ratio < 1', ['t06']],
  ['cf.ratio = 5e-1', ['t06']],
  ['metadata.order < 3', ['t14', 't03', 't02']],
  ['metadata.order >= 4', ['t13', 't11', 't04']],
  ['metadata.order = -1', ['t14']],
]);

table('metadata fields: cf.*, app.*, metadata.<key>, <ns>.<key>, booleans, arrays, odd keys', [
  ["cf.priority = 'high'", ['t01']],
  ["metadata.cf.priority = 'high'", ['t01']],
  ["cf.priority ILIKE 'high'", ['t04', 't01']],
  ["cf.priority != 'high'", allBut('t01')],
  ['cf.priority IS NULL', allBut('t04', 't02', 't01')],
  ['cf.priority IS NOT NULL', ['t04', 't02', 't01']],
  ["app.sprint = 's1'", ['t02', 't01']],
  ["metadata.app.sprint = 's1'", ['t02', 't01']],
  ["app.type = 'sprint'", ['t10']],
  ['cf.done = true', ['t05']],
  ['cf.done != TRUE', allBut('t05')],
  ["cf.done = 'true'", []],
  ["cf.labels CONTAINS 'x'", ['t06']],
  ["cf.labels CONTAINS_ALL ('x', 'y')", ['t06']],
  ["'y' IN cf.labels", ['t06']],
  ["cf.labels = 'y'", ['t06']],
  ['a.b.c = 1', ['t08']],
  ["metadata.odd$key = 'v'", ['t08']],
  ["metadata.$lead = 'x'", ['t08']],
  ["metadata.$where = 'x'", []],
]);

table('dates: day literals cover the whole UTC day; instants, now and ±N are points (now = 2026-03-15T12:00Z)', [
  ['deadline = today', ['t01']],
  ['deadline = tomorrow', ['t02']],
  ['deadline = yesterday', ['t03']],
  ['deadline = 2026-03-15', ['t01']],
  ["deadline = '2026-03-15'", ['t01']],
  ['deadline < today', ['t03']],
  ['deadline <= today', ['t03', 't01']],
  ['deadline > today', ['t13', 't07', 't02']],
  ['deadline >= TODAY', ['t13', 't07', 't02', 't01']],
  ['deadline != today', allBut('t01')],
  ['deadline < now', ['t03', 't01']],
  ['deadline > now', ['t13', 't07', 't02']],
  ['deadline BETWEEN today AND tomorrow', ['t02', 't01']],
  ['deadline BETWEEN now AND +7d', ['t13', 't02']],
  ["deadline BETWEEN now AND '+7d'", ['t13', 't02']],
  ['deadline > +4w', ['t07']],
  ['deadline = 2026-03-14T23:59:59.999Z', ['t03']],
  ["deadline = '2026-03-15T10:00:00+01:00'", ['t01']],
  ['deadline < 2026-03-15T00:00-01:00', ['t03']],
  ['deadline IN (today, tomorrow)', ['t02', 't01']],
  ['deadline NOT IN (today, tomorrow)', allBut('t02', 't01')],
  ['deadline IS NULL', allBut('t13', 't07', 't03', 't02', 't01')],
  ['kickoff = -7d', ['t04']],
  ['kickoff >= -1w', ['t10', 't04']],
  ["kickoff > '-7d'", ['t10']],
  ['created_at >= -7d', ['t15', 't14', 't13', 't12', 't11', 't10', 't09']],
  ['created_at = today', ['t15']],
  ['created_at < 2026-03-03', ['t02', 't01']],
  ['created_at <= 2026-03-03', ['t03', 't02', 't01']],
  ['created_at > 2026-03-13', ['t15', 't14']],
  ['created_at BETWEEN 2026-03-02 AND 2026-03-04', ['t04', 't03', 't02']],
  ['created_at > -1m', allBut()],
  ["updated_at = '2026-03-15T11:00:00Z'", ['t01']],
]);

table('AND, OR, NOT, parentheses, case-insensitive keywords', [
  ["status = 'todo' AND 'q4' IN tags", ['t10', 't01']],
  ["status = 'done' OR tags CONTAINS 'bug'", ['t13', 't09', 't07', 't03', 't01']],
  ["status = 'done' OR status = 'doing' AND 'q4' IN tags", ['t13', 't09', 't03']],
  ["(status = 'done' OR status = 'doing') AND 'q4' IN tags", ['t13', 't03']],
  ["NOT status = 'todo' AND NOT status = 'doing'", ['t09', 't07', 't03']],
  ["NOT (status = 'todo' OR status = 'doing')", ['t09', 't07', 't03']],
  ["not not status = 'done'", ['t09', 't03']],
  ["status = 'doing' and assignee is not null or id in ('t12')", ['t13', 't12', 't05', 't02']],
]);

table('ORDER BY (no direction = DESC; ties broken by id ascending; missing values sort lowest)', [
  ['', allBut()],
  ['ORDER BY metadata.order ASC', ['t05', 't06', 't07', 't08', 't09', 't10', 't12', 't15', 't14', 't02', 't03', 't01', 't11', 't13', 't04']],
  ["status = 'todo' ORDER BY metadata.order DESC", ['t04', 't11', 't01', 't14', 't06', 't08', 't10', 't12']],
  ["status = 'doing' ORDER BY title", ['t05', 't02', 't15', 't13']],
  ['ORDER BY status ASC, checkInCount DESC',
    ['t07', 't13', 't02', 't05', 't15', 't09', 't03', 't01', 't04', 't06', 't08', 't10', 't11', 't12', 't14']],
  ['ORDER BY deadline', ['t07', 't13', 't02', 't01', 't03', 't04', 't05', 't06', 't08', 't09', 't10', 't11', 't12', 't14', 't15']],
  ['ORDER BY id ASC', TASKS.map((t) => t._id)],
  ["'q4' IN tags ORDER BY updated_at ASC", ['t03', 't10', 't13', 't01']],
]);

describe('sort spec', () => {
  const sortOf = (text: string) => compileQuery(parseQuery(text), { now: NOW }).sort;
  it('defaults to newest first with the id tie-breaker', () => {
    expect(Object.entries(sortOf(''))).toEqual([['created_at', -1], ['_id', 1]]);
  });
  it('keeps key order, maps fields to stored paths and ends with _id', () => {
    expect(Object.entries(sortOf('ORDER BY cf.rank ASC, title, metadata.order ASC'))).toEqual([
      ['metadata.cf%2Erank', 1], ['title', -1], ['metadata.order', 1], ['_id', 1],
    ]);
  });
  it('stops at id, which is already unique', () => {
    expect(Object.entries(sortOf('ORDER BY title ASC, id DESC, status'))).toEqual([['title', 1], ['_id', -1]]);
  });
  it('keeps the first direction of a repeated key', () => {
    expect(Object.entries(sortOf('ORDER BY title ASC, title DESC'))).toEqual([['title', 1], ['_id', 1]]);
  });
});

describe('relative dates', () => {
  const bounds = (text: string, now: string) => compileQuery(parseQuery(text), { now: new Date(now) }).filter;
  it('moves by calendar months and years, clamping to the month end', () => {
    expect(bounds('deadline < -1m', '2026-03-31T08:00:00.000Z')).toEqual({ deadline: { $lt: '2026-02-28T08:00:00.000Z' } });
    expect(bounds('deadline < +1y', '2024-02-29T00:00:00.000Z')).toEqual({ deadline: { $lt: '2025-02-28T00:00:00.000Z' } });
    expect(bounds('deadline < -2w', '2026-03-01T00:00:00.000Z')).toEqual({ deadline: { $lt: '2026-02-15T00:00:00.000Z' } });
  });
  it('clamps far dates into years 0000–9999 so they still compare as text', () => {
    expect(bounds('deadline < +999999y', '2026-01-01T00:00:00.000Z')).toEqual({ deadline: { $lt: '9999-12-31T23:59:59.999Z' } });
    expect(bounds('deadline > -999999d', '2026-01-01T00:00:00.000Z')).toEqual({ deadline: { $gt: '0000-01-01T00:00:00.000Z' } });
  });
  it('resolves the same query text afresh at every clock reading, in any predicate that holds a date', () => {
    for (const text of ['deadline < -1d', 'deadline BETWEEN -2d AND today', 'deadline IN (today, tomorrow)', "status = 'todo' AND NOT deadline >= now"]) {
      const first = JSON.stringify(bounds(text, '2026-03-10T00:00:00.000Z'));
      expect(JSON.stringify(bounds(text, '2026-03-20T00:00:00.000Z')), text).not.toBe(first);
    }
  });
  it('resolves day words against the injected clock in UTC', () => {
    expect(bounds('deadline = today', '2026-12-31T23:30:00.000Z')).toEqual({
      deadline: { $gte: '2026-12-31T00:00:00.000Z', $lt: '2027-01-01T00:00:00.000Z' },
    });
  });
});
