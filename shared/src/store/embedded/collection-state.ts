import { AppError } from '../../errors/index.js';
import type { Doc, Filter } from '../port.js';
import { hashKey, hashKeysAt } from './values.js';

/** A stored document and its version (a store-wide sequence number bumped on every write). */
export interface Entry {
  doc: Doc;
  version: number;
}

/** Key of a missing or null field in a unique index (MongoDB indexes both as null). */
const NULL_KEY = 'z';

/**
 * An in-memory hash index: key of a field value → ids of the documents holding it. Array fields
 * index each element. Single-field indexes serve as equality prefilters; a `unique` index also
 * enforces uniqueness of its (possibly compound) key.
 */
export class HashIndex {
  private readonly map = new Map<string, Set<string>>();
  private readonly paths: string[][];

  constructor(
    readonly fields: readonly string[],
    readonly unique: boolean,
  ) {
    this.paths = fields.map((f) => f.split('.'));
  }

  /** The index keys of a document (compound keys are the cartesian product of field keys). */
  keys(doc: Doc): string[] {
    const perField = this.paths.map((p) => {
      const keys = hashKeysAt(doc, p);
      return keys.length === 0 && this.unique ? [NULL_KEY] : keys;
    });
    if (perField.length === 1) return perField[0]!;
    return perField.reduce<string[]>((acc, ks) => acc.flatMap((a) => ks.map((k) => `${a}\u0000${k}`)), ['']);
  }

  ids(key: string): ReadonlySet<string> | undefined {
    return this.map.get(key);
  }

  add(id: string, doc: Doc): void {
    for (const k of this.keys(doc)) {
      const set = this.map.get(k);
      if (set) set.add(id);
      else this.map.set(k, new Set([id]));
    }
  }

  remove(id: string, doc: Doc): void {
    for (const k of this.keys(doc)) {
      const set = this.map.get(k);
      set?.delete(id);
      if (set?.size === 0) this.map.delete(k);
    }
  }
}

/** Ids a plan hands out: iterated (the first set of a plan) or tested for membership (the others). */
export interface IdSet extends Iterable<string> {
  /** The number of ids, or an upper bound of it (a union). */
  readonly size: number;
  has(id: string): boolean;
}

/** The union of id sets without copying them (a `$or`, or `$in` on an index); yields each id once. */
class UnionView implements IdSet {
  readonly size: number;

  constructor(private readonly sets: readonly IdSet[]) {
    this.size = sets.reduce((n, s) => n + s.size, 0);
  }

  has(id: string): boolean {
    return this.sets.some((s) => s.has(id));
  }

  *[Symbol.iterator](): Iterator<string> {
    for (let i = 0; i < this.sets.length; i++) {
      next: for (const id of this.sets[i]!) {
        for (let j = 0; j < i; j++) if (this.sets[j]!.has(id)) continue next;
        yield id;
      }
    }
  }
}

const EMPTY: IdSet = new Set<string>();

/**
 * An index set beyond the smallest is used as a membership test only when it holds at most this
 * share of the collection: a lookup is cheaper than testing the filter on the document, but a set
 * as big as the collection (`deleted: false`) rejects too little to pay for it.
 */
const SELECTIVE = 0.5;

function smallest(sets: IdSet[]): IdSet | undefined {
  return sets.reduce<IdSet | undefined>((best, s) => (!best || s.size < best.size ? s : best), undefined);
}

/**
 * The equality values a filter condition pins a field to (`v`, `{$eq: v}`, `{$in: [...]}`), when
 * all are strings, numbers or booleans; otherwise `undefined` (the index cannot answer it).
 */
function equalityValues(cond: unknown): unknown[] | undefined {
  if (hashKey(cond) !== undefined) return [cond];
  if (typeof cond !== 'object' || cond === null || Array.isArray(cond)) return undefined;
  const ops = cond as Record<string, unknown>;
  if (!Object.keys(ops).every((k) => k.startsWith('$'))) return undefined;
  if ('$eq' in ops && hashKey(ops.$eq) !== undefined) return [ops.$eq];
  if (Array.isArray(ops.$in) && ops.$in.every((v) => hashKey(v) !== undefined)) return ops.$in;
  return undefined;
}

/** One collection of the embedded store: its documents, in insertion order, and its indexes. */
export class CollectionState {
  readonly entries = new Map<string, Entry>();
  private readonly indexes: HashIndex[] = [];

  constructor(readonly name: string) {}

  /** Unique indexes, for the uniqueness checks of writes. */
  uniqueIndexes(): HashIndex[] {
    return this.indexes.filter((ix) => ix.unique);
  }

  /**
   * Adds an index unless an equal or stronger one exists; builds it from the stored documents.
   * Throws `CONFLICT` when a unique index meets duplicate keys (the index is then not added).
   */
  addIndex(fields: readonly string[], unique: boolean): void {
    const same = this.indexes.findIndex((ix) => ix.fields.join() === fields.join());
    if (same >= 0 && (this.indexes[same]!.unique || !unique)) return;
    const index = new HashIndex(fields, unique);
    for (const [id, { doc }] of this.entries) {
      if (unique && index.keys(doc).some((k) => index.ids(k)?.size)) {
        throw new AppError('CONFLICT', {
          message: `Duplicate keys prevent a unique index on ${this.name} (${fields.join(', ')})`,
          details: { collection: this.name, fields: [...fields] },
        });
      }
      index.add(id, doc);
    }
    if (same >= 0) this.indexes[same] = index;
    else this.indexes.push(index);
  }

  /** Stores (or with `null` removes) a document under a new version, maintaining the indexes. */
  apply(id: string, doc: Doc | null, version: number): void {
    const old = this.entries.get(id);
    for (const ix of this.indexes) {
      if (old) ix.remove(id, old.doc);
      if (doc) ix.add(id, doc);
    }
    if (doc) this.entries.set(id, { doc, version });
    else this.entries.delete(id);
  }

  /**
   * Index sets that each hold every match of `filter` (so their intersection does too); empty
   * when no index applies (full scan). Uses an equality or `$in` on `_id` or an indexed field at
   * the top level or inside a top-level `$and`, and a `$or` whose every branch is indexable (the
   * union of the branches' smallest sets). The smallest set comes first, followed by the other
   * selective ones. Callers iterate the first, skip ids missing from the others, and re-check every
   * candidate against the whole filter.
   */
  plan(filter: Filter): IdSet[] {
    const sets: IdSet[] = [];
    for (const [key, cond] of Object.entries(filter)) {
      if (key === '$and' && Array.isArray(cond)) {
        for (const sub of cond) sets.push(...this.plan(sub as Filter));
      } else if (key === '$or' && Array.isArray(cond)) {
        const union = this.union(cond.map((branch) => smallest(this.plan(branch as Filter))));
        if (union) sets.push(union);
      } else if (!key.startsWith('$')) {
        const set = this.lookup(key, cond);
        if (set) sets.push(set);
      }
    }
    sets.sort((a, b) => a.size - b.size);
    return sets.filter((set, i) => i === 0 || set.size <= this.entries.size * SELECTIVE);
  }

  private lookup(field: string, cond: unknown): IdSet | undefined {
    const values = equalityValues(cond);
    if (!values) return undefined;
    if (field === '_id') return new Set(values.filter((v): v is string => typeof v === 'string' && this.entries.has(v)));
    const index = this.indexes.find((ix) => ix.fields.length === 1 && ix.fields[0] === field);
    if (!index) return undefined;
    return this.union(values.map((v) => index.ids(hashKey(v)!) ?? EMPTY));
  }

  private union(sets: Array<IdSet | undefined>): IdSet | undefined {
    if (sets.length === 0 || sets.some((s) => s === undefined)) return undefined;
    return sets.length === 1 ? sets[0] : new UnionView(sets as IdSet[]);
  }
}
