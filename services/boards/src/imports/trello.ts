import { invalidField } from '@app/shared/errors';
import {
  cfKey, checklistMarkdown, cut, parseDate, Problems, statusOf,
  type ImportMapping, type ImportPlan, type PlanCard, type PlanColumn, type PlanNote,
} from './plan.js';

// The parts of a Trello board export (the JSON of "Print, export and share → Export as JSON") read here.
interface TrelloList { id: string; name: string; closed?: boolean; pos?: number }
interface TrelloLabel { id: string; name?: string; color?: string | null }
interface TrelloCustomFieldItem { idCustomField: string; value?: Record<string, string> | null; idValue?: string | null }
interface TrelloCard {
  id: string; name?: string; desc?: string; idList?: string; closed?: boolean; pos?: number; due?: string | null; start?: string | null;
  dueComplete?: boolean; idLabels?: string[]; labels?: TrelloLabel[]; idMembers?: string[]; idChecklists?: string[];
  customFieldItems?: TrelloCustomFieldItem[]; shortLink?: string;
}
interface TrelloChecklist { id: string; idCard: string; name?: string; pos?: number; checkItems?: Array<{ name?: string; state?: string; pos?: number }> }
interface TrelloAction { id?: string; type?: string; date?: string; data?: { text?: string; card?: { id?: string } }; memberCreator?: { username?: string; fullName?: string }; idMemberCreator?: string }
interface TrelloMember { id: string; username?: string; fullName?: string }
interface TrelloCustomField { id: string; name?: string; type?: string; options?: Array<{ id: string; value?: { text?: string } }> }
interface TrelloBoard {
  id?: string; name?: string; desc?: string; lists?: TrelloList[]; cards?: TrelloCard[]; labels?: TrelloLabel[]; checklists?: TrelloChecklist[];
  actions?: TrelloAction[]; members?: TrelloMember[]; customFields?: TrelloCustomField[];
}

const byPos = <T extends { pos?: number }>(a: T, b: T) => (a.pos ?? 0) - (b.pos ?? 0);

/** `value` is an array of objects each with a string `id`, else a 400 naming `/data/<name>`. */
function listOf<T>(value: unknown, name: string): T[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw invalidField(`/data/${name}`, `must be an array (the "${name}" of a Trello board export)`, 'type');
  value.forEach((v, i) => {
    if (typeof v !== 'object' || v === null || typeof (v as { id?: unknown }).id !== 'string') {
      throw invalidField(`/data/${name}/${i}`, 'must be an object with a string "id"', 'type');
    }
  });
  return value as T[];
}

/**
 * The plan of a Trello board export (docs/import-export.md "Trello"): the board (name, `desc` as
 * metadata `import.description`), one column per open list in `pos` order whose cards carry the
 * list name as `status`; each card with its title, Markdown `desc`, labels as tags (a label without
 * name by its colour), `due` → deadline, `start` → kickoff, `closed` (archived in Trello) → status
 * `archived`, `pos` order → `metadata.order` (0, 1, 2… within the list), the first member →
 * assignee (resolved later), checklists as a Markdown task list appended to the description,
 * `commentCard` actions as notes with author and date, custom field items as `cf.<name>` metadata
 * (text, number, date, checked, or the chosen list option's text). Problems: a card without a name
 * or on an unknown list (error), an unreadable date (warning). Throws 400 naming `/data/...` when
 * the export is not a Trello board object.
 */
export function parseTrello(data: unknown, mapping: ImportMapping = {}): ImportPlan {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw invalidField('/data', 'must be the JSON object of a Trello board export', 'type');
  const board = data as TrelloBoard;
  const lists = listOf<TrelloList>(board.lists, 'lists');
  const cards = listOf<TrelloCard>(board.cards, 'cards');
  if (board.lists === undefined || board.cards === undefined) throw invalidField('/data', 'a Trello board export has "lists" and "cards"', 'required');
  const labels = new Map(listOf<TrelloLabel>(board.labels, 'labels').map((l) => [l.id, l]));
  const members = new Map(listOf<TrelloMember>(board.members, 'members').map((m) => [m.id, m]));
  const fields = new Map(listOf<TrelloCustomField>(board.customFields, 'customFields').map((f) => [f.id, f]));
  const checklists = new Map<string, TrelloChecklist[]>();
  for (const c of listOf<TrelloChecklist>(board.checklists, 'checklists')) checklists.set(c.idCard, [...(checklists.get(c.idCard) ?? []), c]);
  const comments = new Map<string, PlanNote[]>();
  // Trello lists actions newest first; notes are created oldest first
  for (const a of [...(Array.isArray(board.actions) ? board.actions : [])].reverse()) {
    if (a?.type !== 'commentCard' || typeof a.data?.card?.id !== 'string' || typeof a.data.text !== 'string') continue;
    const author = a.memberCreator?.username ?? a.memberCreator?.fullName ?? (a.idMemberCreator ? members.get(a.idMemberCreator)?.username : undefined) ?? 'unknown';
    const note: PlanNote = { author, text: a.data.text, ...(a.date && parseDate(a.date) ? { date: parseDate(a.date)! } : {}) };
    comments.set(a.data.card.id, [...(comments.get(a.data.card.id) ?? []), note]);
  }

  const problems = new Problems();
  const openLists = lists.filter((l) => !l.closed).sort(byPos);
  const listName = new Map(lists.map((l) => [l.id, statusOf(l.name ?? '')]));
  const columns: PlanColumn[] = openLists.map((l) => ({ name: cut(l.name?.trim() || 'List', 200), status: listName.get(l.id)! }));
  const order = new Map<string, number>();
  const planned: PlanCard[] = [];
  for (const card of [...cards].sort(byPos)) {
    const where = { card: card.id };
    const title = (card.name ?? '').trim();
    if (title === '') {
      problems.error(where, 'name', 'the card has no name (a card needs a title)');
      continue;
    }
    const status = card.idList === undefined ? undefined : listName.get(card.idList);
    if (status === undefined) {
      problems.error(where, 'idList', `the card's list ${JSON.stringify(card.idList ?? null)} is not in the export's lists`);
      continue;
    }
    const listKey = card.idList!;
    const n = order.get(listKey) ?? 0;
    order.set(listKey, n + 1);
    const tags = (card.idLabels ?? card.labels?.map((l) => l.id) ?? []).flatMap((id) => {
      const l = labels.get(id) ?? card.labels?.find((x) => x.id === id);
      const name = l?.name?.trim() || l?.color || '';
      return name === '' ? [] : [name];
    });
    const metadata: Record<string, unknown> = {};
    for (const item of card.customFieldItems ?? []) {
      const def = fields.get(item.idCustomField);
      if (!def) {
        problems.warn(where, 'customFieldItems', `custom field ${item.idCustomField} is not in the export's customFields; its value is not imported`);
        continue;
      }
      const key = cfKey(def.name ?? def.id);
      const value = customValue(def, item);
      if (value === undefined) problems.warn(where, `customFieldItems.${def.name ?? def.id}`, 'the value cannot be read; not imported');
      else metadata[key] = value;
    }
    if (card.dueComplete) metadata['import.due_complete'] = true;
    let description = card.desc ?? '';
    const lists2 = (checklists.get(card.id) ?? []).sort(byPos);
    if (lists2.length > 0) {
      const md = lists2.map((c) => checklistMarkdown(c.name ?? 'Checklist', [...(c.checkItems ?? [])].sort(byPos).map((i) => ({ name: i.name ?? '', done: i.state === 'complete' }))));
      description = [description, ...md].filter((s) => s !== '').join('\n\n');
    }
    const out: PlanCard = {
      source_id: card.id, title: cut(title, 500), description, status: card.closed ? 'archived' : status, tags: [...new Set(tags)],
      order: n, metadata, notes: comments.get(card.id) ?? [], sprints: [], links: [],
    };
    for (const [field, key] of [['due', 'deadline'], ['start', 'kickoff']] as const) {
      const raw = card[field];
      if (typeof raw !== 'string' || raw === '') continue;
      const at = parseDate(raw);
      if (at === undefined) problems.warn(where, field, `"${raw}" is not a date; the card gets no ${key}`);
      else out[key] = at;
    }
    const firstMember = card.idMembers?.[0];
    if (firstMember !== undefined) out.assignee = members.get(firstMember)?.username ?? firstMember;
    planned.push(out);
  }
  return {
    format: 'trello',
    board: {
      source_id: typeof board.id === 'string' ? board.id : 'trello-board',
      name: cut(mapping.board_name ?? (board.name?.trim() || 'Trello board'), 200),
      columns, default_tags: [],
      metadata: board.desc ? { 'import.description': board.desc } : {},
    },
    cards: planned, sprints: [], problems: problems.list, ignored: [],
  };
}

/** A custom field item's value: text, number (as a number), date (ISO UTC), checkbox (boolean), list (the option's text). */
function customValue(def: TrelloCustomField, item: TrelloCustomFieldItem): unknown {
  if (def.type === 'list' || item.idValue) return def.options?.find((o) => o.id === item.idValue)?.value?.text;
  const v = item.value ?? {};
  if (typeof v.text === 'string') return v.text;
  if (typeof v.number === 'string') return Number.isFinite(Number(v.number)) ? Number(v.number) : undefined;
  if (typeof v.date === 'string') return parseDate(v.date);
  if (typeof v.checked === 'string') return v.checked === 'true';
  return undefined;
}
