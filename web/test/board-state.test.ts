import { describe, expect, it } from 'vitest';
import type { Card } from '../src/api/types.js';
import {
  applyOptimisticMove, cardBadges, columnOf, describeActions, neighbourColumn, restoreColumns, summarySignature, wipState, type Columns,
} from '../src/board/state.js';
import { fillPath } from '../src/api/client.js';

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
});
