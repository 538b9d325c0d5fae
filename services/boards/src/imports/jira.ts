import { invalidField } from '@app/shared/errors';
import { columnsNamed, readCsv, type CsvTable } from './csv.js';
import { cfKey, cut, parseDate, Problems, statusOf, type ImportMapping, type ImportPlan, type PlanCard, type PlanNote } from './plan.js';

/**
 * The header names of Jira's CSV export ("Export Excel CSV (all fields)") read for each field; the
 * first present wins. A caller's `mapping.columns` replaces a field's names with its own one.
 */
export const JIRA_COLUMNS: Record<string, readonly string[]> = {
  id: ['Issue key'],
  title: ['Summary'],
  description: ['Description'],
  status: ['Status'],
  type: ['Issue Type'],
  priority: ['Priority'],
  assignee: ['Assignee'],
  reporter: ['Reporter'],
  created: ['Created'],
  due: ['Due date', 'Due Date'],
  start: ['Custom field (Start date)', 'Start date'],
  labels: ['Labels'],
  sprint: ['Sprint'],
  points: ['Custom field (Story Points)', 'Story Points', 'Custom field (Story point estimate)', 'Story point estimate'],
  comment: ['Comment'],
};

/** The header indexes of each field: the mapping's header name, else the first default present. */
export function fieldColumns(table: CsvTable, defaults: Record<string, readonly string[]>, mapping: ImportMapping): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const [field, names] of Object.entries(mapping.columns ?? {})) {
    const found = columnsNamed(table.header, names);
    if (found.length === 0) throw invalidField(`/mapping/columns/${field}`, `no column named "${names}" in the CSV header (${table.header.map((h) => JSON.stringify(h)).join(', ')})`, 'not_found');
    out[field] = found;
  }
  for (const [field, names] of Object.entries(defaults)) {
    if (out[field]) continue;
    for (const n of names) {
      const found = columnsNamed(table.header, n);
      if (found.length > 0) {
        out[field] = found;
        break;
      }
    }
  }
  return out;
}

/** Cells of `row` at `indexes`, trimmed, blanks dropped. */
export function cellsAt(cells: readonly string[], indexes: readonly number[] | undefined): string[] {
  return (indexes ?? []).map((i) => (cells[i] ?? '').trim()).filter((c) => c !== '');
}

/** A Jira comment cell: `date;author;text` (the text may hold more `;`), else the whole cell as text. */
function jiraComment(cell: string): PlanNote {
  const m = /^([^;]*);([^;]*);([\s\S]*)$/.exec(cell);
  const date = m ? parseDate(m[1]!) : undefined;
  if (m && date !== undefined) return { date, author: m[2]!.trim() || 'unknown', text: m[3]! };
  return { author: 'unknown', text: cell };
}

/**
 * The plan of a Jira CSV export (docs/import-export.md "Jira"): one card per row (issue key →
 * `metadata.import.id`, Summary → title, Description, Status → status and a column per status in
 * the order first seen, repeated Labels → tags, Due date → deadline, the Start date custom field
 * → kickoff, Assignee → assignee (resolved later), Reporter → `import.reporter`, Created →
 * `import.created_at`, Issue Type → `cf.issue_type`, Priority → `cf.priority`, Story Points →
 * `app.points`, every other `Custom field (X)` → `cf.x`, repeated Comment cells `date;author;text`
 * → notes, repeated Sprint cells → sprints, the last one the card's sprint). Row order →
 * `metadata.order`. Problems: a row without summary or key (error), a bad date or number
 * (warning), with the row's line. Throws 400 for unreadable CSV or a mapping naming no column.
 * `read`: the file already read (`readCsvInSteps`), else `text` is read here.
 */
export function parseJiraCsv(text: unknown, mapping: ImportMapping = {}, read?: CsvTable): ImportPlan {
  if (typeof text !== 'string') throw invalidField('/data', 'must be the CSV text of a Jira export', 'type');
  const table = read ?? readCsv(text);
  const cols = fieldColumns(table, JIRA_COLUMNS, mapping);
  if (!cols.title) throw invalidField('/mapping/columns/title', `the CSV has no "Summary" column; name the title column in mapping.columns.title`, 'required');
  const used = new Set(Object.values(cols).flat());
  const custom = table.header.flatMap((h, i) => {
    const m = /^Custom field \((.+)\)$/.exec(h);
    return m && !used.has(i) ? [{ i, key: cfKey(m[1]!) }] : [];
  });
  for (const c of custom) used.add(c.i);
  const problems = new Problems();
  const statuses: string[] = [];
  const sprints: string[] = [];
  const cards: PlanCard[] = [];
  const seen = new Set<string>();
  table.rows.forEach(({ line, cells }, index) => {
    const one = (field: string) => cellsAt(cells, cols[field])[0];
    const key = one('id') ?? `row-${line}`;
    const where = { row: line, card: key };
    const title = one('title');
    if (title === undefined) return problems.error(where, cols.title ? table.header[cols.title[0]!]! : 'Summary', 'the row has no summary (a card needs a title)');
    if (seen.has(key)) return problems.error(where, 'Issue key', `issue key ${key} appears twice`);
    seen.add(key);
    const status = statusOf(one('status') ?? 'To Do');
    if (!statuses.includes(status)) statuses.push(status);
    const metadata: Record<string, unknown> = {};
    const text = (field: string, mkey: string) => {
      const v = one(field);
      if (v !== undefined) metadata[mkey] = v;
    };
    text('type', 'cf.issue_type');
    text('priority', 'cf.priority');
    text('reporter', 'import.reporter');
    const created = one('created');
    if (created !== undefined) {
      const at = parseDate(created);
      if (at) metadata['import.created_at'] = at;
      else problems.warn(where, 'Created', `"${created}" is not a date`);
    }
    const points = one('points');
    if (points !== undefined) {
      const n = Number(points.replace(',', '.'));
      if (Number.isFinite(n)) metadata['app.points'] = n;
      else problems.warn(where, 'Story Points', `"${points}" is not a number; no points imported`);
    }
    for (const c of custom) {
      const v = (cells[c.i] ?? '').trim();
      if (v !== '') metadata[c.key] = v;
    }
    const card: PlanCard = {
      source_id: key, title: cut(title, 500), description: one('description') ?? '', status,
      tags: [...new Set(cellsAt(cells, cols.labels).flatMap((l) => l.split(/\s+/)).filter((l) => l !== ''))],
      order: index, metadata, notes: cellsAt(cells, cols.comment).map(jiraComment), sprints: cellsAt(cells, cols.sprint), links: [],
    };
    for (const s of card.sprints) if (!sprints.includes(s)) sprints.push(s);
    for (const [field, target, header] of [['due', 'deadline', 'Due date'], ['start', 'kickoff', 'Start date']] as const) {
      const v = one(field);
      if (v === undefined) continue;
      const at = parseDate(v);
      if (at === undefined) problems.warn(where, header, `"${v}" is not a date; the card gets no ${target}`);
      else card[target] = at;
    }
    const assignee = one('assignee');
    if (assignee !== undefined) card.assignee = assignee;
    cards.push(card);
  });
  return {
    format: 'jira-csv',
    board: { source_id: `jira:${mapping.board_name ?? 'import'}`, name: cut(mapping.board_name ?? 'Jira import', 200), columns: statuses.map((s) => ({ name: s, status: s })), default_tags: [], metadata: {} },
    cards, sprints: sprints.map((name) => ({ name })), problems: problems.list,
    ignored: table.header.filter((_, i) => !used.has(i)),
  };
}
