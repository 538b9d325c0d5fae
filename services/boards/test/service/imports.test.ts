import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { IMPORT_MAX_BYTES, IMPORT_MAX_CARDS, ImportsOps, type ImportCreateBody, type ImportJob } from '@app/shared/contracts';
import { queryMatches, parseQuery } from '@app/shared/query';
import { AppError } from '@app/shared/errors';
import { Collections, decodeMetadata, escapeKey } from '@app/shared/store';
import { eventually } from '@app/shared/testing';
import type { NoteDoc } from '@app/shared/domain';
import { ALICE, BOB, buildBoards, fields, rejects, type Fixture } from './fixture.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');
const trello = () => JSON.parse(fixture('trello-board.json')) as Record<string, unknown>;
/** The Trello fixture without its nameless card (an error that refuses the import). */
const trelloOk = () => {
  const data = trello();
  data.cards = (data.cards as Array<{ id: string }>).filter((c) => c.id !== 'card-noname');
  return data;
};

/** Starts an import as `user` and waits for its job to end. */
async function importDone(t: Fixture, body: ImportCreateBody, user = ALICE): Promise<ImportJob> {
  const job = await t.call(ImportsOps.create, body, user);
  expect(job.state).toBe('queued');
  return eventually('the import job to end', () => t.call(ImportsOps.get, { importId: job.id }, user), (j) => j.state === 'done' || j.state === 'failed', { timeoutMs: 30_000 });
}

const byImportId = async (t: Fixture) => {
  const docs = await t.tasks.find({ created_by: ALICE, deleted: false });
  return new Map(docs.map((d) => [decodeMetadata(d.metadata)['import.id'] as string, d]));
};

describe('imports of a Trello board', () => {
  it('creates the board, its columns as queries on what the import sets, the cards with every mapped field, and notes', async () => {
    await using t = await buildBoards();
    const job = await importDone(t, { format: 'trello', data: trelloOk(), mapping: { users: { alice: 'user0' } } });
    expect(job).toMatchObject({ state: 'done', counts: { cards_created: 4, cards_updated: 0, notes_created: 2, sprints_created: 0, columns: 3 }, unknown_users: ['ghost42'] });
    expect(job.problems).toContainEqual({ level: 'warning', card: 'card-brief', field: 'due', message: '"not a date" is not a date; the card gets no deadline' });

    const board = (await t.boards.findOne({ _id: job.board_id! }))!;
    expect(board.name).toBe('Website relaunch');
    expect(decodeMetadata(board.metadata)).toMatchObject({ 'import.source': 'trello', 'import.id': '5f1a2b3c4d5e6f7081920001' });
    expect(board.columns.map((c) => c.name)).toEqual(['To Do', 'Doing', 'Done']);
    const cards = await byImportId(t);
    const hero = cards.get('card-hero')!;
    expect(hero).toMatchObject({
      title: 'Design the hero section', status: 'Doing', tags: ['design', 'green'], assignee: ALICE, boardId: board._id,
      deadline: '2026-03-10T17:00:00.000Z', kickoff: '2026-03-01T00:00:00.000Z',
    });
    expect(decodeMetadata(hero.metadata)).toMatchObject({ 'cf.effort': 5, 'cf.team': 'Web', 'cf.reviewed': true, order: 0, 'import.source': 'trello', 'import.id': 'card-hero' });
    expect(cards.get('card-copy')).not.toHaveProperty('assignee');
    expect(cards.get('card-old')!.status).toBe('archived');
    // each column shows its list's cards, and no card of another source
    const doing = parseQuery(board.columns[1]!.query);
    expect([...cards.values()].filter((d) => queryMatches(doing, d, new Date())).map((d) => d.title)).toEqual(['Design the hero section']);
    const notes = await t.store.collection<NoteDoc>(Collections.notes).find({ task_id: hero._id }, { sort: { _id: 1 } });
    // oldest first, as a note list reads them (created_at, then id)
    expect(notes.map((n) => n.content)).toEqual([
      '**ghost42** (2026-02-20T09:30:00.000Z):\n\nFirst draft attached.',
      '**alice** (2026-02-21T10:00:00.000Z):\n\nSecond thought: bigger font.',
    ]);
  });

  it('a second import of the same export creates nothing new and updates what changed', async () => {
    await using t = await buildBoards();
    const first = await importDone(t, { format: 'trello', data: trelloOk() });
    const before = await t.tasks.countDocuments({});
    const changed = trelloOk();
    (changed.cards as Array<{ id: string; name: string }>).find((c) => c.id === 'card-copy')!.name = 'Write the final copy';
    const second = await importDone(t, { format: 'trello', data: changed });
    expect(second).toMatchObject({ state: 'done', board_id: first.board_id, counts: { cards_created: 0, cards_updated: 1, notes_created: 0 } });
    expect(await t.tasks.countDocuments({})).toBe(before);
    expect(await t.boards.countDocuments({ owner_id: ALICE })).toBe(1);
    expect((await byImportId(t)).get('card-copy')).toMatchObject({ title: 'Write the final copy', version: 2 });
    const preview = await t.call(ImportsOps.preview, { format: 'trello', data: trelloOk() });
    expect(preview.board.existing_board_id).toBe(first.board_id);
  });

  it('a dry run answers what would be created and every problem, and writes nothing', async () => {
    await using t = await buildBoards();
    const preview = await t.call(ImportsOps.preview, { format: 'trello', data: trello(), dry_run: true });
    expect(preview).toMatchObject({ dry_run: true, format: 'trello', counts: { cards_created: 4, notes_created: 2, columns: 3 }, unknown_users: ['alice', 'ghost42'] });
    expect(preview.board.columns[0]).toEqual({ name: 'To Do', query: "import.board = 'trello:5f1a2b3c4d5e6f7081920001' AND status = 'To Do' ORDER BY metadata.order ASC" });
    expect(preview.problems.filter((p) => p.level === 'error')).toEqual([{ level: 'error', card: 'card-noname', field: 'name', message: 'the card has no name (a card needs a title)' }]);
    expect(await t.tasks.countDocuments({})).toBe(0);
    expect(await t.boards.countDocuments({})).toBe(0);
    expect(await t.store.collection(Collections.imports).countDocuments({})).toBe(0);
  });

  it('refuses an export with a broken card, naming it, and writes nothing', async () => {
    await using t = await buildBoards();
    const e = await rejects(t.call(ImportsOps.create, { format: 'trello', data: trello() }), 'IMPORT_INVALID');
    expect(e.details?.problems).toEqual([{ level: 'error', card: 'card-noname', field: 'name', message: 'the card has no name (a card needs a title)' }]);
    expect(await t.store.collection(Collections.imports).countDocuments({})).toBe(0);
  });
});

describe('imports of a Jira CSV', () => {
  it('creates the sprints with their members and story points as app.points', async () => {
    await using t = await buildBoards();
    const csv = fixture('jira-issues.csv').split('\n').filter((l) => !l.includes('WEB-3')).join('\n');
    const job = await importDone(t, { format: 'jira-csv', data: csv, mapping: { users: { alice: 'user0', carol: '' }, board_name: 'Web' } });
    expect(job).toMatchObject({ state: 'done', counts: { cards_created: 3, sprints_created: 2, notes_created: 2, columns: 3 }, unknown_users: [] });
    const docs = await byImportId(t);
    const s1 = docs.get('sprint:Sprint 1')!;
    const s2 = docs.get('sprint:Sprint 2')!;
    expect(s1.metadata[escapeKey('app.type')]).toBe('sprint');
    expect(s2.title).toBe('Sprint 2');
    const web1 = decodeMetadata(docs.get('WEB-1')!.metadata);
    expect(web1).toMatchObject({ 'app.points': 5, 'app.sprint': s2._id, 'cf.priority': 'High', 'cf.issue_type': 'Story' });
    expect(decodeMetadata(docs.get('WEB-4')!.metadata)['app.sprint']).toBe(s1._id);
    expect(docs.get('WEB-1')!.assignee).toBe(ALICE);
    expect(docs.get('WEB-4')).not.toHaveProperty('assignee');
  });

  it('keeps one import of one user apart from another user\'s', async () => {
    await using t = await buildBoards();
    await importDone(t, { format: 'csv', data: 'title\nA\n' });
    const other = await importDone(t, { format: 'csv', data: 'title\nA\n' }, BOB);
    expect(other.counts.cards_created).toBe(1);
    await rejects(t.call(ImportsOps.get, { importId: other.id }, ALICE), 'IMPORT_NOT_FOUND');
  });
});

describe('import limits', () => {
  it('refuses an export over the size limit with 413 naming it', async () => {
    await using t = await buildBoards();
    const e = await rejects(t.call(ImportsOps.create, { format: 'csv', data: `title\n${'x'.repeat(IMPORT_MAX_BYTES)}\n` }), 'IMPORT_TOO_LARGE');
    expect(e.status).toBe(413);
    expect(e.details).toMatchObject({ max_bytes: IMPORT_MAX_BYTES });
  });

  it('refuses more cards than one import takes with 400 naming the limit', async () => {
    await using t = await buildBoards();
    const csv = `title\n${Array.from({ length: IMPORT_MAX_CARDS + 1 }, (_, i) => `c${i}`).join('\n')}\n`;
    const e = await rejects(t.call(ImportsOps.preview, { format: 'csv', data: csv }), 'IMPORT_TOO_MANY_CARDS');
    expect(e.details).toEqual({ max_cards: IMPORT_MAX_CARDS, cards: IMPORT_MAX_CARDS + 1 });
  });

  it('names the field of an export that is not one', async () => {
    await using t = await buildBoards();
    expect(fields(await rejects(t.call(ImportsOps.preview, { format: 'trello', data: 'nope' }), 'VALIDATION_FAILED'))).toEqual(['/data']);
    expect(fields(await rejects(t.call(ImportsOps.preview, { format: 'csv' }), 'VALIDATION_FAILED'))).toEqual(['/data']);
    const long = await t.call(ImportsOps.preview, { format: 'csv', data: `title,cf.x\nok,${'y'.repeat(70_000)}\n` });
    expect(long.problems).toEqual([expect.objectContaining({ level: 'error', card: 'row-2', field: 'metadata/cf.x' })]);
  });
});

describe('an import is all or nothing', () => {
  it('a write that fails half-way leaves no board, card or note, and the job failed with the reason', async () => {
    // the store refuses the notes' insert, after the board and cards of the same transaction were written
    let inserts = 0;
    await using t = await buildBoards({
      serviceStore: (store) => new Proxy(store, {
        get(target, prop, receiver) {
          if (prop !== 'collection') return Reflect.get(target, prop, receiver);
          return (name: string) => {
            const c = target.collection(name);
            if (name !== Collections.notes) return c;
            return new Proxy(c, {
              get(ct, p, r) {
                if (p !== 'insertMany') return Reflect.get(ct, p, r);
                return async (...args: unknown[]) => {
                  if (++inserts === 1) throw new AppError('STORE_UNAVAILABLE');
                  return (ct.insertMany as (...a: unknown[]) => Promise<void>)(...args);
                };
              },
            });
          };
        },
      }),
    });
    const job = await importDone(t, { format: 'trello', data: trelloOk() });
    expect(job).toMatchObject({ state: 'failed', error: { code: 'STORE_UNAVAILABLE' } });
    expect(job).not.toHaveProperty('board_id');
    expect(await t.boards.countDocuments({})).toBe(0);
    expect(await t.tasks.countDocuments({})).toBe(0);
    expect(await t.store.collection(Collections.notes).countDocuments({})).toBe(0);
    // and the same import, run again, succeeds in full
    inserts = 1;
    expect((await importDone(t, { format: 'trello', data: trelloOk() })).counts.cards_created).toBe(4);
  });
});
