/**
 * Reads in steps (docs/store.md "Long reads and other users' requests"): a read outside a
 * transaction whose synchronous try ran past its slice (`scan-clock.ts` {@link STEP}) runs again
 * here, holding the event loop at most {@link SLICE_MS} at a time, with a turn of the event loop
 * between two steps so that every other request (of any user) is served meanwhile, the way
 * MongoDB yields a long query.
 *
 * What a read in steps sees: the candidates of its plan as they are when it starts (their slots,
 * copied), each document as it is when the scan reaches it, each at most once; a document
 * written between two steps is seen in its new state if the scan had not reached it yet (as
 * MongoDB's reads outside a transaction, which are no snapshot either). A sorted read keeps its
 * best rows so far between steps (its `skip + limit` first), sorting each step's matches and
 * merging them in, so no step sorts more than one step's matches.
 */
import { currentRequest } from '../../util/request-scope.js';
import type { Doc, Filter, Sort } from '../port.js';
import type { CollectionState } from './collection-state.js';
import { compileFilter, type Matcher } from './matcher.js';
import { queryTimeout } from '../rules.js';
import { CHECK_EVERY, SLICE_MS } from './scan-clock.js';
import { eachSlot } from './slots.js';
import { compareValues, sortKey } from './values.js';

/** Reads in steps waiting for their next step, in the order they gave way. */
const waiting: Array<() => void> = [];
let scheduled = false;

/** Runs the next waiting step, and leaves the one after it for the next turn of the event loop. */
function stepOne(): void {
  const next = waiting.shift();
  scheduled = waiting.length > 0;
  if (scheduled) setImmediate(stepOne);
  next?.();
}

/**
 * Waits for this read's next step. One step of one read runs per turn of the event loop, the
 * reads taking turns: whatever arrived meanwhile (I/O, other users' requests) is served between
 * any two steps, however many reads run in steps at once.
 */
function turn(): Promise<void> {
  const scope = currentRequest();
  const since = performance.now();
  return new Promise((resolve) => {
    // the wait is not the request's own cost (the request scope's `waitedMs`)
    waiting.push(scope === undefined ? resolve : () => {
      scope.waitedMs += performance.now() - since;
      resolve();
    });
    if (!scheduled) {
      scheduled = true;
      setImmediate(stepOne);
    }
  });
}

/** The clock of a read in steps: its limit (named in `QUERY_TIMEOUT`) and `performance.now()` deadline. */
export interface StepClock {
  limitMs: number;
  deadline: number;
}

/** A match of a sorted read with its sort keys (one per sort field), computed once. */
interface Row {
  doc: Doc;
  keys: unknown[];
}

/**
 * Calls `visit` with every stored candidate of `filter`'s plan that passes the filter, in slot
 * order, in steps of at most {@link SLICE_MS}, until `visit` returns false. Counts the documents
 * examined into `stats`; rejects with `QUERY_TIMEOUT` past `clock.deadline`.
 */
async function scan(state: CollectionState, filter: Filter, stats: { docsExamined: number }, clock: StepClock, visit: (doc: Doc) => boolean): Promise<void> {
  const { slots, exact } = state.plan(filter);
  let candidates: number[] | undefined;
  if (slots) {
    candidates = [];
    const into = candidates;
    eachSlot(slots, (slot) => (into.push(slot), true));
  }
  const end = candidates ? candidates.length : state.bySlot.length;
  const matches: Matcher | undefined = exact ? undefined : compileFilter(filter);
  let i = 0;
  while (i < end) {
    // the synchronous try that gave way was this read's first slice
    await turn();
    const sliceEnd = performance.now() + SLICE_MS;
    for (;;) {
      const stop = Math.min(end, i + CHECK_EVERY);
      for (; i < stop; i++) {
        const entry = state.bySlot[candidates ? candidates[i]! : i];
        if (entry === undefined) continue; // deleted since the read started
        stats.docsExamined++;
        if ((matches === undefined || matches(entry.doc)) && !visit(entry.doc)) return;
      }
      const now = performance.now();
      if (now >= clock.deadline) throw queryTimeout(clock.limitMs);
      if (i >= end || now >= sliceEnd) break;
    }
  }
}

/**
 * The order of `sort` on rows: by each field's sort key, MongoDB order; rows equal in every key
 * keep their order. A sort a sort index serves (`byIndex`: {@link CollectionState.sortsByIndex})
 * ties on `_id` as the index does (`sort-index.ts`), so a page read in steps agrees with the
 * pages read at once before it.
 */
function rowOrder(sort: Sort, byIndex: boolean): { keysOf: (doc: Doc) => unknown[]; cmp: (a: Row, b: Row) => number } {
  const fields = Object.keys(sort);
  const specs = (byIndex && fields.length === 1 ? [...fields, '_id'] : fields).map((f) => ({ path: f.split('.'), dir: (sort[f] ?? sort[fields[0]!]!) }));
  return {
    keysOf: (doc) => specs.map((s) => sortKey(doc, s.path, s.dir)),
    cmp: (a, b) => {
      for (let j = 0; j < specs.length; j++) {
        const c = compareValues(a.keys[j], b.keys[j]) * specs[j]!.dir;
        if (c !== 0) return c;
      }
      return 0;
    },
  };
}

/** The first `n` of two runs sorted by `cmp`, merged (ties: `a`'s first). */
function mergeRuns(a: Row[], b: Row[], n: number, cmp: (x: Row, y: Row) => number): Row[] {
  const out: Row[] = [];
  let i = 0;
  let j = 0;
  while (out.length < n && (i < a.length || j < b.length)) {
    if (j >= b.length || (i < a.length && cmp(a[i]!, b[j]!) <= 0)) out.push(a[i++]!);
    else out.push(b[j++]!);
  }
  return out;
}

/**
 * The matches of `filter` in `state`'s committed documents, in steps: sorted by `sort` (else in
 * slot order), then `skip` and `limit` applied (counts of documents; no `limit`: all). Rejects
 * with `QUERY_TIMEOUT` past `clock.deadline`. Documents are the stored ones (frozen).
 */
export async function findInSteps(
  state: CollectionState, filter: Filter, opts: { sort?: Sort; skip?: number; limit?: number },
  stats: { docsExamined: number }, clock: StepClock,
): Promise<Doc[]> {
  const skip = opts.skip ?? 0;
  const n = opts.limit ? skip + opts.limit : Infinity;
  if (!opts.sort || Object.keys(opts.sort).length === 0) {
    const out: Doc[] = [];
    await scan(state, filter, stats, clock, (doc) => out.push(doc) < n);
    return out.slice(skip);
  }
  const { keysOf, cmp } = rowOrder(opts.sort, state.sortsByIndex(opts.sort));
  let best: Row[] = [];
  let pending: Row[] = [];
  const mergePending = () => {
    pending.sort(cmp); // stable: equal rows keep their slot order
    best = mergeRuns(best, pending, n, cmp);
    pending = [];
  };
  await scan(state, filter, stats, clock, (doc) => {
    pending.push({ doc, keys: keysOf(doc) });
    // a step's matches are merged in before they grow past what a slice sorts
    if (pending.length >= CHECK_EVERY * 4) mergePending();
    return true;
  });
  mergePending();
  return best.slice(skip).map((r) => r.doc);
}

/** The number of matches of `filter` in `state`'s committed documents, counted in steps (as {@link findInSteps}). */
export async function countInSteps(state: CollectionState, filter: Filter, stats: { docsExamined: number }, clock: StepClock): Promise<number> {
  let count = 0;
  await scan(state, filter, stats, clock, () => {
    count++;
    return true;
  });
  return count;
}
