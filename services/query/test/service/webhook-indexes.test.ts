import { describe, expect, it } from 'vitest';
import { Collections, type IndexSpec } from '@app/shared/store';
import { queryService } from '../../src/service.js';

/**
 * The dispatcher's reads of webhook deliveries are answered from an index's first entries on
 * MongoDB (docs/events.md "Delivery"): an index whose keys are the read's equality fields, then its
 * sort field, finds the first match without walking the rows before it.
 */
function serves(spec: IndexSpec, equality: string[], sort: string): boolean {
  const keys = Object.keys(spec.keys);
  return keys.length > equality.length && new Set(keys.slice(0, equality.length)).size === equality.length &&
    equality.every((f) => keys.slice(0, equality.length).includes(f)) && keys[equality.length] === sort;
}

describe('webhook delivery indexes', () => {
  const deliveries = queryService.indexes.filter((s) => s.collection === Collections.webhookDeliveries);

  it("a webhook's oldest pending delivery ({webhook_id, status} in seq order) needs no walk over its delivered rows", () => {
    expect(deliveries.some((s) => serves(s, ['webhook_id', 'status'], 'seq'))).toBe(true);
  });

  it("a webhook's delivery log ({webhook_id} newest first) and the deliveries due now ({status} by next_attempt_at) have theirs", () => {
    expect(deliveries.some((s) => serves(s, ['webhook_id'], 'seq'))).toBe(true);
    expect(deliveries.some((s) => serves(s, ['status'], 'next_attempt_at'))).toBe(true);
  });
});
