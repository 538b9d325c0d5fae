// Bench data: realistic stored tasks (titles, descriptions, status mix, tags, metadata.order,
// custom fields), written straight into an EmbeddedStore with insertMany in chunks.
//
// As a process: `node bench/seed.mjs <query|board> <dir>` (or `scale <dir> <tasks>`) seeds the store
// in <dir>, closes it and prints `READY <json>` (ids the benchmark needs), so the server then starts
// on a seeded directory.
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { BoardsOps } from '@app/shared/contracts';
import { MemoryBus } from '@app/shared/bus';
import { systemClock } from '@app/shared/domain';
import { silentLogger } from '@app/shared/log';
import { serveServices } from '@app/shared/runtime';
import { Collections, EmbeddedStore, encodeMetadata } from '@app/shared/store';
import { ensureBenchUsers } from './lib.mjs';

/** Documents per insertMany call. */
const CHUNK = 2_000;

/** A small deterministic PRNG (mulberry32): the same data on every run. */
export function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = (list) => list[Math.floor(next() * list.length)];
  const weighted = (pairs) => {
    let r = next();
    for (const [v, w] of pairs) if ((r -= w) < 0) return v;
    return pairs[pairs.length - 1][0];
  };
  return { next, pick, weighted };
}

const VERBS = ['Fix', 'Add', 'Refactor', 'Document', 'Review', 'Migrate', 'Test', 'Design', 'Remove', 'Update', 'Investigate', 'Speed up'];
const OBJECTS = [
  'login redirect', 'billing export', 'search index', 'sprint report', 'board filters', 'API rate limits', 'user avatars',
  'email digest', 'audit log', 'payment webhook', 'CSV import', 'dark mode', 'release notes', 'onboarding flow',
  'cache layer', 'notification settings', 'password reset', 'invoice PDF', 'team permissions', 'mobile menu',
];
const QUALIFIERS = ['for SSO users', 'on mobile', 'in the admin panel', 'before the Q4 release', 'for shared boards', 'behind a flag', 'on Safari', 'for large accounts', '', ''];
const SENTENCES = [
  'Customers reported the problem twice this week.', 'See the linked design doc for the agreed approach.',
  'Keep the old behaviour behind a flag until the migration is done.', 'Needs a test that covers the empty state.',
  'Check the logs from the last incident before starting.', 'Coordinate with the platform team about the rollout.',
  'The acceptance criteria are in the epic.', 'Measure before and after; attach the numbers here.',
];
/** Tags besides `dev` (which 35 % of tasks carry). */
const OTHER_TAGS = ['ops', 'bug', 'docs', 'ux', 'backend', 'frontend', 'q4', 'infra', 'security', 'tech-debt'];
const STATUS_MIX = [['todo', 0.35], ['doing', 0.25], ['review', 0.1], ['done', 0.3]];
const PATHS = ['', '', '', '/projects/alpha', '/projects/beta', '/ops/runbooks'];
const DAY_MS = 86_400_000;
const NOW = Date.parse('2026-11-20T12:00:00.000Z');

/** One title like "Fix payment webhook for large accounts". */
export function title(r) {
  return [r.pick(VERBS), r.pick(OBJECTS), r.pick(QUALIFIERS)].filter(Boolean).join(' ');
}

/**
 * A stored task (TaskDoc shape, escaped metadata) owned by `owner`. `over` sets fields directly
 * (status, tags, groupId, boardId…); `meta` adds API metadata keys.
 */
export function taskDoc(r, owner, over = {}, meta = {}) {
  const created = NOW - Math.floor(r.next() * 365 * DAY_MS);
  const updated = Math.min(NOW, created + Math.floor(r.next() * 30 * DAY_MS));
  const tags = new Set(r.next() < 0.35 ? ['dev'] : []);
  for (let i = Math.floor(r.next() * 3); i > 0; i--) tags.add(r.pick(OTHER_TAGS));
  const metadata = { order: Math.round(r.next() * 100_000) / 10, 'cf.priority': 1 + Math.floor(r.next() * 4) };
  if (r.next() < 0.6) metadata['app.points'] = r.pick([1, 2, 3, 5, 8]);
  return {
    _id: randomUUID(),
    title: title(r),
    description: Array.from({ length: 1 + Math.floor(r.next() * 3) }, () => r.pick(SENTENCES)).join(' '),
    status: r.weighted(STATUS_MIX),
    path: r.pick(PATHS),
    tags: [...tags],
    checkInCount: Math.floor(r.next() * 4),
    metadata: encodeMetadata({ ...metadata, ...meta }),
    created_at: new Date(created).toISOString(),
    created_by: owner,
    updated_at: new Date(updated).toISOString(),
    updated_by: owner,
    linkedToIds: [],
    resourceIds: [],
    deleted: r.next() < 0.01,
    ...over,
  };
}

/** Inserts documents into `collection` with insertMany in chunks of {@link CHUNK}. */
export async function insertChunks(store, collection, docs) {
  const coll = store.collection(collection);
  for (let i = 0; i < docs.length; i += CHUNK) await coll.insertMany(docs.slice(i, i + CHUNK));
}

/** A group owned by `owner` with `members` as members (GroupDoc shape). */
export function groupDoc(name, owner, members) {
  return {
    _id: randomUUID(),
    name,
    owner_id: owner,
    members: [{ user_id: owner, role: 'owner' }, ...members.map((user_id) => ({ user_id, role: 'member' }))],
    created_at: new Date(NOW).toISOString(),
  };
}

/**
 * Query section data: 100 users × 1,000 tasks, plus 10,000 tasks of a group (created by 10 other
 * members) that user 0 belongs to, so user 0's read scope is 11,000 tasks of 110,000.
 */
async function seedQuery(store, _size, opts = {}) {
  const r = rng(3);
  // the customfields section: a select value on every task (`cf.stage`, four options, like status)
  const meta = () => (opts.stage ? { 'cf.stage': r.weighted(STAGE_MIX) } : {});
  const users = Array.from({ length: 100 }, () => randomUUID());
  const mates = Array.from({ length: 10 }, () => randomUUID());
  const group = groupDoc('Platform team', mates[0], [users[0], ...mates.slice(1)]);
  await store.collection(Collections.groups).insertMany([group]);
  const own = [];
  for (const u of users) {
    const docs = Array.from({ length: 1_000 }, () => taskDoc(r, u, {}, meta()));
    if (u === users[0]) own.push(...docs);
    await insertChunks(store, Collections.tasks, docs);
  }
  const shared = Array.from({ length: 10_000 }, (_, i) => taskDoc(r, mates[i % mates.length], { groupId: group._id, groupPermission: 'rw' }, meta()));
  await insertChunks(store, Collections.tasks, shared);
  const scope = [...own, ...shared].filter((t) => !t.deleted);
  return {
    userId: users[0],
    detailId: own.find((t) => !t.deleted)._id,
    tasks: 110_000,
    scope: scope.length,
    firstQueryMatches: scope.filter((t) => t.status === 'doing' && t.tags.includes('dev')).length,
    stageQueryMatches: scope.filter((t) => t.metadata['cf%2Estage'] === 's-doing' && t.tags.includes('dev')).length,
  };
}

/** Board section board: six status/tag-driven columns (ids fixed so the bench can name them). */
export const BOARD_COLUMNS = [
  { id: 'backlog', name: 'Backlog', query: "status = 'todo' AND 'backlog' IN tags ORDER BY metadata.order ASC", cards: 2_000, status: 'todo', tag: 'backlog' },
  { id: 'ready', name: 'Ready', query: "status = 'todo' AND 'ready' IN tags ORDER BY metadata.order ASC", cards: 1_500, status: 'todo', tag: 'ready' },
  { id: 'doing', name: 'Doing', query: "status = 'doing' ORDER BY metadata.order ASC", cards: 2_000, status: 'doing' },
  { id: 'review', name: 'Review', query: "status = 'review' AND 'needs-review' IN tags ORDER BY metadata.order ASC", cards: 1_500, status: 'review', tag: 'needs-review' },
  { id: 'blocked', name: 'Blocked', query: "status = 'blocked' ORDER BY metadata.order ASC", cards: 500, status: 'blocked' },
  { id: 'done', name: 'Done', query: "status = 'done' ORDER BY metadata.order ASC", cards: 2_500, status: 'done' },
];

/**
 * Board section data: a private board of one user with {@link BOARD_COLUMNS} (created through the boards
 * service, so actions are materialized) and 10,000 cards owned by that user, spread over the
 * columns; plus 20 other users × 1,000 tasks around it. Returns the cards of Doing and Review
 * (the move benchmark moves them back and forth).
 */
async function seedBoard(store) {
  const r = rng(4);
  const seeded = await seedBoardOnly(store, r);
  for (let u = 0; u < 20; u++) await insertChunks(store, Collections.tasks, Array.from({ length: 1_000 }, () => taskDoc(r, randomUUID())));
  return seeded;
}

/**
 * Scale data, `n` tasks in all: the board of {@link seedBoard} (10,000 cards of its owner),
 * the query scope of {@link seedQuery} (user 0: 1,000 own tasks + 10,000 of a group), and other users
 * with 1,000 tasks each up to `n`. The figures measured on it (the same board, the same scope) are
 * then comparable across sizes. Inserted in chunks of {@link CHUNK}; the documents are not kept.
 * The services' indexes are declared first, as a store that the server has run on has them
 * recorded (the server's start then fills them while loading; docs/store.md "Indexes and plans").
 */
async function seedScale(store, n) {
  const r = rng(14);
  const services = await Promise.all(['@app/tasks', '@app/boards', '@app/sprints', '@app/query'].map((m) => import(m)));
  for (const def of [services[0].tasksService, services[1].boardsService, services[2].sprintsService, services[3].queryService]) await store.ensureIndexes(def.indexes);
  const boardSeed = await seedBoardOnly(store, r);
  const user0 = randomUUID();
  const mates = Array.from({ length: 10 }, () => randomUUID());
  const group = groupDoc('Platform team', mates[0], [user0, ...mates.slice(1)]);
  await store.collection(Collections.groups).insertMany([group]);
  const own = Array.from({ length: 1_000 }, () => taskDoc(r, user0, { deleted: false }));
  await insertChunks(store, Collections.tasks, own);
  await insertChunks(store, Collections.tasks, Array.from({ length: 10_000 }, (_, i) => taskDoc(r, mates[i % mates.length], { groupId: group._id, groupPermission: 'rw' })));
  let written = 10_000 + 11_000;
  while (written < n) {
    const owner = randomUUID();
    const count = Math.min(1_000, n - written);
    for (let i = 0; i < count; i += CHUNK) {
      await store.collection(Collections.tasks).insertMany(Array.from({ length: Math.min(CHUNK, count - i) }, () => taskDoc(r, owner)));
    }
    written += count;
  }
  return { ...boardSeed, queryUserId: user0, queryDetailId: own[0]._id, tasks: written };
}

/** The board of {@link seedBoard} and its 10,000 cards, without the 20,000 other tasks. */
async function seedBoardOnly(store, r) {
  const owner = randomUUID();
  const bus = new MemoryBus();
  const { boardsService } = await import('@app/boards');
  const served = await serveServices([boardsService], { bus, store, log: silentLogger(), clock: systemClock });
  const board = await bus.request(
    BoardsOps.create,
    { name: 'Product board', board_type: 'private', columns: BOARD_COLUMNS.map(({ id, name, query }) => ({ id, name, query })) },
    { userId: owner },
  );
  for (const s of served) await s.close();
  const cards = [];
  for (const col of BOARD_COLUMNS) {
    for (let i = 0; i < col.cards; i++) {
      const doc = taskDoc(r, owner, { status: col.status, boardId: board.id, deleted: false });
      if (col.tag) doc.tags = [...new Set([...doc.tags, col.tag])];
      cards.push({ doc, col: col.id });
    }
  }
  await insertChunks(store, Collections.tasks, cards.map((c) => c.doc));
  return {
    userId: owner,
    boardId: board.id,
    columns: board.columns.map((c) => c.id),
    detailId: cards[0].doc._id,
    movable: cards.filter((c) => c.col === 'doing' || c.col === 'review').map((c) => [c.doc._id, c.col]),
  };
}

/**
 * Flow section data: the board of {@link seedBoard} (10,000 cards of its owner) with 365 daily
 * snapshots up to today (real time: the server reads its own clock) and the flow records of 5,000
 * cards finished in Done over the last 180 days, each moved Backlog → Ready → Doing → Review → Done.
 */
async function seedFlow(store) {
  const r = rng(5);
  const seeded = await seedBoardOnly(store, r);
  const now = Date.now();
  const dayOf = (ms) => new Date(ms).toISOString().slice(0, 10);
  const expires = new Date(now + 400 * DAY_MS).toISOString();
  const snapshots = Array.from({ length: 365 }, (_, i) => {
    const day = dayOf(now - i * DAY_MS);
    return {
      _id: `${seeded.boardId}:${day}`, board_id: seeded.boardId, day, taken_at: `${day}T00:05:00.000Z`, expires_at: expires,
      columns: BOARD_COLUMNS.map((c) => ({ column_id: c.id, name: c.name, count: Math.floor(c.cards * (0.5 + r.next() / 2)), points: Math.floor(c.cards * 3 * r.next()) })),
    };
  });
  await insertChunks(store, Collections.flowSnapshots, snapshots);
  const cards = await store.collection(Collections.tasks).find({ boardId: seeded.boardId }, { limit: 5_000, projection: { _id: 1, created_at: 1 } });
  const path = ['backlog', 'ready', 'doing', 'review', 'done'];
  let seq = 0;
  // each card's four moves as move records (docs/flow.md "Card history")
  const records = cards.flatMap((t) => {
    const done = now - Math.floor(r.next() * 180 * DAY_MS);
    const created_at = new Date(done - 10 * DAY_MS).toISOString();
    return path.slice(1).map((to, i) => {
      const at = new Date(done - (3 - i) * Math.floor(r.next() * 2 * DAY_MS)).toISOString();
      seq++;
      return { _id: `${seeded.boardId}:${t._id}:${seq}`, board_id: seeded.boardId, task_id: t._id, created_at, from: path[i], to, at, seq };
    });
  });
  await insertChunks(store, Collections.cardMoves, records);
  return { ...seeded, movable: [], finished: cards.length, today: dayOf(now), yearAgo: dayOf(now - 364 * DAY_MS) };
}

/** The options of the customfields section's `cf.stage` and their mix (the same weights as the statuses). */
export const STAGE_MIX = [['s-todo', 0.35], ['s-doing', 0.25], ['s-review', 0.1], ['s-done', 0.3]];

/** The query data with a `cf.stage` select value on every task (the customfields section). */
const seedCustomFields = (store) => seedQuery(store, 0, { stage: true });

const KINDS = { query: seedQuery, board: seedBoard, scale: seedScale, flow: seedFlow, customfields: seedCustomFields };

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [kind, dir, size] = process.argv.slice(2);
  if (!KINDS[kind] || !dir || (kind === 'scale' && !(Number(size) >= 21_000))) {
    console.error('usage: node bench/seed.mjs <query|board|flow> <dir> | node bench/seed.mjs scale <dir> <tasks ≥ 21000>');
    process.exit(2);
  }
  const started = Date.now();
  const store = await EmbeddedStore.open({ dir });
  const info = await KINDS[kind](store, Number(size));
  // the users whose tokens the sections use (a signed token for no user is a 401)
  await ensureBenchUsers(store, [info.userId, info.queryUserId].filter(Boolean));
  await store.close();
  console.log(`READY ${JSON.stringify({ ...info, seedMs: Date.now() - started })}`);
}
