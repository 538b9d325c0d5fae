import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toStored } from '../../src/store/embedded/values.js';

/** The embedded store's document copy has exactly JSON's semantics (what memory holds = what the journal holds). */
describe('toStored', () => {
  const json = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;

  it('equals a JSON round trip for any JSON-like value, with undefined, NaN, Infinity, dates and functions mixed in', () => {
    const odd = fc.constantFrom(undefined, NaN, Infinity, -0, new Date(Date.UTC(2026, 0, 2)), () => 1, Symbol('s'));
    const value = fc.letrec((tie) => ({
      any: fc.oneof({ depthSize: 'small' }, fc.jsonValue(), odd, tie('arr'), tie('obj')),
      arr: fc.array(tie('any'), { maxLength: 5 }),
      obj: fc.dictionary(fc.string(), tie('any'), { maxKeys: 5 }),
    })).obj;
    fc.assert(fc.property(value, (v) => {
      expect(JSON.stringify(toStored(v))).toBe(JSON.stringify(json(v)));
      expect(toStored(v)).toEqual(json(v));
    }));
  });

  it('copies (never shares) nested objects, and keeps a __proto__ key as JSON does', () => {
    const inner = { a: [1, { b: 2 }] };
    const out = toStored({ inner });
    expect(out).toEqual({ inner });
    expect(out.inner).not.toBe(inner);
    const weird = JSON.parse('{"__proto__": {"x": 1}, "y": 2}') as Record<string, unknown>;
    expect(JSON.stringify(toStored(weird))).toBe('{"__proto__":{"x":1},"y":2}');
    expect(Object.getPrototypeOf(toStored(weird))).toBe(Object.prototype);
  });

  it('rejects a cycle as JSON does', () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    expect(() => toStored(a)).toThrow(TypeError);
  });
});
