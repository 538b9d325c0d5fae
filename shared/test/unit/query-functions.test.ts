import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TaskDoc } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import {
  checkFunctionContext, materializeActions, NO_SPRINT, parseQuery, periodBoundary, printQuery, queryMatches, resolveQuery,
  type FunctionLookups, type Query,
} from '@app/shared/query';
import { thrown as appError } from '@app/shared/testing';

/** A Wednesday. */
const NOW = new Date('2026-03-18T10:30:00.000Z');

async function rejected(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (e) {
    if (AppError.is(e)) return e;
    throw e;
  }
  throw new Error('expected an AppError');
}

const lookups = (over: Partial<FunctionLookups> = {}): FunctionLookups => ({
  activeSprint: async (boardId) => ({ b1: 's1', b2: 's3' } as Record<string, string | undefined>)[boardId],
  sprints: async (state) => (state === 'open' ? ['s1', 's2'] : ['s0']),
  ...over,
});

describe('functions: parsing and printing', () => {
  it('parses calls as values and prints them canonically, keeping the call', () => {
    const q = parseQuery("assignee = ME ( ) AND app.sprint IN OPENSPRINTS() AND deadline <= endofweek(+1w) AND app.sprint = activeSprint(\"b1\")");
    expect(printQuery(q)).toBe("assignee = me() AND app.sprint IN openSprints() AND deadline <= endOfWeek(+1w) AND app.sprint = activeSprint('b1')");
    expect(parseQuery(printQuery(q))).toStrictEqual(q);
  });

  it('accepts list functions inside an IN list too', () => {
    expect(printQuery(parseQuery("app.sprint NOT IN (closedSprints(), 'x')"))).toBe("app.sprint NOT IN (closedSprints(), 'x')");
  });

  it('suggests the nearest function for an unknown one, with its position', () => {
    const e = appError(() => parseQuery("status = 'todo' AND app.sprint = currentSprint()"));
    expect(e.code).toBe('QUERY_UNKNOWN_FUNCTION');
    expect(e.status).toBe(400);
    expect(e.details).toMatchObject({ function: 'currentSprint', position: 33, suggestion: 'activeSprint()' });
    expect(e.message).toContain('did you mean activeSprint()');
    expect(appError(() => parseQuery('assignee = mee()')).details).toMatchObject({ suggestion: 'me()', position: 11 });
  });

  it('refuses a list function outside IN and bad arguments, at their position', () => {
    const list = appError(() => parseQuery('app.sprint = openSprints()'));
    expect(list.code).toBe('QUERY_SYNTAX');
    expect(list.details).toMatchObject({ position: 13 });
    expect(list.message).toContain('IN');
    expect(appError(() => parseQuery('deadline < startOfDay(1)')).details).toMatchObject({ position: 22 });
    expect(appError(() => parseQuery("assignee = me('x')")).details).toMatchObject({ position: 14 });
    expect(appError(() => parseQuery("app.sprint = activeSprint('a', 'b')")).details).toMatchObject({ position: 31 });
  });

  it('a column query with assignee = me() sets the mover on enter', () => {
    expect(materializeActions(parseQuery("assignee = me() AND status != 'done'"))).toEqual([
      { trigger: 'enter', field: 'assignee', operation: 'set', value: { fn: 'me' }, source: 'query' },
    ]);
  });
});

describe('functions: period boundaries', () => {
  it('in UTC, weeks starting on Monday', () => {
    expect(periodBoundary('startOfDay', undefined, NOW, 'UTC')).toBe('2026-03-18T00:00:00.000Z');
    expect(periodBoundary('endOfDay', undefined, NOW, 'UTC')).toBe('2026-03-18T23:59:59.999Z');
    expect(periodBoundary('startOfWeek', undefined, NOW, 'UTC')).toBe('2026-03-16T00:00:00.000Z');
    expect(periodBoundary('endOfWeek', undefined, NOW, 'UTC')).toBe('2026-03-22T23:59:59.999Z');
    expect(periodBoundary('startOfMonth', undefined, NOW, 'UTC')).toBe('2026-03-01T00:00:00.000Z');
    expect(periodBoundary('endOfMonth', undefined, NOW, 'UTC')).toBe('2026-03-31T23:59:59.999Z');
    expect(periodBoundary('startOfWeek', { amount: -1, unit: 'w' }, NOW, 'UTC')).toBe('2026-03-09T00:00:00.000Z');
    expect(periodBoundary('endOfMonth', { amount: -1, unit: 'm' }, NOW, 'UTC')).toBe('2026-02-28T23:59:59.999Z');
    expect(periodBoundary('startOfDay', { amount: 2, unit: 'd' }, NOW, 'UTC')).toBe('2026-03-20T00:00:00.000Z');
  });

  it("in the caller's time zone, across a daylight-saving change", () => {
    expect(periodBoundary('startOfDay', undefined, NOW, 'Europe/Berlin')).toBe('2026-03-17T23:00:00.000Z');
    expect(periodBoundary('startOfWeek', undefined, NOW, 'America/New_York')).toBe('2026-03-16T04:00:00.000Z');
    // Berlin moves to summer time on 2026-03-29: that week ends at 22:00 UTC, not 23:00
    expect(periodBoundary('endOfWeek', { amount: 1, unit: 'w' }, NOW, 'Europe/Berlin')).toBe('2026-03-29T21:59:59.999Z');
    // late evening in UTC is already tomorrow in Tokyo
    expect(periodBoundary('startOfDay', undefined, new Date('2026-03-18T20:00:00Z'), 'Asia/Tokyo')).toBe('2026-03-18T15:00:00.000Z');
    expect(periodBoundary('startOfDay', undefined, NOW, 'Not/AZone')).toBe('2026-03-18T00:00:00.000Z');
  });
});

describe('functions: resolution', () => {
  it('replaces calls by literals and leaves the parsed query untouched', async () => {
    const q = parseQuery('assignee = me() AND app.sprint IN openSprints() AND app.sprint != activeSprint() AND deadline >= startOfWeek()');
    const r = await resolveQuery(q, { userId: 'u1', boardId: 'b2', now: NOW, timezone: 'UTC' }, lookups());
    expect(printQuery(r)).toBe("assignee = 'u1' AND app.sprint IN ('s1', 's2') AND app.sprint != 's3' AND deadline >= 2026-03-16T00:00:00.000Z");
    expect(printQuery(q)).toContain('me()');
  });

  it('returns a query without calls as the same object, with no look-up', async () => {
    const q = parseQuery("status = 'todo'");
    const never = (): never => {
      throw new Error('no look-up expected');
    };
    expect(await resolveQuery(q, { userId: 'u1', now: NOW }, { activeSprint: never, sprints: never, timezone: never })).toBe(q);
  });

  it("reads the caller's time zone only when a period function needs it", async () => {
    let reads = 0;
    const tz = lookups({ timezone: async () => (reads++, 'Europe/Berlin') });
    const r = await resolveQuery(parseQuery('created_at >= startOfDay() AND created_at < endOfDay()'), { userId: 'u', now: NOW }, tz);
    expect(printQuery(r)).toBe('created_at >= 2026-03-17T23:00:00.000Z AND created_at < 2026-03-18T22:59:59.999Z');
    expect(reads).toBe(1);
    await resolveQuery(parseQuery('assignee = me()'), { userId: 'u', now: NOW }, tz);
    expect(reads).toBe(1);
  });

  it('activeSprint() needs a board; a board with no running sprint matches nothing', async () => {
    const q = parseQuery("status = 'todo' OR app.sprint = activeSprint()");
    const e = await rejected(resolveQuery(q, { userId: 'u', now: NOW }, lookups()));
    expect(e.code).toBe('QUERY_FUNCTION_CONTEXT');
    expect(e.details).toMatchObject({ position: 32 });
    expect(appError(() => checkFunctionContext(q, { board: false })).code).toBe('QUERY_FUNCTION_CONTEXT');
    const none = await resolveQuery(parseQuery("app.sprint = activeSprint('b9')"), { userId: 'u', now: NOW }, lookups());
    expect(printQuery(none)).toBe(`app.sprint = '${NO_SPRINT}'`);
  });

  it('passes on the look-up error of a board the caller cannot read', async () => {
    const hidden = lookups({ activeSprint: async (boardId) => Promise.reject(new AppError('BOARD_NOT_FOUND', { details: { boardId } })) });
    const e = await rejected(resolveQuery(parseQuery("app.sprint = activeSprint('secret')"), { userId: 'u', now: NOW }, hidden));
    expect(e.code).toBe('BOARD_NOT_FOUND');
  });
});

// ---- property: functions give the results of their values written by hand -------------------

/** Each function as written in a query, and the literal a person would paste for it (context below). */
const SUBSTITUTIONS: ReadonlyArray<[string, string]> = [
  ['me()', "'u1'"],
  ['activeSprint()', "'s3'"],
  ["activeSprint('b1')", "'s1'"],
  ['startOfWeek()', '2026-03-16T00:00:00.000Z'],
  ['endOfWeek(-1w)', '2026-03-15T23:59:59.999Z'],
  ['startOfDay()', '2026-03-18T00:00:00.000Z'],
  ['endOfMonth()', '2026-03-31T23:59:59.999Z'],
];
const LISTS: ReadonlyArray<[string, string]> = [
  ['openSprints()', "('s1', 's2')"],
  ['closedSprints()', "('s0')"],
];

const templateArb = fc.oneof(
  fc.record({ f: fc.constantFrom('assignee', 'created_by', 'app.sprint'), op: fc.constantFrom('=', '!='), v: fc.constantFrom(...SUBSTITUTIONS.slice(0, 3)) })
    .map(({ f, op, v }) => [`${f} ${op} ${v[0]}`, `${f} ${op} ${v[1]}`]),
  fc.record({ f: fc.constantFrom('deadline', 'created_at'), op: fc.constantFrom('<', '<=', '>', '>=', '=', '!='), v: fc.constantFrom(...SUBSTITUTIONS.slice(3)) })
    .map(({ f, op, v }) => [`${f} ${op} ${v[0]}`, `${f} ${op} ${v[1]}`]),
  fc.record({ not: fc.boolean(), v: fc.constantFrom(...LISTS) })
    .map(({ not, v }) => [`app.sprint ${not ? 'NOT ' : ''}IN ${v[0]}`, `app.sprint ${not ? 'NOT ' : ''}IN ${v[1]}`]),
  fc.constantFrom(['me() IN tags', "'u1' IN tags"], ['deadline BETWEEN startOfWeek() AND endOfMonth()', 'deadline BETWEEN 2026-03-16T00:00:00.000Z AND 2026-03-31T23:59:59.999Z']),
);
const queryPairArb = fc
  .array(fc.tuple(templateArb, fc.constantFrom(' AND ', ' OR ', ' AND NOT ')), { minLength: 1, maxLength: 4 })
  .map((parts) => {
    const join = (i: 0 | 1) => parts.map(([t, sep], k) => (k === 0 ? '' : sep) + t[i]).join('');
    return [join(0), join(1)] as const;
  });

const dateArb = fc.integer({ min: -40, max: 40 }).map((h) => new Date(NOW.getTime() + h * 3_600_000 * 12).toISOString());
const docArb = fc.record({
  _id: fc.uuid(),
  assignee: fc.option(fc.constantFrom('u1', 'u2'), { nil: undefined }),
  created_by: fc.constantFrom('u1', 'u2'),
  created_at: dateArb,
  deadline: fc.option(dateArb, { nil: undefined }),
  tags: fc.subarray(['u1', 'x']),
  sprint: fc.option(fc.constantFrom('s0', 's1', 's2', 's3'), { nil: undefined }),
}).map(({ sprint, assignee, deadline, ...d }) => ({
  title: 't', description: '', status: 'todo', path: '', checkInCount: 0, deleted: false, ...d,
  ...(assignee ? { assignee } : {}), ...(deadline ? { deadline } : {}),
  metadata: sprint ? { 'app%2Esprint': sprint } : {},
}) as unknown as TaskDoc);

describe('functions: a query with functions gives the results of its values substituted by hand', () => {
  it('holds for generated queries and tasks', async () => {
    await fc.assert(
      fc.asyncProperty(queryPairArb, fc.array(docArb, { maxLength: 8 }), async ([withCalls, byHand], docs) => {
        const resolved: Query = await resolveQuery(parseQuery(withCalls), { userId: 'u1', boardId: 'b2', now: NOW, timezone: 'UTC' }, lookups());
        const literal = parseQuery(byHand);
        for (const d of docs) expect(queryMatches(resolved, d, NOW), `${withCalls} on ${JSON.stringify(d)}`).toBe(queryMatches(literal, d, NOW));
      }),
      { numRuns: 300 },
    );
  });
});
