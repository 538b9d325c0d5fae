import { describe, expect, it } from 'vitest';
import { AppError } from '@app/shared/errors';
import { backfillColumnIds, cardCreateBody, columnSlugId, normalizeColumns, type ColumnDef } from '@app/shared/domain';
import { thrown } from '@app/shared/testing';

describe('columnSlugId', () => {
  it.each([
    ['To Do', 'col-to-do'],
    ['  In   Progress!! ', 'col-in-progress'],
    ['Café Déjà-vu', 'col-cafe-deja-vu'],
    ['🚀', 'col-column'],
    ['x'.repeat(80), `col-${'x'.repeat(48)}`],
  ])('%j → %s', (name, id) => expect(columnSlugId(name)).toBe(id));
});

describe('backfillColumnIds', () => {
  it('keeps sent ids and makes slugs unique with -2, -3…', () => {
    expect(backfillColumnIds([{ name: 'A' }, { name: 'a' }, { id: 'col-a-2', name: 'x' }, { name: 'A' }])).toEqual(['col-a', 'col-a-3', 'col-a-2', 'col-a-4']);
  });

  it('reuses the id of a previous column with the same name while it is free', () => {
    const previous = [{ id: 'k1', name: 'Todo' }, { id: 'k2', name: 'Done' }];
    expect(backfillColumnIds([{ name: 'Done' }, { name: 'Todo' }, { name: 'Todo' }], previous)).toEqual(['k2', 'k1', 'col-todo']);
    expect(backfillColumnIds([{ id: 'k1', name: 'Other' }, { name: 'Todo' }], previous)).toEqual(['k1', 'col-todo']);
  });

  it('refuses duplicate sent ids naming the second one', () => {
    const e = thrown(() => backfillColumnIds([{ id: 'a', name: 'x' }, { id: 'a', name: 'y' }]));
    expect(e.validationErrors?.[0]?.field).toBe('/columns/1/id');
  });
});

describe('normalizeColumns', () => {
  it('regenerates query actions and keeps manual ones, so the result is a fixed point', () => {
    const stale: ColumnDef = {
      id: 'c', name: 'C', query: "status = 'b'",
      actions: [
        { trigger: 'enter', field: 'status', operation: 'set', value: 'stale', source: 'query' },
        { trigger: 'exit', field: 'assignee', operation: 'clear', source: 'manual' },
      ],
    };
    const once = normalizeColumns([stale]);
    expect(once[0]!.actions).toEqual([
      { trigger: 'enter', field: 'status', operation: 'set', value: 'b', source: 'query' },
      { trigger: 'exit', field: 'assignee', operation: 'clear', source: 'manual' },
    ]);
    expect(normalizeColumns(once, once)).toEqual(once);
  });

  it('names the column and position of a bad query', () => {
    const e = thrown(() => normalizeColumns([{ name: 'a' }, { name: 'b' }, { name: 'c', query: 'status = ' }]));
    expect(e.code).toBe('QUERY_SYNTAX');
    expect(e.details).toMatchObject({ field: '/columns/2/query', position: 9 });
  });
});

describe('cardCreateBody', () => {
  const column: ColumnDef = {
    id: 'c', name: 'C', query: '',
    actions: [
      { trigger: 'enter', field: 'status', operation: 'set', value: 'doing', source: 'query' },
      { trigger: 'enter', field: 'metadata.cf.size', operation: 'set', value: 3, source: 'query' },
      { trigger: 'enter', field: 'tags', operation: 'add', value: ['wip'], source: 'query' },
      { trigger: 'enter', field: 'assignee', operation: 'clear', source: 'manual' },
      { trigger: 'exit', field: 'tags', operation: 'remove', value: ['wip'], source: 'query' },
    ],
  };

  it('starts from enter actions, lets sent fields win and unions the tags', () => {
    expect(cardCreateBody({ title: 't', status: 'mine', tags: ['x', 'wip'] }, column, ['team'], 'S1', 'u1')).toEqual({
      title: 't', status: 'mine', tags: ['x', 'wip', 'team'], metadata: { 'cf.size': 3, 'app.sprint': 'S1' },
    });
  });

  it('honours "app.sprint": null as an opt-out, and stamps nothing without a column or a sprint', () => {
    expect(cardCreateBody({ title: 't', metadata: { 'app.sprint': null } }, column, [], 'S1', 'u1').metadata).toEqual({ 'cf.size': 3 });
    expect(cardCreateBody({ title: 't' }, undefined, [], 'S1', 'u1')).toEqual({ title: 't', tags: [], metadata: {} });
    expect(cardCreateBody({ title: 't' }, column, [], undefined, 'u1').metadata).toEqual({ 'cf.size': 3 });
  });

  it('a "My work" column (assignee = me()) assigns a card created in it to its creator', () => {
    const mine = { actions: [{ trigger: 'enter' as const, field: 'assignee', operation: 'set' as const, value: { fn: 'me' }, source: 'query' as const }] };
    expect(cardCreateBody({ title: 't' }, mine as never, [], undefined, 'u1')).toMatchObject({ assignee: 'u1' });
    expect(cardCreateBody({ title: 't', assignee: 'u2' }, mine as never, [], undefined, 'u1')).toMatchObject({ assignee: 'u2' });
  });
});
