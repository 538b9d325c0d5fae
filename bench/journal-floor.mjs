// The embedded journal's own CPU per created task (docs/bench.md): the real
// `Journal` of the build (shared/dist) writing what a batched task create commits — the task's
// row, its `task.created` event's row, the events counter — in groups of `GROUP` tasks (one sqlite
// transaction each, as a batch request's group commit), then their FTS rows (the text index's
// flush). No HTTP, no bus, no in-memory store: what any write path on this journal costs at least.
// Compare with `node bench/cpu.mjs writes …` (server CPU per single create and per batched task).
//
//   node bench/journal-floor.mjs [groups=300] [group=100]
//
// Prints the median of 5 runs of µs of CPU (process.cpuUsage: user + system, every thread) per
// task, for the rows and the FTS flush. Writes a temp data dir, removed at the end.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Journal } from '../shared/dist/store/embedded/journal.js';
import { ALL_TEXT_FIELDS } from '../shared/dist/store/embedded/text-index.js';
import { CREATE_BODY } from './sections/http.mjs';

const GROUPS = Number(process.argv[2] ?? 300);
const GROUP = Number(process.argv[3] ?? 100);
const RUNS = 5;

/** A task and its `task.created` event as the service stores them (the shapes of a created task's rows). */
function taskAndEvent(i, seq) {
  const now = new Date().toISOString();
  const user = randomUUID();
  const { metadata, ...body } = CREATE_BODY;
  const task = {
    _id: randomUUID(), ...body, title: `batch ${i}`, path: '', checkInCount: 0, metadata: { order: 12.5, 'cf%2Epriority': 2 },
    created_at: now, created_by: user, updated_at: now, updated_by: user, linkedToIds: [], resourceIds: [], deleted: false, version: 1,
  };
  const { _id, ...rest } = task;
  const event = {
    _id: randomUUID(), seq, type: 'task.created', occurred_at: now, actor: user, request_id: randomUUID(),
    data: { task: { id: _id, ...rest, metadata } }, task_id: _id,
  };
  return [task, event];
}

const dir = mkdtempSync(join(tmpdir(), 'journal-floor-'));
try {
  const journal = new Journal(join(dir, 'store.sqlite'), 'normal');
  let rowid = 1;
  const counterRow = rowid++;
  let seq = 0;
  /** One group's changes, as the store's commit hands them to the journal. */
  const group = () => {
    const changes = [];
    for (let i = 0; i < GROUP; i++) {
      const [task, event] = taskAndEvent(i, ++seq);
      changes.push({ collection: 'tasks', id: task._id, doc: task, rowid: rowid++, inserted: true, textChanged: ALL_TEXT_FIELDS });
      changes.push({ collection: 'events', id: event._id, doc: event, rowid: rowid++, inserted: true });
    }
    changes.push({ collection: 'counters', id: 'events', doc: { _id: 'events', seq }, rowid: counterRow, inserted: seq === GROUP });
    return changes;
  };
  const cpu = () => {
    const u = process.cpuUsage();
    return u.user + u.system;
  };
  const rows = [];
  const fts = [];
  for (let run = 0; run <= RUNS; run++) {
    const groups = Array.from({ length: GROUPS }, group); // built outside the measured part
    let rowsUs = 0;
    let ftsUs = 0;
    for (let g = 0; g < groups.length; g++) {
      const a = cpu();
      journal.write(groups[g]);
      const b = cpu();
      journal.text.flushPending();
      ftsUs += cpu() - b;
      rowsUs += b - a;
    }
    if (run === 0) continue; // warm-up
    rows.push(rowsUs / (GROUPS * GROUP));
    fts.push(ftsUs / (GROUPS * GROUP));
  }
  journal.close();
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const f = (xs) => `${median(xs).toFixed(1)} (${xs.map((x) => x.toFixed(1)).join(' ')})`;
  console.log(`journal CPU µs per created task, groups of ${GROUP} tasks, ${GROUPS} groups per run, median of ${RUNS} runs:`);
  console.log(`  rows (task, event, counter; one sqlite transaction per group): ${f(rows)}`);
  console.log(`  FTS rows (title, description; the text index's flush):        ${f(fts)}`);
  console.log(`  together: ${(median(rows) + median(fts)).toFixed(1)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
