import { describe, expect, it } from 'vitest';
import { isUuid, newEventId } from '@app/shared/domain';

describe('event ids (newEventId)', () => {
  it('are version 7 UUIDs carrying the time in ms: later ids sort after earlier ones, same-ms ids differ', () => {
    const t = Date.UTC(2026, 10, 24, 12, 0, 0, 123);
    const id = newEventId(t);
    expect(isUuid(id)).toBe(true);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(t);
    const same = Array.from({ length: 100 }, () => newEventId(t));
    expect(new Set(same).size).toBe(100);
    expect(newEventId(t + 1) > newEventId(t)).toBe(true);
    expect(newEventId(t + 1) > id).toBe(true);
  });
});
