import { randomUUID } from 'node:crypto';
import { setImmediate as yieldTurn } from 'node:timers/promises';
import { callerId, type CallContext, type Handler } from '@app/shared/bus';
import {
  IMPORT_MAX_BYTES, IMPORT_MAX_CARDS, type ImportCreateBody, type ImportJob, type ImportPreview, type ImportsOps,
} from '@app/shared/contracts';
import {
  boardEvent, checkFieldValue, checkNewTaskFields, checkTaskSize, convertFieldValue, customValueInvalid, definitionsOf, distinct, userScope, type CustomFieldDoc, newTaskDoc, nextVersion, runWrite, taskCreatedEvent, taskUpdatedEvent, timeOrderedId, toBoard, toTask,
  type BoardDoc, type NewEvent, type NoteDoc, type ServiceDeps, type TaskDoc,
} from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { Collections, decodeMetadata, encodeMetadata, escapeKey, type Doc, type DocumentStore, type Session } from '@app/shared/store';
import { boardsOf } from '../collections.js';
import { noteText, parseImport, readCsvInSteps, type ImportMapping, type ImportPlan, type ImportProblem, type PlanCard } from '../imports/index.js';
import { newBoardDoc } from './boards.js';

/**
 * Imports (docs/import-export.md): `imports.create` parses and checks an export, stores the job
 * (state `queued`) and answers 202 at once; the job then writes the whole board in ONE
 * transaction (all or nothing) in the replica that took the request. `imports.preview` is the dry
 * run; `imports.get` reads a job. Every card, sprint and board carries its source in metadata
 * (`import.source`: the format, `import.id`: the source id, `import.board`: the source board's key),
 * so a second import of the same source updates what the first made instead of duplicating it.
 */

/** An import job as stored in `import_jobs`: the API {@link ImportJob} (with `_id` for `id`) and its owner. */
export interface ImportJobDoc extends Doc, Omit<ImportJob, 'id'> {
  _id: string;
  owner_id: string;
}

const jobsOf = (store: DocumentStore) => store.collection<ImportJobDoc>(Collections.imports);
const tasksOf = (store: DocumentStore) => store.collection<TaskDoc>(Collections.tasks);

/** Metadata keys an import sets on the board, its cards and sprints. */
export const IMPORT_KEYS = { source: 'import.source', id: 'import.id', board: 'import.board' } as const;
/** Documents written per store call inside the import's transaction; the process serves other requests between them. */
const WRITE_CHUNK = 250;
/** Cards listed in a dry run's answer. */
const PREVIEW_CARDS = 50;

const metaField = (key: string) => `metadata.${escapeKey(key)}`;
/** A query string literal: `'…'` with `'` doubled (docs/query-language.md). */
const literal = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

/** The key every document of one import source carries as `import.board`: the format and the source board's id. */
export function boardKey(plan: ImportPlan): string {
  return `${plan.format}:${plan.board.source_id}`;
}

/**
 * A column query on what the import sets: the cards of this import source with the column's
 * status, in their source order (`metadata.order`). Moving a card into the column sets both.
 */
export function importColumnQuery(key: string, status: string): string {
  return `${IMPORT_KEYS.board} = ${literal(key)} AND status = ${literal(status)} ORDER BY metadata.order ASC`;
}

/** The JSON size of the body's export in bytes (a CSV's text length), checked against {@link IMPORT_MAX_BYTES}. */
function exportBytes(data: unknown): number {
  return typeof data === 'string' ? Buffer.byteLength(data) : Buffer.byteLength(JSON.stringify(data ?? null) ?? '');
}

/** The parsed, bounded plan of a request; 400/413 for what cannot be imported at all (see the ops' docs). */
async function planOf(input: ImportCreateBody): Promise<ImportPlan> {
  if (input.data === undefined) {
    throw new AppError('VALIDATION_FAILED', { message: 'The export is missing', validationErrors: [{ field: '/data', code: 'required', message: 'send the export as `data`, or upload it as the `file` part' }] });
  }
  const bytes = exportBytes(input.data);
  if (bytes > IMPORT_MAX_BYTES) {
    throw new AppError('IMPORT_TOO_LARGE', { message: `The export is ${bytes} bytes, over the ${IMPORT_MAX_BYTES}-byte limit of one import`, details: { max_bytes: IMPORT_MAX_BYTES, bytes } });
  }
  // a CSV is read in steps, so a large file does not hold the process while it is parsed
  const csv = (input.format === 'csv' || input.format === 'jira-csv') && typeof input.data === 'string' ? await readCsvInSteps(input.data) : undefined;
  const plan = parseImport(input.format, input.data, (input.mapping ?? {}) as ImportMapping, csv);
  if (plan.cards.length > IMPORT_MAX_CARDS) {
    throw new AppError('IMPORT_TOO_MANY_CARDS', {
      message: `The export has ${plan.cards.length} cards, over the ${IMPORT_MAX_CARDS}-card limit of one import`,
      details: { max_cards: IMPORT_MAX_CARDS, cards: plan.cards.length },
    });
  }
  return plan;
}

/** What the earlier imports of the same source left: the board and the cards and sprints by source id. */
interface Existing {
  board: BoardDoc | null;
  cards: Map<string, TaskDoc>;
  sprints: Map<string, TaskDoc>;
}

async function existingOf(store: DocumentStore, userId: string, plan: ImportPlan, session?: Session): Promise<Existing> {
  const key = boardKey(plan);
  const opts = session ? { session } : {};
  // one call after the other: a transaction runs no two operations at once (MongoDB)
  const board = await boardsOf(store).findOne({ owner_id: userId, [metaField(IMPORT_KEYS.board)]: key }, opts);
  const docs = await tasksOf(store).find({ created_by: userId, deleted: false, [metaField(IMPORT_KEYS.board)]: key }, opts);
  const cards = new Map<string, TaskDoc>();
  const sprints = new Map<string, TaskDoc>();
  for (const d of docs) {
    const id = d.metadata[escapeKey(IMPORT_KEYS.id)];
    if (typeof id !== 'string') continue;
    if (d.metadata[escapeKey('app.type')] === 'sprint') sprints.set(id, d);
    else cards.set(id, d);
  }
  return { board, cards, sprints };
}

/**
 * The source user names of the plan resolved to user ids: `mapping.users[name]` (a user id or a
 * user name; `""` = none), else a user named `name`. Names that resolve to nobody are returned in
 * `unknown` (their cards are unassigned, the dry run and the job report them).
 */
async function resolveUsers(store: DocumentStore, plan: ImportPlan, mapping: ImportMapping): Promise<{ ids: Map<string, string>; unknown: string[] }> {
  const names = distinct(plan.cards.flatMap((c) => (c.assignee === undefined ? [] : [c.assignee])));
  const wanted = names.map((n) => [n, mapping.users?.[n] ?? n] as const);
  const targets = distinct(wanted.map(([, t]) => t).filter((t) => t !== ''));
  const users = targets.length === 0 ? [] : await store
    .collection<{ _id: string; username: string }>(Collections.users)
    .find({ $or: [{ _id: { $in: targets } }, { username: { $in: targets } }] }, { projection: { _id: 1, username: 1 } });
  const byId = new Map(users.map((u) => [u._id, u._id]));
  const byName = new Map(users.map((u) => [u.username, u._id]));
  const ids = new Map<string, string>();
  const unknown: string[] = [];
  for (const [name, target] of wanted) {
    if (target === '') continue;
    const id = byId.get(target) ?? byName.get(target);
    if (id === undefined) unknown.push(name);
    else ids.set(name, id);
  }
  return { ids, unknown };
}

/** The metadata a card of the plan is written with: its own plus `order` (when it has one) and the import keys. */
function cardMetadata(plan: ImportPlan, card: PlanCard): Record<string, unknown> {
  return { ...card.metadata, ...(card.order !== undefined ? { order: card.order } : {}), [IMPORT_KEYS.source]: plan.format, [IMPORT_KEYS.id]: card.source_id, [IMPORT_KEYS.board]: boardKey(plan) };
}

/** The task fields of a plan card (before the sprint and link references, which need the written ids). */
function cardFields(plan: ImportPlan, card: PlanCard, users: Map<string, string>) {
  const assignee = card.assignee === undefined ? undefined : users.get(card.assignee);
  return {
    title: card.title, description: card.description, status: card.status, tags: card.tags, metadata: cardMetadata(plan, card),
    ...(card.path !== undefined ? { path: card.path } : {}),
    ...(assignee ? { assignee } : {}), ...(card.kickoff ? { kickoff: card.kickoff } : {}), ...(card.deadline ? { deadline: card.deadline } : {}),
  };
}

/**
 * A plan card's custom field values (docs/custom-fields.md) in the types of the importer's
 * definitions, converted in place where they read as one (a CSV's `'3'` on a number field, an
 * option's label on a select): `card.metadata` then holds what the write stores. Answers a problem
 * of level `error` for each value that does not fit, and for a required field with no value and
 * no default.
 */
function typedCardFields(defs: readonly CustomFieldDoc[], card: PlanCard): ImportProblem[] {
  const problems: ImportProblem[] = [];
  for (const def of defs) {
    const has = Object.hasOwn(card.metadata, def.key);
    if (!has && (def.default !== undefined || !def.required)) continue;
    const value = card.metadata[def.key];
    const converted = has ? convertFieldValue(value, def) : undefined;
    if (converted !== undefined) {
      card.metadata[def.key] = converted;
      continue;
    }
    const reason = has ? (checkFieldValue(def, value) as { reason?: string }).reason ?? 'the value does not fit' : 'the field is required and has no default';
    problems.push({ level: 'error', card: card.source_id, field: `metadata.${def.key}`, message: customValueInvalid(def.key, def, value, reason).message });
  }
  return problems;
}

/**
 * Every card of the plan checked against the task rules as its write would (title, path,
 * metadata limits, task size): a card that breaks one becomes a problem of level `error` naming
 * it and the field. Pure apart from the throwaway ids; yields to other requests every {@link WRITE_CHUNK} cards.
 */
async function checkCards(store: DocumentStore, plan: ImportPlan, userId: string, now: Date): Promise<ImportProblem[]> {
  const problems: ImportProblem[] = [];
  // the importer's custom field definitions (docs/custom-fields.md): a value that does not fit its
  // field is a problem of its card, as the write would refuse it
  const defs = await definitionsOf(store, [userScope(userId)]);
  let n = 0;
  for (const card of plan.cards) {
    if (++n % WRITE_CHUNK === 0) await yieldTurn();
    problems.push(...typedCardFields(defs, card));
    try {
      checkTaskSize(toTask(newTaskDoc(cardFields(plan, card, new Map()), userId, now)));
    } catch (e) {
      if (!AppError.is(e) || e.status >= 500) throw e;
      const field = e.validationErrors?.[0]?.field ?? (typeof e.details?.field === 'string' ? e.details.field : '/');
      problems.push({ level: 'error', card: card.source_id, field: field.replace(/^\//, ''), message: e.validationErrors?.[0]?.message ?? e.message });
    }
  }
  return problems;
}

/** The board's columns as the import writes them: queries as written (board-json), else on the import's key and status. */
function columnsOf(plan: ImportPlan) {
  const key = boardKey(plan);
  return plan.board.columns.map((c) => ({
    name: c.name,
    query: c.query ?? importColumnQuery(key, c.status ?? c.name),
    ...(c.wip_limit !== undefined ? { wip_limit: c.wip_limit } : {}),
    ...(c.wip_policy !== undefined ? { wip_policy: c.wip_policy } : {}),
  }));
}

/** A zero {@link ImportJob} `counts`. */
const noCounts = (columns = 0) => ({ cards_created: 0, cards_updated: 0, notes_created: 0, sprints_created: 0, columns });

/** What the plan and the earlier imports give, before anything is written: counts, problems, unknown users. */
async function assess(deps: ServiceDeps, userId: string, input: ImportCreateBody) {
  const plan = await planOf(input);
  const [users, existing] = await Promise.all([resolveUsers(deps.store, plan, (input.mapping ?? {}) as ImportMapping), existingOf(deps.store, userId, plan)]);
  const problems = [...plan.problems, ...(await checkCards(deps.store, plan, userId, deps.clock.now()))];
  for (const name of users.unknown) problems.push({ level: 'warning', field: 'assignee', message: `no user "${name}" here (map it in mapping.users); their cards are left unassigned` });
  const updated = plan.cards.filter((c) => existing.cards.has(c.source_id)).length;
  const counts = {
    cards_created: plan.cards.length - updated,
    cards_updated: updated,
    notes_created: plan.cards.filter((c) => !existing.cards.has(c.source_id)).reduce((n, c) => n + c.notes.length, 0),
    sprints_created: plan.sprints.filter((s) => !existing.sprints.has(`sprint:${s.name}`)).length,
    columns: plan.board.columns.length,
  };
  return { plan, users, existing, problems, counts };
}

/**
 * `imports.preview` — `POST /api/v1/imports` with `dry_run: true`: what the import would create
 * and update (the board, its columns, counts, the first cards) and every problem, with nothing
 * written. Same 400/413 as the import for an export that cannot be read at all.
 */
export function previewImport(deps: ServiceDeps): Handler<typeof ImportsOps.preview> {
  return async (input, ctx) => {
    const userId = callerId(ctx);
    const { plan, existing, problems, counts, users } = await assess(deps, userId, input);
    const out: ImportPreview = {
      dry_run: true,
      format: plan.format,
      board: {
        name: plan.board.name,
        ...(existing.board ? { existing_board_id: existing.board._id } : {}),
        columns: columnsOf(plan).map(({ name, query }) => ({ name, query })),
      },
      counts,
      cards: plan.cards.slice(0, PREVIEW_CARDS).map((c) => ({ source_id: c.source_id, title: c.title, status: c.status, action: existing.cards.has(c.source_id) ? 'update' : 'create' })),
      problems,
      unknown_users: users.unknown,
      ignored_columns: plan.ignored,
    };
    return out;
  };
}

/** The API object of a stored job. */
function jobView(doc: ImportJobDoc): ImportJob {
  const { _id, owner_id: _owner, ...rest } = doc;
  return { id: _id, ...rest };
}

/**
 * `imports.create` — `POST /api/v1/imports` (202): checks the export as the dry run does; problems
 * of level `error` refuse it (400 `IMPORT_INVALID`, `details.problems`), as do the limits (413
 * `IMPORT_TOO_LARGE`, 400 `IMPORT_TOO_MANY_CARDS`). Otherwise the job is stored `queued`, with the
 * warnings and counts of the check, and answered; the job then runs in this replica
 * ({@link runImport}). An Idempotency-Key replays the same job.
 */
export function createImport(deps: ServiceDeps): Handler<typeof ImportsOps.create> {
  return async (input, ctx) => {
    const userId = callerId(ctx);
    const assessed = await assess(deps, userId, input);
    const errors = assessed.problems.filter((p) => p.level === 'error');
    if (errors.length > 0) {
      throw new AppError('IMPORT_INVALID', {
        message: `${errors.length} card(s) of the export cannot be imported; nothing was written (a dry run lists every problem)`,
        details: { problems: errors },
      });
    }
    let started = false;
    const job = await runWrite(deps, ctx, async (w) => {
      const at = w.now.toISOString();
      const doc: ImportJobDoc = {
        _id: randomUUID(), owner_id: w.userId, format: assessed.plan.format, state: 'queued',
        progress: { total: assessed.plan.cards.length, done: 0 }, counts: noCounts(assessed.plan.board.columns.length),
        problems: assessed.problems, unknown_users: assessed.users.unknown, created_at: at, updated_at: at,
      };
      await jobsOf(deps.store).insertOne(doc, { session: w.session });
      started = true;
      return jobView(doc);
    });
    // a replayed answer (Idempotency-Key) names the job that already ran
    if (started && !ctx.reply.replayed) void runImport(deps, ctx, job.id, assessed.plan, (input.mapping ?? {}) as ImportMapping);
    return job;
  };
}

/** `imports.get` — `GET /api/v1/imports/{id}`: the caller's own job; another's or none is 404 `IMPORT_NOT_FOUND`. */
export function getImport({ store }: ServiceDeps): Handler<typeof ImportsOps.get> {
  return async ({ importId }, ctx) => {
    const doc = await jobsOf(store).findOne({ _id: importId, owner_id: callerId(ctx) });
    if (!doc) throw new AppError('IMPORT_NOT_FOUND', { details: { importId } });
    return jobView(doc);
  };
}

/**
 * Runs an import job: state `running`, then ONE transaction that writes the board (created, or on a
 * repeat its name and columns updated), every card (created, or updated when an earlier import of
 * the same source made it), their notes (for new cards), the sprints (Jira) with their members,
 * the links between cards (board-json), the events of every write, and the job's `done` state
 * with its counts and `board_id`. Any failure leaves none of it written and the job `failed`
 * with the error. Writes go in chunks of {@link WRITE_CHUNK} with a turn of the event loop between
 * them, so the process keeps answering other requests while a large import runs.
 */
export async function runImport(deps: ServiceDeps, ctx: CallContext, jobId: string, plan: ImportPlan, mapping: ImportMapping): Promise<void> {
  const { store } = deps;
  const jobCtx: CallContext = { ...ctx, idempotency: undefined, ifMatch: undefined, reply: {} };
  try {
    await jobsOf(store).updateOne({ _id: jobId }, { $set: { state: 'running', updated_at: deps.clock.now().toISOString() } });
    const users = await resolveUsers(store, plan, mapping);
    await runWrite(deps, jobCtx, async (w) => {
      const counts = await writePlan(deps, w.session, w.userId, w.now, plan, users.ids, w.emit);
      const at = w.now.toISOString();
      await jobsOf(store).updateOne({ _id: jobId }, {
        $set: { state: 'done', counts: counts.counts, board_id: counts.boardId, progress: { total: plan.cards.length, done: plan.cards.length }, updated_at: at },
      }, { session: w.session });
      return null;
    });
  } catch (e) {
    const err = AppError.from(e);
    ctx.log.warn({ err: e, jobId }, 'import failed; nothing of it was written');
    try {
      await jobsOf(store).updateOne({ _id: jobId }, { $set: { state: 'failed', error: { code: err.code, message: err.message }, updated_at: deps.clock.now().toISOString() } });
    } catch (recordErr) {
      ctx.log.warn({ err: recordErr, jobId }, 'import job state not recorded');
    }
  }
}

/** Writes `docs` with `insertMany` in chunks, yielding between them. */
async function insertChunked<T extends Doc>(store: DocumentStore, collection: string, docs: T[], session: Session): Promise<void> {
  for (let i = 0; i < docs.length; i += WRITE_CHUNK) {
    await store.collection<T>(collection).insertMany(docs.slice(i, i + WRITE_CHUNK), { session });
    await yieldTurn();
  }
}

/** The writes of one import inside its transaction (see {@link runImport}); returns the counts and the board id. */
async function writePlan(
  deps: ServiceDeps, session: Session, userId: string, now: Date, plan: ImportPlan, users: Map<string, string>, emit: (...e: NewEvent[]) => void,
): Promise<{ counts: ReturnType<typeof noCounts>; boardId: string }> {
  const { store } = deps;
  const at = now.toISOString();
  const key = boardKey(plan);
  const existing = await existingOf(store, userId, plan, session);
  const counts = noCounts(plan.board.columns.length);
  const boardMeta = { ...plan.board.metadata, [IMPORT_KEYS.source]: plan.format, [IMPORT_KEYS.id]: plan.board.source_id, [IMPORT_KEYS.board]: key };
  const body = { name: plan.board.name, board_type: 'private' as const, columns: columnsOf(plan), default_tags: plan.board.default_tags, metadata: boardMeta };
  let board: BoardDoc;
  if (existing.board) {
    const fresh = newBoardDoc({ ...body, board_type: existing.board.board_type }, userId, now, existing.board._id);
    const $set = { name: fresh.name, columns: fresh.columns, default_tags: fresh.default_tags, metadata: fresh.metadata, updated_at: at, updated_by: userId, ...nextVersion(existing.board) };
    await boardsOf(store).updateOne({ _id: existing.board._id }, { $set }, { session });
    board = { ...existing.board, ...$set };
    emit(boardEvent('board.updated', toBoard(board, userId)));
  } else {
    board = newBoardDoc(body, userId, now);
    await boardsOf(store).insertOne(board, { session });
    emit(boardEvent('board.created', toBoard(board, userId)));
  }
  const sharing = (doc: TaskDoc): TaskDoc => {
    doc.boardId = board._id;
    if (board.board_type === 'shared' && board.groupId !== undefined) {
      doc.groupId = board.groupId;
      if (board.groupPermission !== undefined) doc.groupPermission = board.groupPermission;
    }
    return doc;
  };

  // sprints first: members name them
  const sprintIds = new Map<string, string>();
  const newSprints: TaskDoc[] = [];
  for (const s of plan.sprints) {
    const sourceId = `sprint:${s.name}`;
    const found = existing.sprints.get(sourceId);
    if (found) {
      sprintIds.set(s.name, found._id);
      continue;
    }
    const metadata = { 'app.type': 'sprint', [IMPORT_KEYS.source]: plan.format, [IMPORT_KEYS.id]: sourceId, [IMPORT_KEYS.board]: key };
    const doc = sharing(newTaskDoc({ title: s.name, metadata, tags: plan.board.default_tags }, userId, now));
    sprintIds.set(s.name, doc._id);
    newSprints.push(doc);
  }
  await insertChunked(store, Collections.tasks, newSprints, session);
  counts.sprints_created = newSprints.length;
  for (const d of newSprints) emit(taskCreatedEvent(d));

  // custom field values in the definitions' types, as the dry run checked them
  const defs = await definitionsOf(store, [userScope(userId)], session);
  if (defs.length > 0) for (const card of plan.cards) typedCardFields(defs, card);
  // every card's id is known before the links between them are written
  const ids = new Map<string, string>();
  const fresh: Array<{ card: PlanCard; doc: TaskDoc }> = [];
  const updates: Array<{ card: PlanCard; before: TaskDoc }> = [];
  let built = 0;
  for (const card of plan.cards) {
    if (++built % WRITE_CHUNK === 0) await yieldTurn();
    const before = existing.cards.get(card.source_id);
    if (before) {
      ids.set(card.source_id, before._id);
      updates.push({ card, before });
    } else {
      const doc = sharing(newTaskDoc(cardFields(plan, card, users), userId, now));
      // custom field values in their stored form, defaults filled in; a value that does not fit is 400 (nothing written)
      await checkNewTaskFields(store, doc, session);
      ids.set(card.source_id, doc._id);
      fresh.push({ card, doc });
    }
  }
  const refs = (card: PlanCard, doc: TaskDoc): TaskDoc => {
    const sprint = card.sprints.at(-1);
    if (sprint !== undefined && sprintIds.has(sprint)) doc.metadata = { ...doc.metadata, [escapeKey('app.sprint')]: sprintIds.get(sprint)! };
    // a board export's card names its sprint by the exported sprint's id: the sprint imported with it
    const exported = card.metadata['app.sprint'];
    if (typeof exported === 'string' && ids.has(exported)) doc.metadata = { ...doc.metadata, [escapeKey('app.sprint')]: ids.get(exported)! };
    const links = distinct(card.links.flatMap((l) => (ids.has(l) ? [ids.get(l)!] : [])));
    if (links.length > 0) doc.linkedToIds = links;
    return doc;
  };
  const newCards: TaskDoc[] = [];
  for (const { card, doc } of fresh) {
    newCards.push(refs(card, doc));
    if (newCards.length % WRITE_CHUNK === 0) await yieldTurn();
  }
  await insertChunked(store, Collections.tasks, newCards, session);
  for (let i = 0; i < newCards.length; i++) {
    emit(taskCreatedEvent(newCards[i]!));
    if ((i + 1) % WRITE_CHUNK === 0) await yieldTurn();
  }
  counts.cards_created = newCards.length;

  const notes: NoteDoc[] = [];
  for (const { card, doc } of fresh) {
    for (const n of card.notes) {
      const text = noteText(n);
      if (text.trim() === '') continue;
      // time-ordered ids: a card's notes, all written at one instant, list in the source's order (created_at, then id)
      notes.push({ _id: timeOrderedId(), task_id: doc._id, content: text, created_at: at, created_by: userId, updated_at: at, updated_by: userId });
    }
  }
  await insertChunked(store, Collections.notes, notes, session);
  for (const note of notes) {
    const { _id, ...rest } = note;
    emit({ type: 'note.created', task_id: note.task_id, board_id: board._id, data: { note: { id: _id, ...rest } } });
  }
  counts.notes_created = notes.length;

  // a repeat: the fields the source sets are written again (metadata merged key by key)
  let n = 0;
  for (const { card, before } of updates) {
    const target = refs(card, sharing(newTaskDoc(cardFields(plan, card, users), userId, now)));
    await checkNewTaskFields(store, target, session);
    const after: TaskDoc = {
      ...before, title: target.title, description: target.description, status: target.status, tags: target.tags,
      metadata: encodeMetadata({ ...decodeMetadata(before.metadata), ...decodeMetadata(target.metadata) }),
      linkedToIds: target.linkedToIds, updated_at: at, updated_by: userId, ...nextVersion(before),
    };
    for (const f of ['assignee', 'kickoff', 'deadline', 'path'] as const) {
      if (target[f] !== undefined && target[f] !== '') after[f] = target[f];
      else if (f !== 'path') delete after[f];
    }
    const event = taskUpdatedEvent(before, after);
    if (!event) continue;
    const { _id, ...rest } = after;
    const $unset = Object.fromEntries((['assignee', 'kickoff', 'deadline'] as const).filter((f) => before[f] !== undefined && after[f] === undefined).map((f) => [f, ''] as const));
    await tasksOf(store).updateOne({ _id, deleted: false }, Object.keys($unset).length > 0 ? { $set: rest, $unset } : { $set: rest }, { session });
    emit(event);
    counts.cards_updated++;
    if (++n % WRITE_CHUNK === 0) await yieldTurn();
  }
  return { counts, boardId: board._id };
}
