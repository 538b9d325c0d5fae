import { describe, expect, it } from 'vitest';
import type { Card } from '../src/api/types.js';
import {
  applyOptimisticMove, BACKLOG, burnDays, daysLeft, describeMetadata, cardBadges, liveLease, planCards, planningQuery, pointsOf, sumPoints, columnFilter, columnOf, describeActions, initials, menuPosition, neighbourColumn, quote, restoreColumns, searchClause,
  statusChoices, summarySignature, userPosition, wipState, type Columns,
  cfdBands, epochDay, flowRange, wipRefusalOf, wipRefusalText,
} from '../src/board/state.js';
import { ApiError, errorText, fillPath } from '../src/api/client.js';

const card = (id: string, extra: Partial<Card> = {}): Card => ({ id, title: `Card ${id}`, status: 'todo', tags: [], metadata: {}, ...extra });
const cols = (): Columns => ({
  todo: { cards: [card('a'), card('b')], total: 5, pages: 1, loading: false },
  done: { cards: [card('c')], total: 1, pages: 1, loading: false },
});

describe('board state rules', () => {
  it('moves a card optimistically to the top of the target and rolls back exactly', () => {
    const before = cols();
    const after = applyOptimisticMove(before, 'b', 'todo', 'done');
    expect(after.todo!.cards.map((c) => c.id)).toEqual(['a']);
    expect(after.todo!.total).toBe(4);
    expect(after.done!.cards.map((c) => c.id)).toEqual(['b', 'c']);
    expect(after.done!.total).toBe(2);
    expect(columnOf(after, 'b')).toBe('done');
    const back = restoreColumns(after, before, ['todo', 'done']);
    expect(back).toEqual(before);
  });

  it('leaves the columns alone for an unknown card, an unknown column or a same-column move', () => {
    const c = cols();
    expect(applyOptimisticMove(c, 'zz', 'todo', 'done')).toBe(c);
    expect(applyOptimisticMove(c, 'a', 'todo', 'nowhere')).toBe(c);
    expect(applyOptimisticMove(c, 'a', 'todo', 'todo')).toBe(c);
  });

  it('says in one sentence why a full blocking column refused a card: the column, its count and its limit', () => {
    const r = wipRefusalOf('WIP_LIMIT_REACHED', { column_id: 'col-doing', wip_limit: 2, count: 2 })!;
    expect(r).toEqual({ column_id: 'col-doing', wip_limit: 2, count: 2 });
    expect(wipRefusalText('Login', 'Doing', r)).toBe('“Login” was not moved: Doing already holds 2 cards, its WIP limit of 2.');
    expect(wipRefusalText('Login', 'Doing', { ...r, count: 1, wip_limit: 1 })).toBe('“Login” was not moved: Doing already holds 1 card, its WIP limit of 1.');
    expect(wipRefusalText('Login', 'Doing', { ...r, count: 3 }, 'created')).toBe('“Login” was not created in Doing: Doing already holds 3 cards, more than its WIP limit of 2.');
    expect(wipRefusalOf('CONFLICT', { column_id: 'c', wip_limit: 1, count: 1 })).toBeUndefined();
    expect(wipRefusalOf('WIP_LIMIT_REACHED', { column_id: 'c' })).toBeUndefined();
  });

  it('stacks the cumulative flow bands in board order with the last column at the bottom; picks the range in UTC days', () => {
    const col = (column_id: string, count: number) => ({ column_id, name: column_id.toUpperCase(), count, points: 0 });
    const bands = cfdBands([
      { day: '2026-11-26', columns: [col('todo', 3), col('done', 1)] },
      { day: '2026-11-28', columns: [col('todo', 1), col('doing', 2), col('done', 4)] },
    ]);
    expect(bands.x).toEqual([epochDay('2026-11-26'), epochDay('2026-11-28')]);
    expect(bands.x[1]! - bands.x[0]!).toBe(2);
    expect(bands.columns.map((c) => [c.name, c.counts, c.top])).toEqual([
      ['TODO', [3, 1], [4, 7]],
      ['DOING', [0, 2], [1, 6]], // a column a past day does not know counts 0
      ['DONE', [1, 4], [1, 4]],
    ]);
    expect(cfdBands([])).toEqual({ x: [], columns: [] });
    expect(epochDay('2026-11-28T12:00:00.000Z') - epochDay('2026-11-28')).toBe(0.5);
    expect(flowRange(new Date('2026-11-28T23:59:00Z'), 30)).toEqual({ from: '2026-10-30', to: '2026-11-28' });
  });

  it('names the WIP state as the summary does (over means total > limit)', () => {
    expect(wipState(3, undefined)).toBe('none');
    expect(wipState(2, 3)).toBe('under');
    expect(wipState(3, 3)).toBe('at');
    expect(wipState(4, 3)).toBe('over');
  });

  it('words applied actions', () => {
    expect(describeActions([])).toBe('no field changes');
    expect(
      describeActions([
        { op: 'set', field: 'status', from: 'todo', to: 'doing' },
        { op: 'set', field: 'assignee', from: 'u1' },
        { op: 'add_tags', value: ['wip', 'x'] },
        { op: 'remove_tags', value: ['new'] },
      ]),
    ).toBe('sets status to “doing”, clears assignee, adds tag wip, x, removes tag new');
  });

  it('changes the summary signature when a total, a preview or the sprint changes', () => {
    const s = { board_id: 'b', name: 'B', columns: [{ column_id: 'todo', name: 'To Do', total: 2, preview: ['x'] }] };
    const base = summarySignature(s);
    expect(summarySignature(structuredClone(s))).toBe(base);
    expect(summarySignature({ ...s, columns: [{ ...s.columns[0]!, total: 3 }] })).not.toBe(base);
    expect(summarySignature({ ...s, columns: [{ ...s.columns[0]!, preview: ['y'] }] })).not.toBe(base);
    expect(summarySignature({ ...s, active_sprint_id: 'sp' })).not.toBe(base);
  });

  it('finds neighbour columns and card badges, and fills path parameters encoded', () => {
    expect(neighbourColumn(['a', 'b', 'c'], 'b', 1)).toBe('c');
    expect(neighbourColumn(['a', 'b', 'c'], 'a', -1)).toBeUndefined();
    expect(cardBadges(card('p', { metadata: { 'cf.priority': 2, 'app.points': 3 } }))).toEqual({ priority: '2', points: '3' });
    expect(cardBadges(card('q', { metadata: { 'cf.priority': { deep: true } } }))).toEqual({});
    expect(fillPath('/api/v1/boards/{boardId}/tasks/{taskId}', { boardId: 'a b', taskId: 't/1' })).toBe('/api/v1/boards/a%20b/tasks/t%2F1');
    expect(() => fillPath('/api/v1/tasks/{taskId}', {})).toThrow(/taskId/);
  });

  it('shows a lease on a card only while it is live', () => {
    const lease = { id: 'l1', holder: 'u1', board_id: 'b', column_id: 'todo', claimed_at: '2026-03-02T09:00:00.000Z', expires_at: '2026-03-02T09:05:00.000Z' };
    const leased = card('l', { lease });
    expect(liveLease(leased, new Date('2026-03-02T09:04:59.999Z'))).toEqual(lease);
    expect(liveLease(leased, new Date('2026-03-02T09:05:00.000Z'))).toBeUndefined();
    expect(liveLease(card('free'), new Date('2026-03-02T09:00:00.000Z'))).toBeUndefined();
  });

  it('shows a failed call with the first field at fault, a catalogue code in the page\'s words, no answer as an unreachable server', () => {
    const invalid = new ApiError(400, {
      code: 'VALIDATION_ERROR',
      message: 'Invalid request',
      validationErrors: [
        { field: '/name', code: 'minLength', message: 'must not be empty' },
        { field: '/columns', code: 'type', message: 'must be array' },
      ],
    });
    expect(errorText(invalid)).toBe('Name must not be empty.');
    expect(errorText(new ApiError(404, { code: 'BOARD_NOT_FOUND', message: 'Board b-1 not found' }))).toBe('The board no longer exists, or you may not see it.');
    expect(errorText(new TypeError('Failed to fetch'))).toBe('The server cannot be reached; nothing was saved. Try again once it is back.');
  });

  it('says a failed field check in one sentence that names the field once, in words', () => {
    const v = (field: string, code: string, message: string) =>
      errorText(new ApiError(400, { code: 'VALIDATION_FAILED', message: `body${field}: ${message}`, validationErrors: [{ field, code, message }] }));
    expect(v('/password', 'minLength', 'must NOT have fewer than 8 characters')).toBe('Password must have at least 8 characters.');
    expect(v('/columns/0/name', 'minLength', 'must NOT have fewer than 1 characters')).toBe('Name of column 1 must not be empty.');
    expect(v('/wip_limit', 'minimum', 'must be >= 0')).toBe('WIP limit must be at least 0.');
    expect(v('/', 'required', "must have required property 'username'")).toBe('Username is required.');
    expect(v('/permission', 'enum', 'must be equal to one of the allowed values')).toBe('Permission is not one of the allowed values.');
  });

  it('shows a query error without its part label and position (the filter shows the position itself)', () => {
    const e = new ApiError(400, { code: 'QUERY_UNKNOWN_FIELD', message: 'Filter: Unknown field "stat" at position 0; did you mean "status"?', details: { position: 0 } });
    expect(errorText(e)).toBe('Unknown field "stat"; did you mean "status"?');
  });
});

describe('column filters, status choices, initials, menu placement', () => {
  it('always leaves sprint tasks out, keeps the user filter in parentheses and maps error positions back', () => {
    expect(columnFilter('', '')).toEqual({ filter: "app.type != 'sprint'", offset: 0 });
    const f = columnFilter("status = 'a' OR status = 'b'", '');
    expect(f.filter).toBe("(status = 'a' OR status = 'b') AND app.type != 'sprint'");
    expect(f.offset).toBe(1);
    expect(userPosition(5, 1, 'abcdef')).toBe(4);
    expect(userPosition(40, 1, 'abc')).toBe(3); // past the user's text: clamped to its end
    expect(columnFilter('', 'login', 'u-1').filter).toBe(
      "(title ~ 'login' OR description ~ 'login') AND assignee = 'u-1' AND app.type != 'sprint'",
    );
  });

  it('turns plain words into one ~ condition per word on title or description, quoting safely', () => {
    expect(searchClause('  ')).toBe('');
    expect(searchClause("fix it's")).toBe("(title ~ 'fix' OR description ~ 'fix') AND (title ~ 'it\\'s' OR description ~ 'it\\'s')");
    expect(quote('a\\b')).toBe("'a\\\\b'");
  });

  it('offers the statuses the columns set, once each in column order, plus the current one', () => {
    const set = (value: unknown) => ({ field: 'status', operation: 'set', value });
    const cols = [{ actions: [set('todo')] }, { actions: [set('doing'), { field: 'tags', operation: 'add', value: ['x'] }] }, { actions: [set('todo')] }];
    expect(statusChoices(cols)).toEqual(['todo', 'doing']);
    expect(statusChoices(cols, 'blocked')).toEqual(['todo', 'doing', 'blocked']);
  });

  it('makes initials of user names', () => {
    expect(initials('ada')).toBe('AD');
    expect(initials('ada lovelace')).toBe('AL');
    expect(initials('grace.hopper')).toBe('GH');
  });

  it('opens a menu below its button, above it near the bottom edge, and always inside the viewport', () => {
    const view = { width: 360, height: 600 };
    const size = { width: 200, height: 150 };
    expect(menuPosition({ top: 100, bottom: 120, right: 300 }, size, view)).toEqual({ top: 122, left: 100 });
    expect(menuPosition({ top: 560, bottom: 580, right: 300 }, size, view)).toEqual({ top: 408, left: 100 });
    expect(menuPosition({ top: 100, bottom: 120, right: 50 }, size, view).left).toBe(4);
  });
});

describe('planning and burndown rules', () => {
  const task = (id: string, md: Record<string, unknown>) => ({ id, metadata: md });

  it('reads the backlog and the open sprints in one board query, without sprint tasks', () => {
    expect(planningQuery([])).toBe("app.type != 'sprint' AND (status != 'done') ORDER BY created_at ASC");
    expect(planningQuery(['s1', "o'k"])).toBe("app.type != 'sprint' AND (status != 'done' OR app.sprint IN ('s1', 'o\\'k')) ORDER BY created_at ASC");
  });

  it('groups cards by open sprint, everything else in the backlog', () => {
    const g = planCards([task('a', { 'app.sprint': 's1' }), task('b', {}), task('c', { 'app.sprint': 'closed-one' }), task('d', { 'app.sprint': 's2' })], ['s1', 's2']);
    expect([...g.keys()]).toEqual([BACKLOG, 's1', 's2']);
    expect(g.get(BACKLOG)!.map((c) => c.id)).toEqual(['b', 'c']);
    expect(g.get('s1')!.map((c) => c.id)).toEqual(['a']);
  });

  it('counts only numeric points, summed to 6 decimals', () => {
    expect(pointsOf(task('a', { 'app.points': '3' }))).toBeUndefined();
    expect(sumPoints([task('a', { 'app.points': 0.1 }), task('b', { 'app.points': 0.2 }), task('c', { 'app.points': 'x' })])).toBe(0.3);
  });

  it('charts the burndown days as the API lists them: kickoff to deadline, days to come without actuals, scope changes and today marked', () => {
    const days = burnDays(
      {
        days: [
          { date: '2026-11-19', remaining: null, scope: null, ideal: 10 },
          { date: '2026-11-20', remaining: 10, scope: 10, ideal: 8 },
          { date: '2026-11-21', remaining: 9, scope: 12, ideal: 6 },
          { date: '2026-11-22', remaining: null, scope: null, ideal: 4 },
          { date: '2026-11-23', remaining: null, scope: null, ideal: 2 },
          { date: '2026-11-24', remaining: null, scope: null, ideal: 0 },
        ],
      },
      { now: new Date('2026-11-21T15:00:00Z') },
    );
    expect(days.map((d) => d.date)).toEqual(['2026-11-19', '2026-11-20', '2026-11-21', '2026-11-22', '2026-11-23', '2026-11-24']);
    expect(days.map((d) => d.ideal)).toEqual([10, 8, 6, 4, 2, 0]);
    expect(days.map((d) => d.remaining)).toEqual([null, 10, 9, null, null, null]);
    expect(days.map((d) => d.scopeChange)).toEqual([0, 0, 2, 0, 0, 0]);
    expect(days.filter((d) => d.today).map((d) => d.date)).toEqual(['2026-11-21']);
  });

  it('says the days left to a deadline in UTC days', () => {
    const now = new Date('2026-11-21T23:30:00Z');
    expect(daysLeft('2026-11-24T00:00:00Z', now)).toEqual({ days: 3, text: '3 days left' });
    expect(daysLeft('2026-11-22T00:00:00Z', now).text).toBe('1 day left');
    expect(daysLeft('2026-11-21T00:00:00Z', now).text).toBe('ends today');
    expect(daysLeft('2026-11-19T00:00:00Z', now).text).toBe('2 days past the deadline');
  });

  it('describes card metadata in words: known keys named, the sprint by its title, prefixes dropped', () => {
    const md = { 'app.sprint': 's1', 'app.carried': 1, 'app.points': 3, 'cf.priority': 'P2', 'cf.team_name': 'core', 'app.type': 'task' };
    expect(describeMetadata(md, (id) => (id === 's1' ? 'Sprint 2' : undefined)).map((m) => `${m.label}: ${m.value}`)).toEqual([
      'Sprint: Sprint 2', 'Carried over: 1 sprint', 'Points: 3', 'Priority: P2', 'Team name: core',
    ]);
    expect(describeMetadata({ 'app.sprint': 'gone' }, () => undefined)[0]!.value).toBe('a sprint that is closed or not on this board');
  });
});
