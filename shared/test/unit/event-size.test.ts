import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TASK_MAX_BYTES } from '../../src/contracts/index.js';
import { checkEventSize, checkTaskSize, jsonBound, taskCreatedEvent } from '../../src/domain/events.js';
import { newTaskDoc } from '../../src/domain/task-write.js';
import { thrown } from '../../src/testing/index.js';

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8');

/** The size limits of tasks and events (docs/tasks.md "Limits", docs/events.md "Sizes"). */
describe('task and event size limits', () => {
  it('the one-pass bound is never below the JSON text, whatever the strings hold', () => {
    const text = fc.string({ unit: fc.constantFrom('a', '\u0002', '"', '\\', 'é', '€', '\ud83d\ude00', '\ud800') });
    const value = fc.letrec((tie) => ({
      any: fc.oneof({ depthSize: 'small' }, text, fc.double(), fc.boolean(), fc.constant(null), tie('arr'), tie('obj')),
      arr: fc.array(tie('any'), { maxLength: 5 }),
      obj: fc.dictionary(text, tie('any'), { maxKeys: 5 }),
    })).any;
    fc.assert(fc.property(value, (v) => jsonBound(v) >= bytes(v)), { numRuns: 2000 });
    // the longest text a double prints: a sign, `0.00000` and 17 significant digits
    expect(jsonBound(-0.0000010000000083027071)).toBeGreaterThanOrEqual(bytes(-0.0000010000000083027071));
  });

  it('a task is measured by its JSON text: just at the limit passes, one byte over is a 413 naming the largest field', () => {
    const base = { id: 'x', title: 't', description: '' };
    const room = TASK_MAX_BYTES - bytes(base);
    // 'é' is 2 bytes of UTF-8: the bound (6 per character) is over the limit, the text is not
    const fill = 'é'.repeat(Math.floor(room / 2)) + (room % 2 ? 'a' : '');
    const atLimit = { ...base, description: fill };
    expect(bytes(atLimit)).toBe(TASK_MAX_BYTES);
    expect(() => checkTaskSize(atLimit as never)).not.toThrow();
    const over = { ...base, description: `${fill}a` };
    const err = thrown(() => checkTaskSize(over as never));
    expect(err.code).toBe('PAYLOAD_TOO_LARGE');
    expect(err.details).toMatchObject({ field: '/description', bytes: TASK_MAX_BYTES + 1, max_bytes: TASK_MAX_BYTES });
  });

  it('an event of control characters counts their escapes: 200,000 U+0002 is 1.2 MB of JSON, a 413', () => {
    const data = { text: '\u0002'.repeat(200_000) };
    const err = thrown(() => checkEventSize({ type: 'task.updated', data } as never));
    expect(err.code).toBe('PAYLOAD_TOO_LARGE');
    expect(err.details).toMatchObject({ event_type: 'task.updated', bytes: 6 * 200_000 + '{"text":""}'.length });
  });

  it('a created event carries the bound of its data, as a walk of it gives', () => {
    const doc = newTaskDoc({ title: 'Write "the" notes é', tags: ['docs'], metadata: { order: 12.5, 'cf.priority': 2 } }, 'user-1', new Date('2026-01-05T10:00:00.000Z'));
    const e = taskCreatedEvent(doc);
    expect(e.dataBound).toBe(jsonBound(e.data));
    expect(e.dataBound).toBeGreaterThanOrEqual(bytes(e.data));
  });
});
