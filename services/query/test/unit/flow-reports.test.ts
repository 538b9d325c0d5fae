import { describe, expect, it } from 'vitest';
import { finishedCards, finishOf, percentiles, throughput, weekOf, type CardFlow } from '../../src/flow/reports.js';

/** A card's record with moves given as [from, to, ISO time]. */
const card = (task_id: string, created_at: string, moves: [string, string, string][], extra: Partial<CardFlow> = {}): CardFlow => ({
  task_id, created_at,
  moves: moves.map(([from, to, at], i) => ({ from, to, at, seq: i + 1 })), ...extra,
});

const ALL = { fromMs: Date.parse('2026-01-01T00:00:00Z'), toMs: Date.parse('2027-01-01T00:00:00Z') };

describe('flow reports', () => {
  it('a card moved back and forth starts its cycle when it first left the start column and finishes at its last entry', () => {
    const c = card('a', '2026-05-01T00:00:00.000Z', [
      ['todo', 'doing', '2026-05-02T00:00:00.000Z'],
      ['doing', 'todo', '2026-05-03T00:00:00.000Z'],
      ['todo', 'doing', '2026-05-04T00:00:00.000Z'],
      ['doing', 'done', '2026-05-05T12:00:00.000Z'],
    ]);
    expect(finishOf(c, 'todo', 'done')).toEqual({ started_at: '2026-05-02T00:00:00.000Z', finished_at: '2026-05-05T12:00:00.000Z' });
    const [f] = finishedCards([c], new Map([['a', 'A']]), 'todo', 'done', ALL.fromMs, ALL.toMs);
    expect(f).toMatchObject({ lead_time_hours: 108, cycle_time_hours: 84 });
  });

  it('a re-opened card is finished only when it is back in the end column, at its last entry', () => {
    const reopened = card('r', '2026-05-01T00:00:00.000Z', [
      ['todo', 'done', '2026-05-02T00:00:00.000Z'],
      ['done', 'doing', '2026-05-03T00:00:00.000Z'],
    ]);
    expect(finishOf(reopened, 'todo', 'done')).toBeUndefined();
    reopened.moves.push({ from: 'doing', to: 'done', at: '2026-05-04T00:00:00.000Z', seq: 3 });
    expect(finishOf(reopened, 'todo', 'done')).toEqual({ started_at: '2026-05-02T00:00:00.000Z', finished_at: '2026-05-04T00:00:00.000Z' });
  });

  it('a card created past the start column starts at its first move; a card the reader cannot read or that was deleted does not count', () => {
    const past = card('p', '2026-05-01T00:00:00.000Z', [['doing', 'done', '2026-05-01T06:00:00.000Z']]);
    const hidden = card('h', '2026-05-01T00:00:00.000Z', [['todo', 'done', '2026-05-01T06:00:00.000Z']]);
    const deleted = card('d', '2026-05-01T00:00:00.000Z', [['todo', 'done', '2026-05-01T06:00:00.000Z']], { deleted: true });
    const cards = finishedCards([past, hidden, deleted], new Map([['p', 'P'], ['d', 'D']]), 'todo', 'done', ALL.fromMs, ALL.toMs);
    expect(cards.map((c) => [c.task_id, c.cycle_time_hours, c.lead_time_hours])).toEqual([['p', 0, 6]]);
  });

  it('counts a finish in the range [from, to) only', () => {
    const c = card('a', '2026-05-01T00:00:00.000Z', [['todo', 'done', '2026-05-31T23:59:59.999Z']]);
    const may = { fromMs: Date.parse('2026-05-01T00:00:00Z'), toMs: Date.parse('2026-06-01T00:00:00Z') };
    expect(finishedCards([c], new Map([['a', 'A']]), 'todo', 'done', may.fromMs, may.toMs)).toHaveLength(1);
    expect(finishedCards([c], new Map([['a', 'A']]), 'todo', 'done', may.toMs, may.toMs + 86_400_000)).toHaveLength(0);
  });

  it('percentiles by nearest rank', () => {
    expect(percentiles([])).toBeUndefined();
    expect(percentiles([5])).toEqual({ p50: 5, p85: 5, p95: 5 });
    const twenty = Array.from({ length: 20 }, (_, i) => 20 - i); // 20 … 1
    expect(percentiles(twenty)).toEqual({ p50: 10, p85: 17, p95: 19 });
  });

  it('weeks are UTC weeks from Monday: Sunday 23:30 and Monday 00:30 UTC fall in different weeks', () => {
    expect(weekOf(Date.parse('2026-05-10T23:30:00Z'))).toBe('2026-05-04'); // a Sunday
    expect(weekOf(Date.parse('2026-05-11T00:30:00Z'))).toBe('2026-05-11'); // the Monday after
    const t = throughput(
      [{ finished_at: '2026-05-10T23:30:00.000Z' }, { finished_at: '2026-05-11T00:30:00.000Z' }, { finished_at: '2026-05-12T10:00:00.000Z' }],
      Date.parse('2026-05-01T00:00:00Z'), Date.parse('2026-05-20T00:00:00Z'),
    );
    expect(t).toEqual([
      { week: '2026-04-27', finished: 0 },
      { week: '2026-05-04', finished: 1 },
      { week: '2026-05-11', finished: 2 },
      { week: '2026-05-18', finished: 0 },
    ]);
  });
});
