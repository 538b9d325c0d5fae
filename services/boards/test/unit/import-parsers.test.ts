import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AppError } from '@app/shared/errors';
import { parseDate, parseImport, readCsv } from '../../src/imports/index.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');
const fieldOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (e) {
    if (AppError.is(e)) return e.validationErrors?.[0]?.field;
    throw e;
  }
  return undefined;
};

describe('Trello board export', () => {
  const plan = parseImport('trello', JSON.parse(fixture('trello-board.json')));

  it('makes one column per open list in list order, each holding its list name as status', () => {
    expect(plan.board.name).toBe('Website relaunch');
    expect(plan.board.source_id).toBe('5f1a2b3c4d5e6f7081920001');
    expect(plan.board.columns).toEqual([{ name: 'To Do', status: 'To Do' }, { name: 'Doing', status: 'Doing' }, { name: 'Done', status: 'Done' }]);
    expect(plan.board.metadata).toEqual({ 'import.description': 'Everything for the new site' });
  });

  it('maps every field of a card', () => {
    const hero = plan.cards.find((c) => c.source_id === 'card-hero')!;
    expect(hero).toMatchObject({
      title: 'Design the hero section', status: 'Doing', tags: ['design', 'green'], assignee: 'alice',
      deadline: '2026-03-10T17:00:00.000Z', kickoff: '2026-03-01T00:00:00.000Z', order: 0,
      metadata: { 'cf.effort': 5, 'cf.team': 'Web', 'cf.reviewed': true },
    });
    expect(hero.description).toBe('Use the **new** palette.\n\n**Steps**\n- [x] Sketch\n- [ ] Mock-up');
    expect(hero.notes).toEqual([
      { author: 'ghost42', date: '2026-02-20T09:30:00.000Z', text: 'First draft attached.' },
      { author: 'alice', date: '2026-02-21T10:00:00.000Z', text: 'Second thought: bigger font.' },
    ]);
  });

  it('orders cards by position within their list, and an archived card is status archived', () => {
    const todo = plan.cards.filter((c) => c.status === 'To Do').map((c) => [c.source_id, c.order]);
    expect(todo).toEqual([['card-brief', 0], ['card-copy', 1]]);
    expect(plan.cards.find((c) => c.source_id === 'card-old')!.status).toBe('archived');
  });

  it('reports the card without a name as an error and the bad due date as a warning', () => {
    expect(plan.problems).toEqual([
      { level: 'warning', card: 'card-brief', field: 'due', message: '"not a date" is not a date; the card gets no deadline' },
      { level: 'error', card: 'card-noname', field: 'name', message: 'the card has no name (a card needs a title)' },
    ]);
    expect(plan.cards.map((c) => c.source_id)).not.toContain('card-noname');
  });

  it('refuses what is not a Trello board, naming the place', () => {
    expect(fieldOf(() => parseImport('trello', [1, 2]))).toBe('/data');
    expect(fieldOf(() => parseImport('trello', { lists: [], cards: [{ name: 'x' }] }))).toBe('/data/cards/0');
    expect(fieldOf(() => parseImport('trello', '{not json'))).toBe('/data');
  });
});

describe('Jira CSV export', () => {
  const plan = parseImport('jira-csv', fixture('jira-issues.csv'));

  it('maps the standard columns, repeated Labels, Sprint and Comment cells, story points and custom fields', () => {
    const web1 = plan.cards.find((c) => c.source_id === 'WEB-1')!;
    expect(web1).toMatchObject({
      title: 'Login page', status: 'In Progress', tags: ['frontend', 'auth'], assignee: 'alice', deadline: '2026-03-20T00:00:00.000Z',
      description: 'Build the login form.\nUse *OAuth*.', sprints: ['Sprint 1', 'Sprint 2'], order: 0,
      metadata: { 'cf.issue_type': 'Story', 'cf.priority': 'High', 'import.reporter': 'bob', 'import.created_at': '2026-03-12T09:15:00.000Z', 'app.points': 5, 'cf.team': 'Web' },
    });
    expect(web1.notes).toEqual([
      { author: 'bob', date: '2026-03-13T10:00:00.000Z', text: 'Looks good; ship it' },
      { author: 'alice', date: '2026-03-14T11:30:00.000Z', text: 'Done soon' },
    ]);
    expect(plan.cards.find((c) => c.source_id === 'WEB-2')!.metadata['app.points']).toBe(2.5);
    expect(plan.sprints).toEqual([{ name: 'Sprint 1' }, { name: 'Sprint 2' }]);
    expect(plan.board.columns.map((c) => c.name)).toEqual(['In Progress', 'To Do', 'Done']);
    expect(plan.ignored).toEqual(['Issue id', 'Updated']);
  });

  it('reports every broken row with its line, field and reason', () => {
    expect(plan.problems).toEqual([
      { level: 'error', row: 5, card: 'WEB-3', field: 'Summary', message: 'the row has no summary (a card needs a title)' },
      { level: 'warning', row: 6, card: 'WEB-4', field: 'Created', message: '"31/Feb/26 8:00 AM" is not a date' },
      { level: 'warning', row: 6, card: 'WEB-4', field: 'Story Points', message: '"three" is not a number; no points imported' },
      { level: 'warning', row: 6, card: 'WEB-4', field: 'Due date', message: '"soon" is not a date; the card gets no deadline' },
    ]);
  });

  it('reads header names of another instance through a column mapping', () => {
    const csv = 'Titel,Schlüssel,Zustand\nAnmelden,ABC-1,Offen\n';
    const p = parseImport('jira-csv', csv, { columns: { title: 'Titel', id: 'Schlüssel', status: 'Zustand' } });
    expect(p.cards.map((c) => [c.source_id, c.title, c.status])).toEqual([['ABC-1', 'Anmelden', 'Offen']]);
    expect(fieldOf(() => parseImport('jira-csv', csv, { columns: { title: 'Nope' } }))).toBe('/mapping/columns/title');
    expect(fieldOf(() => parseImport('jira-csv', 'Titel\nx\n'))).toBe('/mapping/columns/title');
  });
});

describe('plain CSV with a mapping', () => {
  const plan = parseImport('csv', fixture('plain.csv'), {
    columns: { title: 'Name', status: 'State', tags: 'Labels', deadline: 'Due', assignee: 'Owner', points: 'Estimate' },
    board_name: 'Sales',
  });

  it('maps the named columns, cf.* headers and row order', () => {
    expect(plan.board.name).toBe('Sales');
    expect(plan.cards[0]).toMatchObject({
      source_id: 'row-2', title: 'Call the customer', status: 'todo', tags: ['sales', 'q4'], deadline: '2026-04-01T00:00:00.000Z',
      assignee: 'alice', order: 0, metadata: { 'app.points': 3, 'cf.customer': 'ACME' },
    });
    expect(plan.cards[1]!.deadline).toBe('2026-04-03T10:00:00.000Z');
    expect(plan.board.columns.map((c) => c.status)).toEqual(['todo', 'doing', 'done']);
    expect(plan.ignored).toEqual(['Notes']);
  });

  it('reports the broken rows', () => {
    expect(plan.problems).toEqual([
      { level: 'error', row: 4, card: 'row-4', field: 'Name', message: 'the row has no title' },
      { level: 'warning', row: 5, card: 'row-5', field: 'Estimate', message: '"x" is not a number' },
      { level: 'warning', row: 5, card: 'row-5', field: 'Due', message: '"31/12/2026" is not a date; the card gets no deadline' },
    ]);
  });

  it('names the line of malformed CSV', () => {
    let err: AppError | undefined;
    try {
      readCsv('a,b\n1,"open\n');
    } catch (e) {
      err = e as AppError;
    }
    expect(err?.validationErrors?.[0]?.field).toBe('/data');
    expect(err?.validationErrors?.[0]?.message).toMatch(/line/);
  });
});

describe('dates of exports', () => {
  it.each([
    ['2026-03-10T17:00:00.000Z', '2026-03-10T17:00:00.000Z'],
    ['2026-03-10', '2026-03-10T00:00:00.000Z'],
    ['2026-03-10 08:05', '2026-03-10T08:05:00.000Z'],
    ['12/Mar/26 9:15 PM', '2026-03-12T21:15:00.000Z'],
    ['12/Mar/26 12:15 AM', '2026-03-12T00:15:00.000Z'],
    ['2026-03-10T10:00:00+02:00', '2026-03-10T08:00:00.000Z'],
  ])('%s → %s', (text, iso) => expect(parseDate(text)).toBe(iso));
  it.each(['2026-02-30', '31/Feb/26', 'soon', '13/Mar/26 13:00 PM'])('%s is no date', (text) => expect(parseDate(text)).toBeUndefined());
});
