import { invalidField } from '@app/shared/errors';
import { readCsv, type CsvTable } from './csv.js';
import { cellsAt, fieldColumns } from './jira.js';
import { cut, parseDate, Problems, statusOf, type ImportMapping, type ImportPlan, type PlanCard } from './plan.js';

/** The fields a plain CSV can fill; by default each is read from the header of the same name (case-insensitive). */
export const CSV_FIELDS = ['id', 'title', 'description', 'status', 'tags', 'assignee', 'deadline', 'kickoff', 'points', 'order'] as const;

/**
 * The plan of a plain CSV with a header row (docs/import-export.md "CSV"): `mapping.columns` names
 * the header of each field (`{title: "Name", status: "State"}`), else the header of the field's
 * own name. `title` is required; `status` defaults to `todo` (a column per status, in the order
 * first seen); `tags` splits on `,` `;` or `|`; `deadline`/`kickoff` are dates; `points` →
 * `app.points`; `order` → `metadata.order` (default the row order); `id` → `metadata.import.id`
 * (default `row-<line>`, so a repeat of the same file matches by line); headers `cf.<name>` →
 * metadata `cf.<name>`. Other headers are listed in `ignored`. Problems carry the row's line.
 * `read`: the file already read (`readCsvInSteps`), else `text` is read here.
 */
export function parsePlainCsv(text: unknown, mapping: ImportMapping = {}, read?: CsvTable): ImportPlan {
  if (typeof text !== 'string') throw invalidField('/data', 'must be CSV text', 'type');
  const table = read ?? readCsv(text);
  const cols = fieldColumns(table, Object.fromEntries(CSV_FIELDS.map((f) => [f, [f]])), mapping);
  if (!cols.title) throw invalidField('/mapping/columns/title', `no "title" column in the CSV header; name it in mapping.columns.title`, 'required');
  const cf = table.header.flatMap((h, i) => (/^cf\.[^\s]+$/i.test(h) ? [{ i, key: h }] : []));
  const used = new Set([...Object.values(cols).flat(), ...cf.map((c) => c.i)]);
  const problems = new Problems();
  const statuses: string[] = [];
  const cards: PlanCard[] = [];
  const seen = new Set<string>();
  table.rows.forEach(({ line, cells }, index) => {
    const one = (field: string) => cellsAt(cells, cols[field])[0];
    const id = one('id') ?? `row-${line}`;
    const where = { row: line, card: id };
    const title = one('title');
    if (title === undefined) return problems.error(where, table.header[cols.title![0]!]!, 'the row has no title');
    if (seen.has(id)) return problems.error(where, cols.id ? table.header[cols.id[0]!]! : 'id', `id ${id} appears twice`);
    seen.add(id);
    const status = statusOf(one('status') ?? 'todo');
    if (!statuses.includes(status)) statuses.push(status);
    const metadata: Record<string, unknown> = {};
    for (const c of cf) {
      const v = (cells[c.i] ?? '').trim();
      if (v !== '') metadata[c.key] = v;
    }
    const number = (field: 'points' | 'order'): number | undefined => {
      const v = one(field);
      if (v === undefined) return undefined;
      const n = Number(v);
      if (!Number.isFinite(n)) problems.warn(where, table.header[cols[field]![0]!]!, `"${v}" is not a number`);
      return Number.isFinite(n) ? n : undefined;
    };
    const points = number('points');
    if (points !== undefined) metadata['app.points'] = points;
    const card: PlanCard = {
      source_id: id, title: cut(title, 500), description: one('description') ?? '', status,
      tags: [...new Set(cellsAt(cells, cols.tags).flatMap((t) => t.split(/[,;|]/)).map((t) => t.trim()).filter((t) => t !== ''))],
      order: number('order') ?? index, metadata, notes: [], sprints: [], links: [],
    };
    for (const field of ['deadline', 'kickoff'] as const) {
      const v = one(field);
      if (v === undefined) continue;
      const at = parseDate(v);
      if (at === undefined) problems.warn(where, table.header[cols[field]![0]!]!, `"${v}" is not a date; the card gets no ${field}`);
      else card[field] = at;
    }
    const assignee = one('assignee');
    if (assignee !== undefined) card.assignee = assignee;
    cards.push(card);
  });
  return {
    format: 'csv',
    board: { source_id: `csv:${mapping.board_name ?? 'import'}`, name: cut(mapping.board_name ?? 'Imported board', 200), columns: statuses.map((s) => ({ name: s, status: s })), default_tags: [], metadata: {} },
    cards, sprints: [], problems: problems.list, ignored: table.header.filter((_, i) => !used.has(i)),
  };
}
