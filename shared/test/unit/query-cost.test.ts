import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { MongoServerError } from 'mongodb';
import { afterAll, describe, expect, it } from 'vitest';
import type { TaskDoc } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import {
  checkSortDepth, compileQuery, likeToRegex, MAX_LIST_VALUES, MAX_NESTING, MAX_PATTERN_LENGTH, MAX_TEXT_SORT_OFFSET, MAX_WILDCARD_RUNS, parseQuery, queryMatches, validateQuery,
} from '@app/shared/query';
import { compileFilter, EmbeddedStore, QUERY_TIME_LIMIT_MS, type Doc, type Filter } from '@app/shared/store';
import { MongoCollection } from '../../src/store/mongo/mongo-store.js';
import { thrown as errorOf } from '@app/shared/testing';

/**
 * What a query may cost (docs/query-language.md "Safety"): LIKE / ILIKE patterns and `~` texts
 * within documented limits, checked where the query is parsed; matching without a backtracking
 * engine in the embedded store; and a time limit on every read on both stores (`QUERY_TIMEOUT`).
 */

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const NOW = new Date('2026-03-02T09:00:00.000Z');
const task = (title: string): TaskDoc => ({ _id: 't', title, status: 'todo', tags: [], deleted: false, created_at: NOW.toISOString() }) as unknown as TaskDoc;
const PROBE = `title LIKE '${'%_'.repeat(2500)}'`;

describe('cost limits: a query of plainly unbounded cost is a 400 naming the rule and its position', () => {
  const costly = (f: () => unknown) => {
    const e = errorOf(f);
    expect([e.code, e.status]).toEqual(['QUERY_TOO_COSTLY', 400]);
    return e;
  };

  it(`refuses nesting past ${MAX_NESTING} levels at the "(" or NOT too deep`, () => {
    const text = `status = 'todo' AND ${'('.repeat(60)}title = 'a' OR title = 'b'${')'.repeat(60)}`;
    const e = costly(() => parseQuery(text));
    expect(e.details).toEqual({ rule: 'nesting', limit: MAX_NESTING, position: 20 + MAX_NESTING });
    expect(e.message).toContain(`at position ${20 + MAX_NESTING}`);
    expect(validateQuery(text, { board: false }).errors[0]).toMatchObject({ code: 'QUERY_TOO_COSTLY', position: 20 + MAX_NESTING });
    expect(() => parseQuery(`${'('.repeat(MAX_NESTING)}title = 'a'${')'.repeat(MAX_NESTING)}`)).not.toThrow();
  });

  it(`refuses an IN or CONTAINS_ALL list of more than ${MAX_LIST_VALUES} values at its "("`, () => {
    const list = (n: number) => `(${Array.from({ length: n }, (_, i) => i).join(', ')})`;
    expect(() => parseQuery(`cf.x IN ${list(MAX_LIST_VALUES)}`)).not.toThrow();
    const e = costly(() => parseQuery(`status = 'todo' AND cf.x IN ${list(1000)}`));
    expect(e.details).toEqual({ rule: 'list-size', limit: MAX_LIST_VALUES, position: 28, count: 1000 });
    expect(costly(() => parseQuery(`cf.x NOT IN ${list(MAX_LIST_VALUES + 1)}`)).details?.position).toBe(12);
    const tags = `(${Array.from({ length: MAX_LIST_VALUES + 1 }, (_, i) => `'t${i}'`).join(', ')})`;
    expect(costly(() => parseQuery(`tags CONTAINS_ALL ${tags}`)).details?.position).toBe(18);
  });

  it(`refuses a LIKE of more than ${MAX_WILDCARD_RUNS} wildcard runs at its pattern (the probe %a%e%i%o%u…%zzz)`, () => {
    const text = `NOT (description ILIKE '${'aeiouxyzbcdfg'.split('').map((c) => `%${c}`).join('')}%zzz')`;
    const e = costly(() => parseQuery(text));
    expect(e.details).toMatchObject({ rule: 'wildcard-runs', limit: MAX_WILDCARD_RUNS, position: 23, runs: 14 });
  });

  it(`refuses a page past row ${MAX_TEXT_SORT_OFFSET} sorted by title or description, at the ORDER BY key`, () => {
    const q = parseQuery(`description !~ 'zzz' ORDER BY description DESC`);
    expect(() => checkSortDepth(q, MAX_TEXT_SORT_OFFSET)).not.toThrow();
    const e = costly(() => checkSortDepth(q, 199 * 200));
    expect(e.details).toEqual({ rule: 'text-sort-depth', limit: MAX_TEXT_SORT_OFFSET, position: 30, offset: 39_800 });
    expect(costly(() => checkSortDepth(parseQuery('ORDER BY status ASC, title'), 5_000)).details?.position).toBe(21);
    // an indexed sort pages as deep as it likes; a sort given beside the query is checked as well
    expect(() => checkSortDepth(parseQuery('ORDER BY updated_at DESC'), 1_000_000)).not.toThrow();
    expect(costly(() => checkSortDepth(parseQuery(''), 5_000, 'title')).details).toMatchObject({ field: '/sort/column' });
  });
});

describe('pattern limits, checked where the query is parsed', () => {
  it("refuses the probe `title LIKE '%_%_…'` (5,000 characters) with QUERY_SYNTAX at the pattern's position, in validate too", () => {
    const e = errorOf(() => parseQuery(PROBE));
    expect([e.code, e.status, e.details?.position]).toEqual(['QUERY_SYNTAX', 400, 11]);
    expect(e.message).toContain(`at most ${MAX_PATTERN_LENGTH}`);
    const v = validateQuery(PROBE, { board: false });
    expect(v.valid).toBe(false);
    expect(v.errors[0]).toMatchObject({ code: 'QUERY_SYNTAX', position: 11 });
  });

  it(`allows ${MAX_PATTERN_LENGTH} characters and ${MAX_WILDCARD_RUNS} wildcard runs, and no more`, () => {
    const runs = (n: number) => Array.from({ length: n }, () => 'a%').join('');
    expect(() => parseQuery(`title LIKE '${runs(MAX_WILDCARD_RUNS)}'`)).not.toThrow();
    const many = errorOf(() => parseQuery(`title ILIKE '${runs(MAX_WILDCARD_RUNS + 1)}'`));
    expect([many.code, many.status, many.details?.position, many.details?.rule]).toEqual(['QUERY_TOO_COSTLY', 400, 12, 'wildcard-runs']);
    expect(many.message).toContain('wildcard runs');
    // a run is a stretch of % and _: `%_%_` is one, an escaped one is a literal
    expect(() => parseQuery(`title LIKE 'a${'%_'.repeat(400)}b'`)).not.toThrow();
    expect(() => parseQuery(`title LIKE '${'a\\\\%'.repeat(40)}'`)).not.toThrow();
    expect(() => parseQuery(`title LIKE '${'x'.repeat(MAX_PATTERN_LENGTH)}'`)).not.toThrow();
    expect(errorOf(() => parseQuery(`title LIKE '${'x'.repeat(MAX_PATTERN_LENGTH + 1)}'`)).code).toBe('QUERY_SYNTAX');
    const tilde = errorOf(() => parseQuery(`status = 'todo' AND description ~ '${'.'.repeat(MAX_PATTERN_LENGTH + 1)}'`));
    expect([tilde.code, tilde.details?.position]).toEqual(['QUERY_SYNTAX', 34]);
    expect(() => parseQuery(`description !~ '${'.'.repeat(MAX_PATTERN_LENGTH)}'`)).not.toThrow();
  });

  it("keeps every accepted pattern's $regex far below MongoDB's PCRE2 limit (under 8 KB)", () => {
    const worst = [
      '_'.repeat(MAX_PATTERN_LENGTH),
      ('%' + '_'.repeat(29)).repeat(MAX_WILDCARD_RUNS).slice(0, MAX_PATTERN_LENGTH),
      '\u0000'.repeat(MAX_PATTERN_LENGTH),
      ('%' + '.'.repeat(30)).repeat(MAX_WILDCARD_RUNS).slice(0, MAX_PATTERN_LENGTH),
    ];
    for (const p of worst) {
      const { filter } = compileQuery(parseQuery(`title LIKE '${p.replace(/\u0000/g, '\\0')}'`.replace('\\0', '\u0000').replace(/\\0/g, '\u0000')), { now: NOW });
      expect(((filter.title as { $regex: string }).$regex).length).toBeLessThan(8192);
    }
    const { filter } = compileQuery(parseQuery(`title ~ '${'('.repeat(MAX_PATTERN_LENGTH)}'`), { now: NOW });
    expect(((filter.title as { $regex: string }).$regex).length).toBeLessThan(8192);
  });
});

/** Reference LIKE semantics over code points (dynamic programming): `%` any run, `_` one character. */
function likeReference(pattern: string, text: string): boolean {
  const t = Array.from(text);
  let row = [true, ...t.map(() => false)];
  for (const p of pattern) {
    const next = [p === '%' && row[0]!];
    for (let j = 1; j <= t.length; j++) next[j] = p === '%' ? row[j]! || next[j - 1]! : row[j - 1]! && (p === '_' || p === t[j - 1]);
    row = next;
  }
  return row[t.length]!;
}

describe('LIKE matching on both stores', () => {
  it('the embedded matcher and the $regex MongoDB runs (PCRE2: one code point per _, as a /u regex) agree with the reference, newlines included', () => {
    const pattern = fc.array(fc.constantFrom('a', 'b', '%', '_', '\n'), { maxLength: 8 }).map((cs) => cs.join(''));
    const text = fc.array(fc.constantFrom('a', 'b', '\n', '😀'), { maxLength: 10 }).map((cs) => cs.join(''));
    fc.assert(
      fc.property(pattern, text, (p, t) => {
        const expected = likeReference(p, t);
        expect(compileFilter({ title: { $regex: likeToRegex(p) } })({ _id: 'x', title: t })).toBe(expected);
        expect(new RegExp(likeToRegex(p), 'u').test(t)).toBe(expected);
      }),
      { numRuns: 3000 },
    );
  });

  it("a pattern's end is the end of the text, not a final newline (PCRE2's `$` would skip it)", () => {
    expect(queryMatches(parseQuery("title LIKE 'abc'"), task('abc\n'), NOW)).toBe(false);
    expect(queryMatches(parseQuery("title ILIKE '%C'"), task('abc\n'), NOW)).toBe(false);
    expect(queryMatches(parseQuery("title LIKE 'abc_'"), task('abc\n'), NOW)).toBe(true);
    expect(likeToRegex('abc')).toBe('^abc(?![\\s\\S])');
  });

  it('matches the worst accepted patterns against 64 KB of text without a regular expression, quickly and without overflowing the stack', () => {
    const text = 'a'.repeat(65_536);
    const worst = `title LIKE '${('%' + 'a'.repeat(30)).repeat(MAX_WILDCARD_RUNS - 1)}%b'`;
    expect(queryMatches(parseQuery(worst), task(text), NOW)).toBe(false);
    expect(queryMatches(parseQuery(`title ILIKE '${'%_'.repeat(499)}%'`), task(text), NOW)).toBe(true);
    expect(compileFilter({ title: { $regex: likeToRegex('%_'.repeat(2500)) } })({ _id: 'x', title: text })).toBe(true);
  });
});

describe('ILIKE and ~ fold case as MongoDB (PCRE2 in UTF mode) does', () => {
  it('ſ matches s, the Kelvin sign k, the Angstrom sign å; İ and ı only themselves', () => {
    const m = (q: string, title: string) => queryMatches(parseQuery(q), task(title), NOW);
    expect(m("title ILIKE 'S'", 'ſ')).toBe(true);
    expect(m("title ~ 'kelvin'", '\u212aelvin')).toBe(true);
    expect(m("title ILIKE '%\u212b%'", 'å')).toBe(true);
    expect(m("title ~ 'ÅNGSTRÖM'", 'ångström')).toBe(true);
    expect(m("title ~ 'σ'", 'ς')).toBe(true);
    expect(m("title ILIKE 'i'", 'İ')).toBe(false);
    expect(m("title ILIKE 'i'", 'ı')).toBe(false);
    expect(m("title LIKE 's'", 'ſ')).toBe(false);
    expect(m("title !~ 'S'", 'ſ')).toBe(false);
  });
});

describe('the text-search cache', () => {
  it('the probe pattern, kept as a search, never breaks a later write (a create and a title change both answer)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'query-cost-'));
    dirs.push(dir);
    const store = await EmbeddedStore.open({ dir });
    try {
      const tasks = store.collection('tasks');
      await tasks.insertOne({ _id: 'a', title: 'first task' });
      // what the probe query compiled to before its length was refused; a filter reaching the store directly still may
      const probe: Filter = { title: { $regex: likeToRegex('%_'.repeat(2500)) } };
      const cheap: Filter = { title: { $regex: likeToRegex('%task%') } };
      expect((await tasks.find(probe)).map((d) => d._id)).toEqual([]);
      expect((await tasks.find(cheap)).map((d) => d._id)).toEqual(['a']);
      await tasks.insertOne({ _id: 'b', title: 'x'.repeat(3000) });
      await tasks.insertOne({ _id: 'c', title: 'short' });
      await tasks.updateOne({ _id: 'a' }, { $set: { title: 'first task, renamed' } });
      expect((await tasks.find(probe)).map((d) => d._id)).toEqual(['b']);
      expect((await tasks.find(cheap)).map((d) => d._id)).toEqual(['a']);
    } finally {
      await store.close();
    }
  });
});

describe('a time limit on every read', () => {
  it('the embedded store stops a scan past its limit with QUERY_TIMEOUT (503) and answers the next call', async () => {
    const store = EmbeddedStore.memory({ queryTimeLimitMs: 0 });
    const docs = store.collection('docs');
    await docs.insertMany(Array.from({ length: 3000 }, (_, i) => ({ _id: `d${i}`, title: `title ${i}` })));
    const scan: Filter = { title: { $regex: 'zzz', $options: 'i' } };
    for (const call of [() => docs.find(scan), () => docs.countDocuments(scan), () => docs.find(scan, { sort: { title: 1 }, limit: 5 })]) {
      const e = await call().then(() => undefined, (err: unknown) => err);
      expect(AppError.is(e) && [e.code, e.status]).toEqual(['QUERY_TIMEOUT', 503]);
    }
    // a read by id examines one document; writes are not timed
    expect(await docs.findOne({ _id: 'd7' })).toMatchObject({ title: 'title 7' });
    await docs.updateMany(scan, { $set: { seen: true } });
    await store.close();
    const roomy = EmbeddedStore.memory();
    await roomy.collection('docs').insertMany(Array.from({ length: 3000 }, (_, i) => ({ _id: `d${i}`, title: `title ${i}` })));
    expect(await roomy.collection('docs').countDocuments(scan)).toBe(0);
    await roomy.close();
  });

  it('MongoDB: find, findOne and countDocuments carry maxTimeMS; MaxTimeMSExpired is QUERY_TIMEOUT', async () => {
    const sent: Array<[string, Record<string, unknown>]> = [];
    let fail = false;
    const answer = <R>(r: R): R => {
      if (fail) throw new MongoServerError({ code: 50, codeName: 'MaxTimeMSExpired', errmsg: 'operation exceeded time limit' });
      return r;
    };
    const driver = {
      collectionName: 'tasks',
      find: (_f: unknown, o: Record<string, unknown>) => (sent.push(['find', o]), { toArray: async () => answer([]) }),
      findOne: async (_f: unknown, o: Record<string, unknown>) => (sent.push(['findOne', o]), answer(null)),
      countDocuments: async (_f: unknown, o: Record<string, unknown>) => (sent.push(['countDocuments', o]), answer(0)),
    };
    const coll = new MongoCollection<Doc>(driver as never, () => undefined);
    await coll.find({ status: 'todo' }, { sort: { _id: 1 }, limit: 5 });
    await coll.findOne({ _id: 'x' });
    await coll.countDocuments({ status: 'todo' });
    expect(sent.map(([op, o]) => [op, o.maxTimeMS])).toEqual([
      ['find', QUERY_TIME_LIMIT_MS],
      ['findOne', QUERY_TIME_LIMIT_MS],
      ['countDocuments', QUERY_TIME_LIMIT_MS],
    ]);
    fail = true;
    for (const call of [() => coll.find({}), () => coll.findOne({}), () => coll.countDocuments({})]) {
      const e = await call().then(() => undefined, (err: unknown) => err);
      expect(AppError.is(e) && [e.code, e.status]).toEqual(['QUERY_TIMEOUT', 503]);
    }
  });
});

describe('date functions checked where they are parsed', () => {
  it('a shift past 1,000 years is QUERY_SYNTAX at its position, in validate too: startOfDay(+8000y), startOfMonth(±999999y), endOfWeek(+999999w)', () => {
    const cases: Array<[string, number]> = [
      ['created_at >= startOfDay(+8000y)', 25],
      ['deadline < startOfMonth(+999999y)', 24],
      ['deadline > startOfMonth(-999999y)', 24],
      ['deadline <= endOfWeek(+999999w)', 22],
      ['deadline <= endOfDay(+365001d)', 21],
      ['deadline <= endOfMonth(-12001m)', 23],
    ];
    for (const [text, position] of cases) {
      const e = errorOf(() => parseQuery(text));
      expect([text, e.code, e.status, e.details?.position]).toEqual([text, 'QUERY_SYNTAX', 400, position]);
      expect(e.message).toContain('out of range');
      expect(validateQuery(text, { board: false }).errors[0]).toMatchObject({ code: 'QUERY_SYNTAX', position });
    }
    for (const text of ['created_at >= startOfDay(+1000y)', 'deadline < endOfWeek(-52000w)', 'deadline < endOfDay(+365000d)']) {
      expect(validateQuery(text, { board: false }).valid).toBe(true);
    }
  });
});
