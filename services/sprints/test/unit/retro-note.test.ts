import { describe, expect, it } from 'vitest';
import { renderRetroNote } from '../../src/domain/retro-note.js';
import { toMember, velocityOf } from '../../src/domain/members.js';

const done = (id: string, title: string, points?: number) => ({ id, title, status: 'done', points });

describe('renderRetroNote', () => {
  it('lists dates, velocity, finished items with points and rolled-over items with their target', () => {
    const md = renderRetroNote({
      sprint: { id: 's1', title: 'Sprint\n7', kickoff: '2026-03-02T00:00:00.000Z', deadline: '2026-03-13T00:00:00.000Z' },
      finished: [done('a', 'Login page', 3), done('b', 'Docs')],
      unfinished: [{ id: 'c', title: 'Search', status: 'doing', points: 5 }],
      target: { kind: 'sprint', id: 's2', title: 'Sprint 8' },
      velocity: 3,
      closedAt: '2026-03-13T17:00:00.000Z',
      closedBy: 'u1',
    });
    expect(md).toBe(
      [
        '## Sprint retro: Sprint 7',
        '',
        '- Closed: 2026-03-13T17:00:00.000Z by `u1`',
        '- Window: 2026-03-02T00:00:00.000Z to 2026-03-13T00:00:00.000Z',
        '- Velocity: **3** points from 2 finished items (1 without numeric points)',
        '',
        '### Finished (2)',
        '',
        '- Login page (`a`): 3 points',
        '- Docs (`b`): no points',
        '',
        '### Rolled over (1)',
        '',
        'Moved to sprint "Sprint 8" (`s2`):',
        '',
        '- Search (`c`): status `doing`',
        '',
      ].join('\n'),
    );
  });

  it('says so when nothing was finished or left over', () => {
    const md = renderRetroNote({
      sprint: { id: 's1', title: 'Empty' },
      finished: [],
      unfinished: [],
      target: { kind: 'none' },
      velocity: 0,
      closedAt: '2026-03-13T17:00:00.000Z',
      closedBy: 'u1',
    });
    expect(md).toContain('- Window: no kickoff to no deadline');
    expect(md).toContain('- Velocity: **0** points from 0 finished items\n');
    expect(md).toContain('### Finished (0)\n\n_None._');
    expect(md).toContain('### Rolled over (0)\n\n_Nothing was left unfinished._');
  });

  it('names the backlog as target and uses the singular for one point', () => {
    const md = renderRetroNote({
      sprint: { id: 's1', title: 'S' },
      finished: [done('a', 'A', 1)],
      unfinished: [{ id: 'b', title: 'B', status: 'todo', points: undefined }],
      target: { kind: 'backlog' },
      velocity: 1,
      closedAt: 'x',
      closedBy: 'u1',
    });
    expect(md).toContain('- A (`a`): 1 point\n');
    expect(md).toContain('from 1 finished item\n');
    expect(md).toContain('Moved to the backlog:\n\n- B (`b`): status `todo`');
  });
});

describe('velocity', () => {
  const member = (points: unknown) =>
    toMember({ _id: 'x', title: 't', status: 'done', metadata: points === undefined ? {} : { 'app%2Epoints': points } });

  it('reads only finite JSON numbers as points', () => {
    expect([1.5, 0, -2, '3', true, null, undefined, [1], { v: 1 }].map((p) => member(p).points)).toEqual([
      1.5, 0, -2, undefined, undefined, undefined, undefined, undefined, undefined,
    ]);
  });

  it('sums fractional points without float noise', () => {
    expect(velocityOf([0.1, 0.2, 2.5].map(member))).toBe(2.8);
    expect(velocityOf([])).toBe(0);
  });
});
