import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeMetadata, encodeMetadata, escapeKey, metadataPath, unescapeKey } from '@app/shared/store';

describe('metadata key escaping', () => {
  it.each([
    ['app.sprint', 'app%2Esprint'],
    ['cf.x', 'cf%2Ex'],
    ['order', 'order'],
    ['$weird', '%24weird'],
    ['a$b', 'a$b'],
    ['a%2Eb', 'a%252Eb'],
    ['100%', '100%25'],
    ['%24x', '%2524x'],
    ['ключ.ü', 'ключ%2Eü'],
    ['', ''],
  ])('%j is stored as %j', (key, stored) => {
    expect(escapeKey(key)).toBe(stored);
    expect(unescapeKey(stored)).toBe(key);
  });

  it('round-trips any key; escaped keys have no dot and no leading $', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: fc.constantFrom('.', '$', '%', '2', 'E', '4', '5', 'a') }), fc.string({ unit: 'grapheme' })), (key) => {
        const stored = escapeKey(key);
        expect(unescapeKey(stored)).toBe(key);
        expect(stored).not.toContain('.');
        expect(stored.startsWith('$')).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('encodes and decodes whole metadata objects; paths point into the escaped sub-document', () => {
    const meta = { 'app.sprint': 's1', 'cf.priority': 2, $weird: [1], plain: { a: 1 } };
    const stored = encodeMetadata(meta);
    expect(Object.keys(stored)).toEqual(['app%2Esprint', 'cf%2Epriority', '%24weird', 'plain']);
    expect(decodeMetadata(stored)).toEqual(meta);
    expect(encodeMetadata(undefined)).toEqual({});
    expect(decodeMetadata(null)).toEqual({});
    expect(metadataPath('app.sprint')).toBe('metadata.app%2Esprint');
  });
});
