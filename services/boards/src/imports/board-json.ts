import { invalidField } from '@app/shared/errors';
import { cut, parseDate, Problems, statusOf, type ImportPlan, type PlanCard, type PlanColumn } from './plan.js';

/** The `format` and `version` of this service's own board export (docs/import-export.md "Export"). */
export const BOARD_JSON_FORMAT = 'board-json';
export const BOARD_JSON_VERSION = 1;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * The plan of a board exported by `GET /api/v1/boards/{id}/export?format=json` (docs/import-export.md):
 * the board's name, columns (queries, WIP limits and policies as they were), default tags and
 * metadata; every card with its fields, metadata (but `import.*`, which the import sets anew),
 * notes (content as it was) and links between cards of the export. So an export imported again is
 * an equal board. Throws 400 naming `/data/...` for anything that is not such an export.
 */
export function parseBoardJson(data: unknown): ImportPlan {
  if (!isObject(data) || data.format !== BOARD_JSON_FORMAT) throw invalidField('/data/format', `must be "${BOARD_JSON_FORMAT}" (the JSON of a board export)`, 'format');
  if (data.version !== BOARD_JSON_VERSION) throw invalidField('/data/version', `must be ${BOARD_JSON_VERSION}`, 'format');
  const board = data.board;
  if (!isObject(board) || typeof board.name !== 'string') throw invalidField('/data/board', 'must be the exported board with its name', 'type');
  if (!Array.isArray(data.cards)) throw invalidField('/data/cards', 'must be an array', 'type');
  const problems = new Problems();
  const columns: PlanColumn[] = (Array.isArray(board.columns) ? board.columns : []).filter(isObject).map((c) => ({
    name: str(c.name) ?? 'Column',
    query: str(c.query) ?? '',
    ...(typeof c.wip_limit === 'number' ? { wip_limit: c.wip_limit } : {}),
    ...(c.wip_policy === 'block' || c.wip_policy === 'warn' ? { wip_policy: c.wip_policy } : {}),
  }));
  const cards: PlanCard[] = [];
  data.cards.forEach((c: unknown, i: number) => {
    if (!isObject(c) || typeof c.id !== 'string') return problems.error({ card: `#${i}` }, `cards/${i}`, 'not a card object with an id');
    const where = { card: c.id };
    const title = str(c.title)?.trim();
    if (!title) return problems.error(where, 'title', 'the card has no title');
    const metadata = Object.fromEntries(Object.entries(isObject(c.metadata) ? c.metadata : {}).filter(([k]) => !k.startsWith('import.')));
    const card: PlanCard = {
      source_id: c.id, title: cut(title, 500), description: str(c.description) ?? '', status: statusOf(str(c.status) ?? 'todo'),
      tags: Array.isArray(c.tags) ? c.tags.filter((t): t is string => typeof t === 'string') : [],
      ...(typeof metadata.order === 'number' ? { order: metadata.order } : {}), metadata,
      notes: (Array.isArray(c.notes) ? c.notes : []).filter(isObject).flatMap((n) => {
        const text = str(n.content);
        if (text === undefined) return [];
        const date = str(n.created_at) ? parseDate(str(n.created_at)!) : undefined;
        return [{ author: str(n.created_by) ?? 'unknown', text, verbatim: true, ...(date ? { date } : {}) }];
      }),
      sprints: [],
      links: Array.isArray(c.linked_to_ids) ? c.linked_to_ids.filter((t): t is string => typeof t === 'string') : [],
      ...(str(c.path) !== undefined ? { path: str(c.path)! } : {}),
    };
    for (const field of ['deadline', 'kickoff'] as const) {
      const v = str(c[field]);
      if (v === undefined) continue;
      const at = parseDate(v);
      if (at) card[field] = at;
      else problems.warn(where, field, `"${v}" is not a date`);
    }
    const assignee = str(c.assignee);
    if (assignee) card.assignee = assignee;
    cards.push(card);
  });
  const meta = isObject(board.metadata) ? Object.fromEntries(Object.entries(board.metadata).filter(([k]) => !k.startsWith('import.'))) : {};
  return {
    format: 'board-json',
    board: {
      source_id: str(board.id) ?? 'board', name: cut(board.name, 200), columns,
      default_tags: Array.isArray(board.default_tags) ? board.default_tags.filter((t): t is string => typeof t === 'string') : [], metadata: meta,
    },
    cards, sprints: [], problems: problems.list, ignored: [],
  };
}
