import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TaskDoc } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import {
  BUILTIN_FIELDS, compileQuery, hasCalls, materializeActions, MAX_NESTING, MAX_WILDCARD_RUNS, parseQuery, printQuery, queryMatches,
  type Expr, type OrderKey, type Pred, type Query, type Value,
} from '@app/shared/query';
import { thrown as errorOf } from '@app/shared/testing';

const NOW = new Date('2026-03-15T12:00:00.000Z');

const parseError = (text: string) => errorOf(() => parseQuery(text));

describe('parse: AST shapes', () => {
  it('parses the SPEC sample forms', () => {
    expect(parseQuery("status = 'todo' AND 'q4' IN tags AND title ~ \"callback\" ORDER BY metadata.order ASC")).toEqual({
      where: {
        type: 'and',
        items: [
          { type: 'cmp', field: 'status', op: '=', value: { type: 'string', value: 'todo' } },
          { type: 'has', value: { type: 'string', value: 'q4' }, field: 'tags' },
          { type: 'match', field: 'title', not: false, text: 'callback' },
        ],
      },
      orderBy: [{ field: 'metadata.order', dir: 'asc' }],
    });
  });

  it('binds AND tighter than OR and NOT tighter than AND', () => {
    const p = (f: string): Pred => ({ type: 'cmp', field: f, op: '=', value: { type: 'number', value: 1 } });
    expect(parseQuery('a.a = 1 OR NOT b.b = 1 AND c.c = 1').where).toEqual({
      type: 'or',
      items: [p('a.a'), { type: 'and', items: [{ type: 'not', expr: p('b.b') }, p('c.c')] }],
    });
  });

  it('reads the empty query, blank text and a query that is only an ORDER BY', () => {
    expect(parseQuery('')).toEqual({ orderBy: [] });
    expect(parseQuery(' \n\t ')).toEqual({ orderBy: [] });
    expect(parseQuery('order by deadline, title asc')).toEqual({
      orderBy: [{ field: 'deadline', dir: 'desc' }, { field: 'title', dir: 'asc' }],
    });
  });

  it('reads every value kind', () => {
    const values = parseQuery("x.v IN ('s', \"d\", 12, -3.5e2, true, FALSE, 2024-01-15, 2024-01-15T10:00:00+02:00, Today, now, +7d, -2m)");
    expect(values.where).toMatchObject({
      values: [
        { type: 'string', value: 's' }, { type: 'string', value: 'd' }, { type: 'number', value: 12 },
        { type: 'number', value: -350 }, { type: 'boolean', value: true }, { type: 'boolean', value: false },
        { type: 'date', value: '2024-01-15' }, { type: 'date', value: '2024-01-15T10:00:00+02:00' },
        { type: 'dateword', value: 'today' }, { type: 'dateword', value: 'now' },
        { type: 'relative', amount: 7, unit: 'd' }, { type: 'relative', amount: -2, unit: 'm' },
      ],
    });
  });

  it('unescapes strings: backslash escapes and doubled quotes', () => {
    const text = (q: string) => (parseQuery(q).where as { value: Value }).value;
    expect(text("x.s = 'it''s \\'ok\\' \\\\ \\n'")).toEqual({ type: 'string', value: "it's 'ok' \\ \n" });
    expect(text('x.s = "say ""hi"" \\"x\\""')).toEqual({ type: 'string', value: 'say "hi" "x"' });
  });

  it('reads quoted date text on date fields as a date, and keeps it a string elsewhere', () => {
    expect(parseQuery("deadline < '-7d'").where).toMatchObject({ value: { type: 'relative', amount: -7, unit: 'd' } });
    expect(parseQuery("kickoff = '2024-01-15'").where).toMatchObject({ value: { type: 'date', value: '2024-01-15' } });
    expect(parseQuery("created_at > 'today'").where).toMatchObject({ value: { type: 'dateword', value: 'today' } });
    expect(parseQuery("cf.due = '2024-01-15'").where).toMatchObject({ value: { type: 'string', value: '2024-01-15' } });
  });

  it('maps metadata field spellings to one canonical field', () => {
    const field = (q: string) => (parseQuery(q).where as { field: string }).field;
    expect(field('metadata.cf.priority = 1')).toBe('cf.priority');
    expect(field('cf.priority = 1')).toBe('cf.priority');
    expect(field('metadata.app.sprint = 1')).toBe('app.sprint');
    expect(field('metadata.order = 1')).toBe('metadata.order');
    expect(field('team.lead = 1')).toBe('team.lead');
    expect(field('metadata.metadata.x = 1')).toBe('metadata.metadata.x');
    expect(field('order.x = 1')).toBe('order.x');
    expect(field('metadata.größe = 1')).toBe('metadata.größe');
    expect(field('cf.story-points = 1')).toBe('cf.story-points');
  });
});

describe('parse errors', () => {
  it.each([
    ["status = 'todo' AND", 19, null, 'Unexpected end of query at position 19; expected "NOT", "(", value or field'],
    ["status = 'a' AND AND status = 'b'", 17, 'AND', 'Unexpected "AND" at position 17'],
    ['status = todo', 9, 'todo', 'Unexpected "todo" at position 9; expected value'],
    ['status IN ()', 11, ')', 'Unexpected ")" at position 11; expected value'],
    ["(status = 'a'", 13, null, 'Unexpected end of query at position 13'],
    ["status = 'a' )", 13, ')', 'Unexpected ")" at position 13; expected "AND", "OR", "ORDER" or end of query'],
    ["'x' = status", 4, '=', 'Unexpected "=" at position 4; expected "IN"'],
    ["status = 'a' ORDER title", 19, 'title', 'Unexpected "title" at position 19; expected "BY"'],
    ["title LIKE 5", 11, '5', 'Unexpected "5" at position 11; expected string'],
    ["status == 'a'", 8, "=", 'Unexpected "=" at position 8'],
    ["deadline = 'soon'", 11, "'soon'", 'deadline needs a date, not "\'soon\'" at position 11'],
    ['x.y = 2024-02-30', 6, '2024-02-30', 'Invalid date "2024-02-30" at position 6'],
    ['x.y = 2024-01-15T25:00Z', 6, '2024-01-15T25', 'Invalid date "2024-01-15T25:00Z" at position 6'],
    ['x.y = 1e999', 6, '1e999', 'Number out of range "1e999" at position 6'],
    ['$where = 1', 0, '$where', 'Unexpected "$where" at position 0'],
    ['metadata.__proto__ = 1', 0, 'metadata.__proto__', 'Metadata key "__proto__" is not allowed at position 0'],
  ] as const)('%j → QUERY_SYNTAX at %i', (text, position, found, message) => {
    const e = parseError(text);
    expect(e.code).toBe('QUERY_SYNTAX');
    expect(e.status).toBe(400);
    expect(e.details).toEqual({ position, found });
    expect(e.message.startsWith(message)).toBe(true);
  });

  it.each([
    ["Status = 'x'", 'Status', 0, 'status'],
    ["status = 'x' AND titel ~ 'y'", 'titel', 17, 'title'],
    ["'x' IN tag", 'tag', 7, 'tags'],
    ['checkincount > 1', 'checkincount', 0, 'checkInCount'],
    ['ORDER BY ordr', 'ordr', 9, 'metadata.order'],
    ["sprint = 's1'", 'sprint', 0, 'app.sprint'],
    ['priority = 1', 'priority', 0, 'cf.priority'],
  ] as const)('%j → QUERY_UNKNOWN_FIELD %s at %i, suggesting %s', (text, field, position, suggestion) => {
    const e = parseError(text);
    expect(e.code).toBe('QUERY_UNKNOWN_FIELD');
    expect(e.status).toBe(400);
    expect(e.details).toEqual({ field, position, suggestion });
    expect(e.message).toBe(`Unknown field "${field}" at position ${position}; did you mean "${suggestion}"?`);
  });

  it('limits the text to 10,000 characters', () => {
    const exact = `title = '${'x'.repeat(9990)}'`;
    expect(exact).toHaveLength(10_000);
    expect(parseQuery(exact).where).toMatchObject({ value: { value: 'x'.repeat(9990) } });
    const e = parseError(`${exact} `);
    expect(e.code).toBe('QUERY_TOO_LONG');
    expect(e.details).toEqual({ length: 10_001, max: 10_000 });
  });

  it(`caps nesting at ${MAX_NESTING} levels of parentheses or NOT, with a 400 QUERY_TOO_COSTLY at the level too deep`, () => {
    const nested = (n: number) => `${'('.repeat(n)}x.y = 1${')'.repeat(n)}`;
    const at = (text: string) => {
      const e = parseError(text);
      expect(e.code).toBe('QUERY_TOO_COSTLY');
      expect(e.details).toMatchObject({ rule: 'nesting', limit: MAX_NESTING });
      return e.details?.position;
    };
    expect(parseQuery(nested(MAX_NESTING)).where).toMatchObject({ type: 'cmp' });
    expect(at(nested(MAX_NESTING + 1))).toBe(MAX_NESTING);
    expect(at('('.repeat(10_000))).toBe(MAX_NESTING);
    expect(at(nested(4996))).toBe(MAX_NESTING);
    expect(parseQuery(`${'NOT '.repeat(MAX_NESTING)}x.y = 1`).where).toMatchObject({ type: 'not' });
    expect(at(`${'NOT '.repeat(2400)}x.y = 1`)).toBe(4 * MAX_NESTING);
    // levels alternate NOT (at 5k) and "(" (at 5k + 4): level 2k + 1 is the NOT at 5k
    expect(at(`${'NOT ('.repeat(40)}x.y = 1${')'.repeat(40)}`)).toBe(5 * (MAX_NESTING / 2));
    expect(parseError(`${'NOT ('.repeat(40)}x.y = 1${')'.repeat(40)}`).message).toContain(`at position ${5 * (MAX_NESTING / 2)}`);
  });

  it('parses long flat chains without recursion limits', () => {
    const text = `x.y = 1${' OR x.y = 2'.repeat(900)}`;
    expect((parseQuery(text).where as { items: Expr[] }).items).toHaveLength(901);
  });
});

describe('printer: canonical form', () => {
  it.each([
    ["status='todo' and 'q4' in tags order by metadata.order", "status = 'todo' AND 'q4' IN tags ORDER BY metadata.order DESC"],
    ['title ~ "it\'s"', "title ~ 'it\\'s'"],
    ["title = 'back\\\\slash'", "title = 'back\\\\slash'"],
    ['((x.a = 1))', 'x.a = 1'],
    ['x.a = 1 AND (x.b = 2 AND x.c = 3)', 'x.a = 1 AND x.b = 2 AND x.c = 3'],
    ['x.a = 1 AND (x.b = 2 OR x.c = 3)', 'x.a = 1 AND (x.b = 2 OR x.c = 3)'],
    ['(x.a = 1 AND x.b = 2) OR x.c = 3', 'x.a = 1 AND x.b = 2 OR x.c = 3'],
    ['(x.a = 1 OR x.b = 2) OR x.c = 3', 'x.a = 1 OR x.b = 2 OR x.c = 3'],
    ['NOT (x.a = 1)', 'NOT x.a = 1'],
    ['NOT (x.a = 1 AND x.b = 2)', 'NOT (x.a = 1 AND x.b = 2)'],
    ['not not x.a = 1', 'NOT NOT x.a = 1'],
    ["metadata.cf.priority = 'x'", "cf.priority = 'x'"],
    ["deadline < '-7d' AND kickoff = \"2024-01-15\" AND created_at > TODAY", 'deadline < -7d AND kickoff = 2024-01-15 AND created_at > today'],
    ['x.y IN (1, 2.50, -3e2, 1e21)', 'x.y IN (1, 2.5, -300, 1e+21)'],
    ['cf.ok = TRUE', 'cf.ok = true'],
    ["title not like 'a%' and title ilike '_b'", "title NOT LIKE 'a%' AND title ILIKE '_b'"],
    ['assignee is not null and path is null', 'assignee IS NOT NULL AND path IS NULL'],
    ["tags contains 'a' and tags contains_all ('a','b') and tags not in ('c')", "tags CONTAINS 'a' AND tags CONTAINS_ALL ('a', 'b') AND tags NOT IN ('c')"],
    ['title !~ "x" and checkInCount between 1 and 2', "title !~ 'x' AND checkInCount BETWEEN 1 AND 2"],
    ['ORDER BY title asc, id', 'ORDER BY title ASC, id DESC'],
    ['', ''],
  ])('%j → %j', (text, canonical) => {
    expect(printQuery(parseQuery(text))).toBe(canonical);
  });
});

// ---- generated ASTs --------------------------------------------------------------------------

const DATE_FIELDS = new Set(['kickoff', 'deadline', 'created_at', 'updated_at']);

const keySegment = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_$-]{1,8}$/),
  fc.constantFrom('größe', 'ключ', 'NOT', 'order', 'metadata', 'today', 'IN'),
);
const metadataFieldArb = fc
  .array(keySegment, { minLength: 1, maxLength: 3 })
  .map((segs) => segs.join('.'))
  .filter((key) => key !== '__proto__')
  .map((key) => (/^[A-Za-z_][A-Za-z0-9_]*\./.test(key) && !key.startsWith('metadata.') ? key : `metadata.${key}`));
const fieldArb = fc.oneof(fc.constantFrom(...BUILTIN_FIELDS), metadataFieldArb);

const isoArb = fc
  .date({ min: new Date('0000-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true })
  .chain((d) => {
    const iso = d.toISOString();
    return fc.constantFrom(iso.slice(0, 10), iso, `${iso.slice(0, 16)}+05:30`, `${iso.slice(0, 19)}-11:00`);
  });
const dateValueArb: fc.Arbitrary<Value> = fc.oneof(
  isoArb.map((value): Value => ({ type: 'date', value })),
  fc.constantFrom('today', 'yesterday', 'tomorrow', 'now').map((value): Value => ({ type: 'dateword', value })),
  fc.record({ amount: fc.integer({ min: -999_999, max: 999_999 }), unit: fc.constantFrom('d', 'w', 'm', 'y') })
    .map(({ amount, unit }): Value => ({ type: 'relative', amount, unit })),
);
const relativeArb = fc.record({ amount: fc.integer({ min: -999, max: 999 }), unit: fc.constantFrom('d', 'w', 'm', 'y') })
  .map(({ amount, unit }): Value => ({ type: 'relative', amount, unit }));
const callArb: fc.Arbitrary<Value> = fc.oneof(
  fc.constant<Value>({ type: 'call', name: 'me', args: [] }),
  fc.option(fc.string({ unit: 'binary', maxLength: 8 }), { nil: undefined })
    .map((b): Value => ({ type: 'call', name: 'activeSprint', args: b === undefined ? [] : [{ type: 'string', value: b }] })),
  fc.record({
    name: fc.constantFrom('startOfDay', 'startOfWeek', 'startOfMonth', 'endOfDay', 'endOfWeek', 'endOfMonth'),
    shift: fc.option(relativeArb, { nil: undefined }),
  }).map(({ name, shift }): Value => ({ type: 'call', name, args: shift ? [shift] : [] })),
);
const listCallArb = fc.constantFrom('openSprints', 'closedSprints').map((name): Value => ({ type: 'call', name, args: [] }));
const valueArb: fc.Arbitrary<Value> = fc.oneof(
  callArb,
  fc.string({ unit: 'binary', maxLength: 12 }).map((value): Value => ({ type: 'string', value })),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n): Value => ({ type: 'number', value: n === 0 ? 0 : n })),
  fc.boolean().map((value): Value => ({ type: 'boolean', value })),
  dateValueArb,
);
/** A value as the parser produces it for `field`: strings on date fields are always dates. */
const valueFor = (field: string): fc.Arbitrary<Value> =>
  DATE_FIELDS.has(field) ? fc.oneof(valueArb.filter((v) => v.type !== 'string'), dateValueArb) : valueArb;
const listFor = (field: string) => fc.array(valueFor(field), { minLength: 1, maxLength: 3 });
const inListFor = (field: string) => fc.oneof(listFor(field), fc.array(fc.oneof(valueFor(field), listCallArb), { minLength: 1, maxLength: 3 }));
const textArb = fc.string({ unit: 'binary', maxLength: 12 });

const predArb: fc.Arbitrary<Pred> = fieldArb.chain((field) =>
  fc.oneof(
    fc.record({ op: fc.constantFrom('=', '!=', '<', '<=', '>', '>='), value: valueFor(field) }).map(({ op, value }): Pred => ({ type: 'cmp', field, op, value })),
    fc.record({ not: fc.boolean(), values: inListFor(field) }).map(({ not, values }): Pred => ({ type: 'in', field, not, values })),
    valueFor(field).map((value): Pred => ({ type: 'has', value, field })),
    valueFor(field).map((value): Pred => ({ type: 'contains', field, value })),
    listFor(field).map((values): Pred => ({ type: 'containsAll', field, values })),
    fc.record({ not: fc.boolean(), caseInsensitive: fc.boolean(), pattern: textArb }).map((r): Pred => ({ type: 'like', field, ...r })),
    fc.record({ not: fc.boolean(), text: textArb }).map((r): Pred => ({ type: 'match', field, ...r })),
    fc.boolean().map((not): Pred => ({ type: 'null', field, not })),
    fc.record({ low: valueFor(field), high: valueFor(field) }).map(({ low, high }): Pred => ({ type: 'between', field, low, high })),
  ),
);

const depth = { maxDepth: 3, depthIdentifier: 'expr' } as const;
const { expr: exprArb } = fc.letrec<{ expr: Expr; and: Expr; or: Expr; not: Expr }>((tie) => ({
  expr: fc.oneof(depth, predArb, tie('and'), tie('or'), tie('not')),
  and: fc.array(fc.oneof(depth, predArb, tie('or'), tie('not')), { minLength: 2, maxLength: 3 }).map((items): Expr => ({ type: 'and', items })),
  or: fc.array(fc.oneof(depth, predArb, tie('and'), tie('not')), { minLength: 2, maxLength: 3 }).map((items): Expr => ({ type: 'or', items })),
  not: tie('expr').map((expr): Expr => ({ type: 'not', expr })),
}));
const orderKeyArb = fc
  .record({ field: fieldArb, dir: fc.constantFrom('asc', 'desc') })
  .map(({ field, dir }): OrderKey => ({ field, dir }));
const queryArb: fc.Arbitrary<Query> = fc
  .record({ where: fc.option(exprArb, { nil: undefined }), orderBy: fc.array(orderKeyArb, { maxLength: 3 }) })
  .map(({ where, orderBy }) => (where ? { where, orderBy } : { orderBy }));

describe('printer: parse(print(ast)) deep-equals ast', () => {
  it('holds for generated ASTs', () => {
    fc.assert(
      fc.property(queryArb, (q) => {
        expect(parseQuery(printQuery(q))).toStrictEqual(q);
      }),
      { numRuns: 1500 },
    );
  });
});

// ---- robustness and safety -------------------------------------------------------------------

const DOCS = [
  { _id: 'a', title: 'Alpha', description: '', status: 'todo', path: '', tags: ['x'], checkInCount: 1, metadata: { 'cf%2Ex': 1 } },
  { _id: 'b', title: 'Beta', description: '{"$gt": ""}', status: 'done', path: '/p', tags: [], checkInCount: 0, metadata: {}, deadline: '2026-03-15T00:00:00.000Z' },
] as unknown as TaskDoc[];

/** Operators a compiled filter may use (a subset of the store port's, docs/architecture.md §2). */
const OPERATORS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$all', '$regex', '$options', '$and', '$or', '$nor', '$size']);

/** Every `$` key is a known operator, no path segment starts with `$`, every regex compiles. */
function expectSafeFilter(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(expectSafeFilter);
  if (node === null || typeof node !== 'object') return;
  for (const [key, v] of Object.entries(node)) {
    if (key.startsWith('$')) expect(OPERATORS.has(key), key).toBe(true);
    else expect(key.split('.').every((seg) => !seg.startsWith('$')), key).toBe(true);
    if (key === '$regex') {
      expect(() => new RegExp(v as string)).not.toThrow();
      expect(v).not.toContain('\0');
    }
    if (key === '$options') expect(v).toBe('i');
    expectSafeFilter(v);
  }
}

/** Any input either parses into a query that compiles, evaluates and reprints, or throws a 400. */
function expectTotal(text: string): void {
  let q: Query;
  try {
    q = parseQuery(text);
  } catch (e) {
    expect(AppError.is(e), String(e)).toBe(true);
    const err = e as AppError;
    expect(err.status).toBe(400);
    expect(['QUERY_SYNTAX', 'QUERY_UNKNOWN_FIELD', 'QUERY_UNKNOWN_FUNCTION', 'QUERY_TOO_LONG', 'QUERY_TOO_COSTLY']).toContain(err.code);
    if (err.code !== 'QUERY_TOO_LONG') {
      const position = err.details?.position as number;
      expect(Number.isInteger(position) && position >= 0 && position <= text.length).toBe(true);
    }
    return;
  }
  expect(parseQuery(printQuery(q))).toStrictEqual(q);
  if (hasCalls(q)) return; // compiled only once resolved (query-functions.test.ts)
  const { filter } = compileQuery(q, { now: NOW });
  expectSafeFilter(filter);
  for (const doc of DOCS) expect(typeof queryMatches(q, doc, NOW)).toBe('boolean');
  materializeActions(q);
  expect(parseQuery(printQuery(q))).toStrictEqual(q);
}

const TOKENS = [
  'status', 'title', 'tags', 'deadline', 'id', 'cf.x', 'app.sprint', 'metadata.order', 'x.y', 'Status', 'foo', 'AND', 'or',
  'NOT', 'IN', 'IS', 'NULL', 'LIKE', 'ILIKE', 'BETWEEN', 'CONTAINS', 'CONTAINS_ALL', 'ORDER', 'BY', 'ASC', 'desc', '(', ')',
  ',', '=', '!=', '<', '<=', '>', '>=', '~', '!~', "'a'", '"b"', "'it''s'", "'\\''", "'%a_'", '1', '-2.5', '1e999', 'true',
  'today', 'now', '+7d', '-1m', '2024-01-15', '2024-02-30', '2024-01-15T10:00:00Z', "'2024-01-15'", "'-7d'", '$where',
  '{"$gt": ""}', 'metadata.$where', 'cf.$ne', '%', '_', '__proto__', 'metadata.__proto__', 'cf.__proto__', 'constructor.x',
  '.', '$', '\\', "'", '"', '\n', '\u0000', 'me()', 'ME ( )', 'openSprints()', 'activeSprint', "activeSprint('b1')", 'startOfWeek(-1w)',
  'endOfMonth', '+2d)', 'currentSprint()', 'me(', 'startOfDay(1)',
];

describe('robustness: any input is a query or a 400', () => {
  it('arbitrary strings', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 60 }), expectTotal), { numRuns: 1000 });
  });

  it('token soups', () => {
    const soup = fc.tuple(fc.array(fc.constantFrom(...TOKENS), { maxLength: 14 }), fc.constantFrom(' ', '')).map(([ts, sep]) => ts.join(sep));
    fc.assert(fc.property(soup, expectTotal), { numRuns: 3000 });
  });

  it.each([
    ["title = '{\"$gt\": \"\"}'"],
    ['description = \'{"$where": "sleep(1000)"}\''],
    ['metadata.$where = 1'],
    ["cf.$ne = 'x' OR metadata.$or = 1"],
    ["title ~ '.*' AND title LIKE '(a+)+$'"],
    ["'$where' IN tags"],
    ['constructor.prototype = 1'],
    ['metadata.constructor = 1 ORDER BY metadata.constructor'],
    ['('.repeat(10_000)],
    [`${'('.repeat(4996)}x.y = 1${')'.repeat(4996)}`],
    ['x'.repeat(10_000)],
    ['x'.repeat(10_001)],
    [`title = '${'\\'.repeat(5000)}`],
  ])('injection or abuse %#', (text) => expectTotal(text));

  it('keeps injected text literal', () => {
    expect(compileQuery(parseQuery("title = '{\"$gt\": \"\"}'"), { now: NOW }).filter).toEqual({ title: { $eq: '{"$gt": ""}' } });
    expect(compileQuery(parseQuery("metadata.$where = 'x'"), { now: NOW }).filter).toEqual({ 'metadata.%24where': { $eq: 'x' } });
    expect(compileQuery(parseQuery('cf.a.b = 1'), { now: NOW }).filter).toEqual({ 'metadata.cf%2Ea%2Eb': { $eq: 1 } });
    expect(compileQuery(parseQuery("title ~ '.*(x)'"), { now: NOW }).filter).toEqual({ title: { $regex: '\\.\\*\\(x\\)', $options: 'i' } });
    const nul = parseQuery("title ~ 'a\u0000b' OR title LIKE '%\u0000'");
    expect(compileQuery(nul, { now: NOW }).filter).toEqual({
      $or: [{ title: { $regex: 'a\\x00b', $options: 'i' } }, { title: { $regex: '^[\\s\\S]*\\x00(?![\\s\\S])' } }],
    });
    expect(queryMatches(nul, { ...DOCS[0]!, title: 'xa\u0000b' }, NOW)).toBe(true);
  });
});

/** Reference LIKE semantics (dynamic programming): `%` any run, `_` one character. */
function likeReference(pattern: string, text: string): boolean {
  let row = [true, ...Array.from(text, () => false)];
  for (const p of pattern) {
    const next = [p === '%' && row[0]!];
    for (let j = 1; j <= text.length; j++) {
      next[j] = p === '%' ? row[j]! || next[j - 1]! : row[j - 1]! && (p === '_' || p === text[j - 1]);
    }
    row = next;
  }
  return row[text.length]!;
}

describe('LIKE regex', () => {
  const withTitle = (title: string) => ({ ...DOCS[0]!, title });
  it('agrees with the reference LIKE semantics', () => {
    const pattern = fc.array(fc.constantFrom('a', 'b', '%', '_'), { maxLength: 8 }).map((cs) => cs.join(''));
    const text = fc.array(fc.constantFrom('a', 'b'), { maxLength: 12 }).map((cs) => cs.join(''));
    fc.assert(
      fc.property(pattern, text, (p, t) => {
        expect(queryMatches(parseQuery(`title LIKE '${p}'`), withTitle(t), NOW)).toBe(likeReference(p, t));
      }),
      { numRuns: 3000 },
    );
  });

  it('stays linear on patterns that make naive regexes backtrack exponentially', () => {
    const long = 'a'.repeat(30_000);
    expect(queryMatches(parseQuery(`title LIKE '${'%a'.repeat(MAX_WILDCARD_RUNS - 1)}%b'`), withTitle(long), NOW)).toBe(false);
    expect(queryMatches(parseQuery(`title ILIKE '${'%A'.repeat(MAX_WILDCARD_RUNS - 1)}%'`), withTitle(long), NOW)).toBe(true);
    expect(queryMatches(parseQuery(`title LIKE '${'_%'.repeat(400)}b'`), withTitle(long), NOW)).toBe(false);
    expect(queryMatches(parseQuery(`title LIKE '${'%_'.repeat(499)}%'`), withTitle(long), NOW)).toBe(true);
  });
});

describe('parse cache', () => {
  it('gives the same tree for a repeated text, shared read-only, and fails a bad text every time', () => {
    const text = "status = 'doing' AND 'dev' IN tags ORDER BY metadata.order ASC";
    const first = parseQuery(text);
    const again = parseQuery(text);
    expect(again).toEqual(first);
    // callers share cached trees: changing one is refused instead of corrupting later parses
    expect(() => {
      (again as { orderBy: unknown[] }).orderBy.push('x');
    }).toThrow(TypeError);
    expect(printQuery(parseQuery(text))).toBe(printQuery(first));
    const bad = "status = 'doing' AND";
    expect(errorOf(() => parseQuery(bad)).code).toBe('QUERY_SYNTAX');
    expect(errorOf(() => parseQuery(bad)).details).toEqual(errorOf(() => parseQuery(bad)).details);
  });

  it('compiles a cached query with date words against each request\'s now, and others once', () => {
    const dated = parseQuery('created_at >= today');
    const later = new Date('2026-03-20T12:00:00.000Z');
    expect(JSON.stringify(compileQuery(parseQuery('created_at >= today'), { now: later }))).not.toBe(
      JSON.stringify(compileQuery(dated, { now: NOW })),
    );
    const plain = parseQuery("status = 'doing'");
    expect(compileQuery(plain, { now: later })).toEqual(compileQuery(plain, { now: NOW }));
  });

  it('parses texts longer than the cached length the same way', () => {
    const long = `${Array.from({ length: 150 }, (_, i) => `title = 't${i}'`).join(' OR ')} ORDER BY title ASC`;
    expect(long.length).toBeGreaterThan(2_000);
    expect(printQuery(parseQuery(long))).toBe(printQuery(parseQuery(long)));
    expect(Object.isFrozen(parseQuery(long))).toBe(false);
  });
});
