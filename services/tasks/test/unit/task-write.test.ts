import { describe, expect, it } from 'vitest';
import { isUuid, newTaskDoc, normalizeDate, taskPatchUpdate, timeOrderedId, validatePath, validateTitle } from '@app/shared/domain';

const NOW = new Date('2026-11-22T10:00:00.000Z');

describe('normalizeDate', () => {
  it.each([
    ['2026-12-01', '2026-12-01T00:00:00.000Z'],
    ['2028-02-29', '2028-02-29T00:00:00.000Z'],
    ['2026-12-01T10:00:00Z', '2026-12-01T10:00:00.000Z'],
    ['2026-12-01t10:00:00.5z', '2026-12-01T10:00:00.500Z'],
    ['2026-12-01T01:00:00+02:00', '2026-11-30T23:00:00.000Z'],
    ['2026-12-31T20:00:00.123-05:30', '2027-01-01T01:30:00.123Z'],
  ])('%s → %s', (input, out) => {
    expect(normalizeDate('/deadline', input)).toBe(out);
  });

  it.each(['', 'today', '2026-2-1', '2026/12/01', '2026-02-29', '2026-04-31', '2026-00-10', '2026-12-01T10:00:00',
    '2026-12-01T10:00Z', '2026-12-01T24:00:00Z', '2026-12-01T10:60:00Z', '2026-12-01T10:00:00+24:00', '2026-12-01 10:00:00Z'])(
    'rejects %j naming the field',
    (input) => {
      expect(() => normalizeDate('/kickoff', input)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED', validationErrors: [expect.objectContaining({ field: '/kickoff' })] }));
    },
  );
});

describe('validatePath / validateTitle', () => {
  it.each(['', '/', '/a', '/projects/sprint-3', '/a b/c.d'])('accepts path %j', (p) => {
    expect(validatePath('/path', p)).toBe(p);
  });
  it.each(['a', '//', '/a/', '/a//b', '/ a', '/a ', '/.a', '/a.', '/a*b', '/a\\b', `/${'x'.repeat(65)}`])('rejects path %j', (p) => {
    expect(() => validatePath('/path', p)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
  });
  it('trims titles and bounds them', () => {
    expect(validateTitle('  hi  ')).toBe('hi');
    expect(() => validateTitle(' \t ')).toThrow(expect.objectContaining({ validationErrors: [expect.objectContaining({ field: '/title' })] }));
    expect(() => validateTitle('x'.repeat(501), '/cards/0/title')).toThrow(expect.objectContaining({ validationErrors: [expect.objectContaining({ field: '/cards/0/title' })] }));
  });
});

describe('newTaskDoc', () => {
  it('fills the defaults and gives every task a fresh id', () => {
    const a = newTaskDoc({ title: 'x' }, 'u1', NOW);
    const b = newTaskDoc({ title: 'x' }, 'u1', NOW);
    expect(a._id).not.toBe(b._id);
    expect(a).toEqual({
      _id: a._id, title: 'x', description: '', status: 'todo', path: '', tags: [], checkInCount: 0, metadata: {},
      created_at: NOW.toISOString(), created_by: 'u1', updated_at: NOW.toISOString(), updated_by: 'u1',
      linkedToIds: [], resourceIds: [], deleted: false, version: 1,
    });
  });
});

describe('taskPatchUpdate', () => {
  it('sets given fields, unsets cleared ones and merges metadata by escaped path', () => {
    expect(taskPatchUpdate({ status: 'done', assignee: '', deadline: '2026-12-01', metadata: { 'app.sprint': 's' } }, 'u2', NOW)).toEqual({
      $set: { status: 'done', deadline: '2026-12-01T00:00:00.000Z', 'metadata.app%2Esprint': 's', updated_at: NOW.toISOString(), updated_by: 'u2' },
      $unset: { assignee: '' },
    });
  });
  it('only stamps the update when nothing is given', () => {
    expect(taskPatchUpdate({}, 'u2', NOW)).toEqual({ $set: { updated_at: NOW.toISOString(), updated_by: 'u2' } });
  });
});

describe('timeOrderedId (task and event ids)', () => {
  it('is a UUID v7 carrying the time, and ids increase in creation order', () => {
    const before = Date.now();
    const ids = Array.from({ length: 5000 }, () => timeOrderedId());
    const after = Date.now();
    for (const id of ids) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(isUuid(id)).toBe(true);
    }
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id, i) => i === 0 || ids[i - 1]! < id)).toBe(true);
    const ms = (id: string) => parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
    expect(ms(ids[0]!)).toBeGreaterThanOrEqual(before);
    // the time field may run ahead of the clock only after 2,048+ ids in one millisecond
    expect(ms(ids[ids.length - 1]!)).toBeLessThanOrEqual(after + 3);
  });

  it('new tasks get one', () => {
    const a = newTaskDoc({ title: 'a' }, 'u', NOW);
    const b = newTaskDoc({ title: 'b' }, 'u', NOW);
    expect(a._id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    expect(a._id < b._id).toBe(true);
  });
});
