import { describe, expect, it } from 'vitest';
import type { CustomField } from '../src/api/types.js';
import { fieldBadges, namesToKeys, slug, textOn } from '../src/board/fieldRules.js';

const field = (over: Partial<CustomField> & Pick<CustomField, 'key' | 'name' | 'type'>): CustomField => ({
  id: over.key, required: false, can_edit: true, version: 1, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', ...over,
});
const PRIORITY = field({ key: 'cf.priority', name: 'Priority', type: 'select', options: [{ id: 'p0', label: 'P0', color: '#d73a4a' }, { id: 'p1', label: 'P1' }] });
const ESTIMATE = field({ key: 'cf.estimate', name: 'Estimate', type: 'number' });
const LABELS = field({ key: 'cf.labels', name: 'Labels', type: 'multi_select', options: [{ id: 'ui', label: 'UI', color: '#1d76db' }, { id: 'api', label: 'API' }] });
const STATUS_NAMED = field({ key: 'cf.status', name: 'status', type: 'text' });

describe('custom fields in the web board', () => {
  it('writes defined fields by name in the filter box as their keys, quoting option labels', () => {
    const fields = [PRIORITY, ESTIMATE, STATUS_NAMED];
    expect(namesToKeys('Priority = P1', fields)).toBe("cf.priority = 'P1'");
    expect(namesToKeys('priority != p0 AND Estimate > 3', fields)).toBe("cf.priority != 'p0' AND cf.estimate > 3");
    expect(namesToKeys("(Estimate >= 2) ORDER BY Priority ASC", fields)).toBe('(cf.estimate >= 2) ORDER BY cf.priority ASC');
    // quoted text, other words, builtins and keys already written stay as they are
    expect(namesToKeys("title ~ 'Priority = P1' AND status = 'todo'", fields)).toBe("title ~ 'Priority = P1' AND status = 'todo'");
    expect(namesToKeys("cf.priority = 'p1' AND PriorityX = 2", fields)).toBe("cf.priority = 'p1' AND PriorityX = 2");
    expect(namesToKeys('Priority = P7', fields)).toBe('cf.priority = P7'); // not an option: the server says so
  });

  it('shows badges by option label and color, others as name and value', () => {
    const md = { 'cf.priority': 'p0', 'cf.estimate': 8, 'cf.labels': ['api', 'ui'], 'cf.free': 'x' };
    expect(fieldBadges(md, [PRIORITY, ESTIMATE, LABELS])).toEqual([
      { key: 'cf.priority', name: 'Priority', text: 'P0', color: '#d73a4a' },
      { key: 'cf.estimate', name: 'Estimate', text: 'Estimate 8' },
      { key: 'cf.labels', name: 'Labels', text: 'API' },
      { key: 'cf.labels', name: 'Labels', text: 'UI', color: '#1d76db' },
    ]);
    expect(fieldBadges({ 'cf.priority': 'gone' }, [PRIORITY])).toEqual([{ key: 'cf.priority', name: 'Priority', text: 'gone' }]);
    expect(textOn('#fbca04')).toBe('#1b1f24');
    expect(textOn('#1d76db')).toBe('#ffffff');
  });

  it('makes keys and option ids from names', () => {
    expect(slug('Story points')).toBe('story_points');
    expect(slug('P1')).toBe('p1');
    expect(slug('Größe!')).toBe('gro_e');
    expect(slug('***')).toBe('field');
  });
});
