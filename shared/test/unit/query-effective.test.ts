import { describe, expect, it } from 'vitest';
import type { ColumnAction, TaskDoc } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { andQueries, buildEffectiveQuery, fieldPath, materializeActions, parseQuery, printQuery, queryMatches } from '@app/shared/query';
import { thrown } from '@app/shared/testing';

const enter = (field: string, operation: ColumnAction['operation'], value?: unknown): ColumnAction =>
  value === undefined ? { trigger: 'enter', field, operation, source: 'query' } : { trigger: 'enter', field, operation, value, source: 'query' };
/** One tag per action (ud's ColumnActionDTO): enter add + exit remove of each tag in turn. */
const tagActions = (...tags: string[]): ColumnAction[] => tags.flatMap((tag): ColumnAction[] => [
  { trigger: 'enter', field: 'tags', operation: 'add', value: tag, source: 'query' },
  { trigger: 'exit', field: 'tags', operation: 'remove', value: tag, source: 'query' },
]);
const actions = (text: string) => materializeActions(parseQuery(text));

describe('materializeActions (docs/architecture.md §7)', () => {
  it('sets status, assignee and path from equalities', () => {
    expect(actions("status = 'doing' AND assignee = 'u1' AND path = '/team'")).toEqual([
      enter('status', 'set', 'doing'), enter('assignee', 'set', 'u1'), enter('path', 'set', '/team'),
    ]);
  });

  it('sets metadata keys (cf.*, app.*, metadata.*, ns.key) on metadata.<key>, with any literal', () => {
    expect(actions("cf.priority = 'high' AND app.sprint = 's1' AND metadata.order = 3 AND team.name = 'core' AND cf.done = true")).toEqual([
      enter('metadata.cf.priority', 'set', 'high'), enter('metadata.app.sprint', 'set', 's1'), enter('metadata.order', 'set', 3),
      enter('metadata.team.name', 'set', 'core'), enter('metadata.cf.done', 'set', true),
    ]);
  });

  it('adds on enter and removes on exit for every tag form', () => {
    expect(actions("tags CONTAINS 'wip'")).toEqual(tagActions('wip'));
    expect(actions("'q4' IN tags")).toEqual(tagActions('q4'));
    expect(actions("tags = 'x'")).toEqual(tagActions('x'));
    expect(actions("tags CONTAINS_ALL ('a', 'b')")).toEqual(tagActions('a', 'b'));
    expect(actions("tags CONTAINS_ALL ('a', 'b', 'a')")).toHaveLength(4);
    expect(actions("status = 'todo' AND tags CONTAINS 'a' AND 'b' IN tags")).toEqual([
      enter('status', 'set', 'todo'), ...tagActions('a'), ...tagActions('b'),
    ]);
  });

  it('clears settable fields from IS NULL', () => {
    expect(actions('assignee IS NULL AND kickoff IS NULL AND deadline IS NULL AND path IS NULL AND cf.x IS NULL')).toEqual([
      enter('assignee', 'clear'), enter('kickoff', 'clear'), enter('deadline', 'clear'), enter('path', 'clear'), enter('metadata.cf.x', 'clear'),
    ]);
  });

  it.each([
    "status = 'a' OR status = 'b'",
    "NOT status = 'a'",
    "status != 'a'",
    "status IN ('a')",
    "tags IN ('a', 'b')",
    "tags != 'a'",
    'checkInCount > 1',
    "cf.points BETWEEN 1 AND 3",
    "title LIKE 'a%'",
    "title ~ 'x'",
    "title = 'x'",
    'deadline = today',
    'kickoff = 2024-01-15',
    'cf.due = 2024-01-15',
    'app.sprint = now',
    'status = 5',
    'tags CONTAINS 5',
    'status IS NULL',
    'tags IS NULL',
    'assignee IS NOT NULL',
    'ORDER BY metadata.order ASC',
    '',
  ])('yields nothing for %j', (text) => {
    expect(actions(text)).toEqual([]);
  });

  it('walks only the top-level AND', () => {
    expect(actions("status = 'a' AND (tags CONTAINS 'x' OR assignee = 'u') AND NOT cf.p = 1 AND cf.q = 2")).toEqual([
      enter('status', 'set', 'a'), enter('metadata.cf.q', 'set', 2),
    ]);
  });
});

describe('andQueries', () => {
  it('ANDs the conditions, skipping empty parts, flattening nested ANDs', () => {
    const q = andQueries(parseQuery('x.a = 1 AND x.b = 2'), parseQuery(''), parseQuery('x.c = 3 OR x.d = 4'), parseQuery('x.e = 5'));
    expect(printQuery(q)).toBe('x.a = 1 AND x.b = 2 AND (x.c = 3 OR x.d = 4) AND x.e = 5');
    expect(q).toEqual(parseQuery(printQuery(q)));
  });

  it('takes the ORDER BY of the first part that has one', () => {
    expect(printQuery(andQueries(parseQuery('x.a = 1'), parseQuery('ORDER BY title ASC'), parseQuery('x.b = 2 ORDER BY id')))).toBe(
      'x.a = 1 AND x.b = 2 ORDER BY title ASC',
    );
  });

  it('returns the empty query for no parts and keeps a single condition as is', () => {
    expect(andQueries()).toEqual({ orderBy: [] });
    expect(andQueries(parseQuery(''), parseQuery("status = 'a'"))).toEqual(parseQuery("status = 'a'"));
  });
});

describe('buildEffectiveQuery (docs/architecture.md §7)', () => {
  it.each([
    [
      'column query, default tags, sprint and filter',
      { column: "status = 'todo'", defaultTags: ['q4', 'team'], sprintId: 's-1', filter: "title ~ 'login'" },
      "status = 'todo' AND 'q4' IN tags AND 'team' IN tags AND app.sprint = 's-1' AND title ~ 'login' ORDER BY metadata.order ASC",
    ],
    [
      'OR parts keep their parentheses; the column ORDER BY wins',
      { column: "status = 'a' OR status = 'b' ORDER BY updated_at ASC", defaultTags: [], filter: 'cf.p > 1 OR cf.p IS NULL' },
      "(status = 'a' OR status = 'b') AND (cf.p > 1 OR cf.p IS NULL) ORDER BY updated_at ASC",
    ],
    [
      'a column query that is only an ORDER BY, empty filter',
      { column: 'ORDER BY deadline ASC', defaultTags: ['x'], filter: '' },
      "'x' IN tags ORDER BY deadline ASC",
    ],
    ['nothing at all', { column: '', defaultTags: [] }, 'ORDER BY metadata.order ASC'],
    [
      'blank filter and canonical spelling of the parts',
      { column: "tags contains 'bug' order by metadata.order desc", defaultTags: ["it's"], sprintId: "o'neil", filter: '   ' },
      "tags CONTAINS 'bug' AND 'it\\'s' IN tags AND app.sprint = 'o\\'neil' ORDER BY metadata.order DESC",
    ],
  ])('%s', (_name, input, text) => {
    const built = buildEffectiveQuery(input);
    expect(built.text).toBe(text);
    expect(parseQuery(built.text)).toEqual(built.query);
  });

  const partError = (input: Parameters<typeof buildEffectiveQuery>[0]): AppError => thrown(() => buildEffectiveQuery(input));

  it('reports a filter error at its position in the filter text, with part=filter', () => {
    const e = partError({ column: "status = 'todo' AND tags CONTAINS 'x'", defaultTags: ['q4'], sprintId: 's1', filter: "title ~ 'x' AND" });
    expect(e.code).toBe('QUERY_SYNTAX');
    expect(e.details).toEqual({ position: 15, found: null, part: 'filter' });
    expect(e.message).toMatch(/^Filter: Unexpected end of query at position 15/);
  });

  it('rejects an ORDER BY in the filter (the column decides the order)', () => {
    const e = partError({ column: '', defaultTags: [], filter: "title = 'x' ORDER BY title" });
    expect(e.details).toEqual({ position: 12, found: 'ORDER', part: 'filter' });
  });

  it('names unknown fields of the filter and errors of the column query', () => {
    expect(partError({ column: "status = 'a'", defaultTags: [], filter: "titel ~ 'x'" }).details).toEqual({
      field: 'titel', position: 0, suggestion: 'title', part: 'filter',
    });
    const column = partError({ column: 'status = ', defaultTags: [], filter: "title ~ 'x'" });
    expect(column.code).toBe('QUERY_SYNTAX');
    expect(column.details).toEqual({ position: 9, found: null, part: 'column' });
    expect(column.message).toMatch(/^Column query: /);
    expect(partError({ column: 'x'.repeat(10_001), defaultTags: [] }).details).toMatchObject({ part: 'column' });
  });
});

describe('fieldPath', () => {
  it.each([
    ['id', '_id'],
    ['status', 'status'],
    ['created_at', 'created_at'],
    ['cf.priority', 'metadata.cf%2Epriority'],
    ['app.sprint', 'metadata.app%2Esprint'],
    ['metadata.app.sprint', 'metadata.app%2Esprint'],
    ['metadata.order', 'metadata.order'],
    ['team.lead', 'metadata.team%2Elead'],
    ['metadata.$x', 'metadata.%24x'],
    ['metadata.50%', 'metadata.50%25'],
  ])('%s → %s', (field, path) => {
    expect(fieldPath(field)).toBe(path);
  });

  it.each(['bogus', 'Status', 'metadata.__proto__'])('rejects %j with QUERY_UNKNOWN_FIELD', (field) => {
    expect(() => fieldPath(field)).toThrow(expect.objectContaining({ code: 'QUERY_UNKNOWN_FIELD' }));
  });
});

describe('queryMatches', () => {
  const doc = {
    _id: 't1', title: 'Fix bug', description: '', status: 'todo', path: '', tags: ['q4'], checkInCount: 0,
    metadata: { 'app%2Esprint': 's1', order: 2 }, created_at: '2026-03-01T00:00:00.000Z', created_by: 'u1',
    updated_at: '2026-03-01T00:00:00.000Z', updated_by: 'u1', deadline: '2026-03-15T09:00:00.000Z',
    linkedToIds: [], resourceIds: [], deleted: false,
  } satisfies TaskDoc;

  it('tests one stored task against the condition', () => {
    const now = new Date('2026-03-15T12:00:00.000Z');
    expect(queryMatches(parseQuery("status = 'todo' AND 'q4' IN tags AND app.sprint = 's1'"), doc, now)).toBe(true);
    expect(queryMatches(parseQuery("status = 'todo' AND app.sprint = 's2'"), doc, now)).toBe(false);
    expect(queryMatches(parseQuery('ORDER BY title'), doc, now)).toBe(true);
  });

  it('resolves dates against the given clock', () => {
    const q = parseQuery('deadline = today');
    expect(queryMatches(q, doc, new Date('2026-03-15T23:59:59.999Z'))).toBe(true);
    expect(queryMatches(q, doc, new Date('2026-03-16T00:00:00.000Z'))).toBe(false);
  });
});
