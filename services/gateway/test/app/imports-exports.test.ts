import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { IMPORT_MAX_BYTES } from '@app/shared/contracts';
import { eventually } from '@app/shared/testing';
import { expectError, system, type System, type User } from './system.js';

const fixture = (name: string) => readFileSync(new URL(`../../../boards/test/fixtures/${name}`, import.meta.url), 'utf8');
const trelloOk = () => {
  const data = JSON.parse(fixture('trello-board.json')) as { cards: Array<{ id: string }> };
  data.cards = data.cards.filter((c) => c.id !== 'card-noname');
  return data;
};

/** A multipart/form-data body with `fields` and one `file` part. */
function multipart(fields: Record<string, string>, file: { name: string; type: string; content: string }) {
  const boundary = '----import-test-boundary';
  const parts = Object.entries(fields).map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`);
  parts.push(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: ${file.type}\r\n\r\n${file.content}\r\n`);
  return { payload: `${parts.join('')}--${boundary}--\r\n`, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Runs an import through HTTP and waits for its job to end. */
async function imported(sys: System, user: User, body: unknown) {
  const started = await sys.call('POST', '/api/v1/imports', user, body);
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  return eventually('the import job', async () => (await sys.call('GET', `/api/v1/imports/${started.body.id}`, user)).body, (j) => j.state === 'done' || j.state === 'failed', { timeoutMs: 30_000 });
}

async function exportOf(sys: System, user: User, boardId: string, format = 'json') {
  const res = await sys.app.inject({ method: 'GET', url: `/api/v1/boards/${boardId}/export?format=${format}`, headers: user.headers });
  return res;
}

/** What makes two boards equal for a user: everything but ids, owners, times and the import's own keys. */
function comparable(doc: any) {
  const strip = (m: Record<string, unknown>) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('import.')));
  const titleOf = new Map<string, string>(doc.cards.map((c: any) => [c.id, c.title]));
  return {
    name: doc.board.name,
    columns: doc.board.columns.map((c: any) => ({ name: c.name, query: c.query, wip_limit: c.wip_limit })),
    default_tags: doc.board.default_tags,
    cards: doc.cards.map((c: any) => ({
      title: c.title, description: c.description, status: c.status, tags: c.tags, path: c.path, kickoff: c.kickoff, deadline: c.deadline,
      metadata: { ...strip(c.metadata), ...(typeof c.metadata['app.sprint'] === 'string' ? { 'app.sprint': titleOf.get(c.metadata['app.sprint']) } : {}) },
      links: c.linked_to_ids.map((id: string) => titleOf.get(id)), notes: c.notes.map((n: any) => n.content),
    })).sort((a: any, b: any) => a.title.localeCompare(b.title)),
  };
}

describe('imports through HTTP', () => {
  it('imports a Trello export sent as JSON; the board reads back with its cards in their columns', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const job = await imported(sys, alice, { format: 'trello', data: trelloOk(), mapping: { users: { alice: 'alice' } } });
    expect(job).toMatchObject({ state: 'done', counts: { cards_created: 4, notes_created: 2 }, unknown_users: ['ghost42'] });
    const read = await sys.call('GET', `/api/v1/boards/${job.board_id}/tasks`, alice);
    expect(read.status).toBe(200);
    const titles = (id: string) => read.body.column_tasks[id].map((t: any) => t.title);
    const [todo, doing, done] = read.body.board.columns.map((c: any) => c.id);
    expect([titles(todo), titles(doing), titles(done)]).toEqual([['Agree on the brief', 'Write the copy'], ['Design the hero section'], []]);
    expect(read.body.column_tasks[doing][0]).toMatchObject({ assignee: alice.id, metadata: { 'cf.effort': 5 } });
  });

  it('takes a multipart upload with a dry run, then the import, and answers the limits by name', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const csv = fixture('jira-issues.csv');
    const dry = multipart({ format: 'jira-csv', dry_run: 'true', mapping: JSON.stringify({ board_name: 'Web' }) }, { name: 'issues.csv', type: 'text/csv', content: csv });
    const res = await sys.app.inject({ method: 'POST', url: '/api/v1/imports', headers: { ...alice.headers, 'content-type': dry.contentType }, payload: dry.payload });
    expect(res.statusCode, res.body).toBe(200);
    const preview = res.json();
    expect(preview).toMatchObject({ dry_run: true, board: { name: 'Web' }, counts: { cards_created: 3, sprints_created: 2 } });
    expect(preview.problems.filter((p: any) => p.level === 'error')).toEqual([{ level: 'error', row: 5, card: 'WEB-3', field: 'Summary', message: 'the row has no summary (a card needs a title)' }]);
    // the import itself refuses the broken row, naming it
    const full = multipart({ format: 'jira-csv' }, { name: 'issues.csv', type: 'text/csv', content: csv });
    const refused = await sys.app.inject({ method: 'POST', url: '/api/v1/imports', headers: { ...alice.headers, 'content-type': full.contentType }, payload: full.payload });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ code: 'IMPORT_INVALID', details: { problems: [{ card: 'WEB-3', field: 'Summary' }] } });
    // an upload over the limit
    const big = multipart({ format: 'csv' }, { name: 'big.csv', type: 'text/csv', content: `title\n${'x'.repeat(IMPORT_MAX_BYTES + 10)}\n` });
    const tooBig = await sys.app.inject({ method: 'POST', url: '/api/v1/imports', headers: { ...alice.headers, 'content-type': big.contentType }, payload: big.payload });
    expect(tooBig.statusCode).toBe(413);
    expect(tooBig.json()).toMatchObject({ code: 'IMPORT_TOO_LARGE', details: { max_bytes: IMPORT_MAX_BYTES } });
    expectError(await sys.call('POST', '/api/v1/imports', alice, { format: 'excel', data: 'x' }), 400, 'VALIDATION_FAILED');
    expectError(await sys.call('GET', '/api/v1/imports/nope', alice), 404, 'IMPORT_NOT_FOUND');
    // multipart anywhere else is refused
    const elsewhere = await sys.app.inject({ method: 'POST', url: '/api/v1/tasks', headers: { ...alice.headers, 'content-type': full.contentType }, payload: full.payload });
    expect(elsewhere.statusCode).toBe(400);
  });
});

describe('exports through HTTP', () => {
  it('a JSON export imported as board-json by another user is an equal board', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const job = await imported(sys, alice, { format: 'trello', data: trelloOk() });
    const boardId = job.board_id as string;
    // a card made on the board, with a link, a note and a sprint
    const target = (await sys.call('POST', `/api/v1/boards/${boardId}/tasks`, alice, { title: 'Target', status: 'To Do' })).body;
    const extra = (await sys.call('POST', `/api/v1/boards/${boardId}/tasks`, alice, { title: 'Linked', tags: ['x'], metadata: { 'cf.size': 'L' }, linked_to_ids: [target.id] })).body;
    expect((await sys.call('POST', `/api/v1/tasks/${extra.id}/notes`, alice, { content: 'a plain note' })).status).toBe(201);

    const first = await exportOf(sys, alice, boardId);
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-type']).toMatch(/^application\/json/);
    const doc = first.json();
    expect(doc).toMatchObject({ format: 'board-json', version: 1, board: { id: boardId, name: 'Website relaunch' } });
    expect(doc.cards).toHaveLength(6);

    const again = await imported(sys, bob, { format: 'board-json', data: doc });
    expect(again).toMatchObject({ state: 'done', counts: { cards_created: 6, notes_created: 3 } });
    const second = (await exportOf(sys, bob, again.board_id)).json();
    expect(comparable(second)).toEqual(comparable(doc));
    // and importing it once more changes nothing
    const repeat = await imported(sys, bob, { format: 'board-json', data: doc });
    expect(repeat.counts).toMatchObject({ cards_created: 0, cards_updated: 0 });
  });

  it('exports CSV with a header row, and refuses a board the caller cannot read', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const job = await imported(sys, alice, { format: 'csv', data: 'title,status,tags\n"Say ""hi""",todo,"a, b"\nSecond,done,\n' });
    const res = await exportOf(sys, alice, job.board_id, 'csv');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    const lines = res.body.trim().split('\n');
    expect(lines[0]).toBe('id,title,status,tags,assignee,kickoff,deadline,path,description,metadata,linked_to_ids,notes,created_at,updated_at');
    expect(lines.slice(1).map((l) => l.split(',').slice(1, 3).join(','))).toEqual(['"Say ""hi""",todo', 'Second,done']);
    // the CSV export reads back as a plain CSV import
    const back = await imported(sys, bob, { format: 'csv', data: res.body });
    expect(back.counts.cards_created).toBe(2);
    expectError(await sys.call('GET', `/api/v1/boards/${job.board_id}/export`, bob), 404, 'BOARD_NOT_FOUND');
    expectError(await sys.call('GET', `/api/v1/boards/${job.board_id}/export?format=xml`, alice), 400, 'VALIDATION_FAILED');
  });
  it('types custom field values by the importer\'s definitions: a CSV number is stored as a number, a value that does not fit is a problem of its row', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const field = await sys.call('POST', '/api/v1/custom-fields', alice, { key: 'cf.estimate', name: 'Estimate', type: 'number' });
    expect(field.status, JSON.stringify(field.body)).toBe(201);
    const dry = await sys.call('POST', '/api/v1/imports', alice, { format: 'csv', dry_run: true, data: 'title,status,cf.estimate\nSmall,todo,3\nOdd,todo,lots\n' });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    expect(dry.body.problems).toEqual([expect.objectContaining({ level: 'error', field: 'metadata.cf.estimate', message: expect.stringMatching(/Estimate|number/) })]);
    const refused = await sys.call('POST', '/api/v1/imports', alice, { format: 'csv', data: 'title,status,cf.estimate\nSmall,todo,3\nOdd,todo,lots\n' });
    expect(refused.status).toBe(400);
    const job = await imported(sys, alice, { format: 'csv', data: 'title,status,cf.estimate\nSmall,todo,3\n' });
    expect(job.state, JSON.stringify(job)).toBe('done');
    const found = await sys.call('POST', '/api/v1/tasks/query', alice, { query: 'cf.estimate > 2' });
    expect(found.body.data.map((t: { title: string; metadata: Record<string, unknown> }) => [t.title, t.metadata['cf.estimate']])).toEqual([['Small', 3]]);
  });
});
