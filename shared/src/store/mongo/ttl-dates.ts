import type { Doc, Filter, Update } from '../port.js';

/**
 * MongoDB expires documents only on BSON dates, while the port's documents are JSON (ISO 8601
 * UTC strings). For a collection with a TTL index (`IndexSpec.expireAfterSeconds`), the backend
 * keeps that one top-level field as a BSON date in the database and hands it out as the ISO
 * string again: the conversion stays inside the store package (docs/store.md).
 */
export class TtlDates {
  constructor(readonly field: string) {}

  private toDate(v: unknown): unknown {
    if (typeof v !== 'string') return v;
    const t = Date.parse(v);
    return Number.isNaN(t) ? v : new Date(t);
  }

  /** A document going in: the field as a date. */
  doc<T extends Doc>(d: T): T {
    return this.field in d ? { ...d, [this.field]: this.toDate(d[this.field]) } : { ...d };
  }

  /** An update going in: `$set`/`$setOnInsert` of the field as a date. */
  update(u: Update): Update {
    const out: Update = { ...u };
    for (const op of ['$set', '$setOnInsert']) {
      const part = u[op] as Record<string, unknown> | undefined;
      if (part && this.field in part) out[op] = { ...part, [this.field]: this.toDate(part[this.field]) };
    }
    return out;
  }

  /** A filter going in: conditions on the field (a value or `{$op: value}`, also under `$and`/`$or`) as dates. */
  filter(f: Filter): Filter {
    const out: Filter = {};
    for (const [k, v] of Object.entries(f)) {
      if ((k === '$and' || k === '$or' || k === '$nor') && Array.isArray(v)) out[k] = v.map((x) => this.filter(x as Filter));
      else if (k !== this.field) out[k] = v;
      else if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
        out[k] = Object.fromEntries(Object.entries(v).map(([op, x]) => [op, Array.isArray(x) ? x.map((y) => this.toDate(y)) : this.toDate(x)]));
      } else out[k] = this.toDate(v);
    }
    return out;
  }

  /** A document coming out: the field back to its ISO string. */
  out<T>(d: T): T {
    if (d === null || typeof d !== 'object') return d;
    const v = (d as Record<string, unknown>)[this.field];
    if (v instanceof Date) (d as Record<string, unknown>)[this.field] = v.toISOString();
    return d;
  }
}
