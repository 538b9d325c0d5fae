/**
 * The import plan: what an import of a board from another tool creates (docs/import-export.md).
 * Every parser of a source format (Trello JSON, Jira CSV, plain CSV, this service's own board
 * JSON) is a pure function from the export to an {@link ImportPlan}; the boards service then
 * resolves its users against the store and writes it (handlers/imports.ts).
 */

/** The source formats `POST /api/v1/imports` reads. */
export const IMPORT_FORMATS = ['trello', 'jira-csv', 'csv', 'board-json'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/**
 * One problem found in the export: where (`row`: the CSV line, 1 = the header; `card`: the source
 * card's id or key), which field, and why. `level: 'error'` keeps the import from running
 * (the card cannot be made); `warning` is reported and the import goes on without the value.
 */
export interface ImportProblem {
  level: 'error' | 'warning';
  row?: number;
  card?: string;
  field: string;
  message: string;
}

/** A note to create on a card: a comment of the source, its original author and date kept in the text. */
export interface PlanNote {
  /** The comment's author as the source names it (user name or full name). */
  author: string;
  /** ISO 8601 UTC, or undefined when the source gives no (readable) date. */
  date?: string;
  text: string;
  /** The text is the note's whole content as it was (board-json): no author and date line is added. */
  verbatim?: boolean;
}

/** One card to create or, on a repeat, to update (matched by `source_id`). */
export interface PlanCard {
  /** The source's id of the card (Trello card id, Jira issue key, CSV id column or line): `metadata.import.id`. */
  source_id: string;
  title: string;
  /** Markdown; checklists appended as a Markdown task list. */
  description: string;
  status: string;
  tags: string[];
  /** ISO 8601 UTC. */
  deadline?: string;
  kickoff?: string;
  /** The source's name of the assignee; resolved to a user id (or none, reported) before writing. */
  assignee?: string;
  /** Position order among the cards (`metadata.order`); absent: the card gets none (a board export's card that had none). */
  order?: number;
  /** Further metadata: `cf.*` custom fields, `app.points`, `import.*` extras. */
  metadata: Record<string, unknown>;
  notes: PlanNote[];
  /** Names of the sprints the card was in, oldest first (Jira); the last one is its sprint (`app.sprint`). */
  sprints: string[];
  /** Ids of cards of the same export this card links to (board-json), resolved to the new ids. */
  links: string[];
  /** Folder path (board-json). */
  path?: string;
}

/** A column of the imported board: its name and the status its cards carry. */
export interface PlanColumn {
  name: string;
  /** The column query as written; when absent, `status = '<status>'` within the import's cards. */
  query?: string;
  status?: string;
  wip_limit?: number;
  wip_policy?: 'warn' | 'block';
}

/** The board to create or, on a repeat, update. */
export interface PlanBoard {
  source_id: string;
  name: string;
  columns: PlanColumn[];
  default_tags: string[];
  metadata: Record<string, unknown>;
}

/** A sprint of the source (Jira): a sprint task on the board, its members the cards naming it last. */
export interface PlanSprint {
  name: string;
}

/** What a parser makes of an export; pure data. */
export interface ImportPlan {
  format: ImportFormat;
  board: PlanBoard;
  cards: PlanCard[];
  sprints: PlanSprint[];
  problems: ImportProblem[];
  /** Source columns or fields read nowhere (CSV headers without a mapping), for the report. */
  ignored: string[];
}

/** The column mapping a caller may send with a CSV import: our field → the source's header name, and user names → user ids or names. */
export interface ImportMapping {
  columns?: Record<string, string>;
  users?: Record<string, string>;
  /** Board name (CSV formats: default "Imported board" / "Jira import"). */
  board_name?: string;
}

/** Longest status (docs/tasks.md "Limits": 64 characters). */
const STATUS_MAX = 64;

/** A status from a list or status name: trimmed and cut to 64 characters. */
export function statusOf(name: string): string {
  const s = name.trim();
  return s.length > STATUS_MAX ? s.slice(0, STATUS_MAX) : s;
}

/** A custom field's metadata key: `cf.` and the field's name in lower case, runs of other characters as `_` ("Story Points" → `cf.story_points`). */
export function cfKey(name: string): string {
  const slug = name.trim().toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  return `cf.${slug === '' ? 'field' : slug}`;
}

const MONTHS: Record<string, number> = { jan: 0, feb: 1, mar: 2, apr: 3, may: 4, jun: 5, jul: 6, aug: 7, sep: 8, oct: 9, nov: 10, dec: 11 };
const ISO = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;
const SQLISH = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{1,2}):(\d{2})(?::(\d{2}))?$/;
/** Jira's CSV date: `12/Mar/24 9:15 AM` (day/month name/2- or 4-digit year, optional 12-hour time). */
const JIRA = /^(\d{1,2})\/([A-Za-z]{3})\/(\d{2}|\d{4})(?:\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([AaPp][Mm])?)?$/;

/**
 * A date of an export as ISO 8601 UTC, or undefined when `text` is none of: ISO 8601 / RFC 3339
 * (a date, or a date-time; without an offset it is read as UTC), `YYYY-MM-DD HH:MM[:SS]` (UTC),
 * Jira's `DD/Mon/YY[ h:mm AM]` (UTC). An impossible date (`2026-02-30`) is undefined.
 */
export function parseDate(text: string): string | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  let y: number, mo: number, d: number, h = 0, mi = 0, s = 0;
  let m: RegExpExecArray | null;
  if (ISO.test(t)) {
    const hasTime = t.length > 10;
    const withZone = hasTime && !/(Z|[+-]\d{2}:?\d{2})$/i.test(t) ? `${t}Z` : t;
    const ms = Date.parse(hasTime ? withZone : `${t}T00:00:00Z`);
    if (Number.isNaN(ms)) return undefined;
    const [yy, mm, dd] = t.slice(0, 10).split('-').map(Number);
    const day = new Date(Date.UTC(yy!, mm! - 1, dd!));
    if (day.getUTCMonth() !== mm! - 1 || day.getUTCDate() !== dd) return undefined;
    return new Date(ms).toISOString();
  } else if ((m = SQLISH.exec(t))) {
    [y, mo, d, h, mi] = [Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5])];
    s = m[6] ? Number(m[6]) : 0;
  } else if ((m = JIRA.exec(t))) {
    const month = MONTHS[m[2]!.toLowerCase()];
    if (month === undefined) return undefined;
    y = Number(m[3]);
    if (y < 100) y += 2000;
    [mo, d] = [month, Number(m[1])];
    if (m[4] !== undefined) {
      h = Number(m[4]);
      mi = Number(m[5]);
      s = m[6] ? Number(m[6]) : 0;
      const ampm = m[7]?.toLowerCase();
      if (ampm !== undefined) {
        if (h < 1 || h > 12) return undefined;
        h = (h % 12) + (ampm === 'pm' ? 12 : 0);
      }
    }
  } else return undefined;
  if (h > 23 || mi > 59 || s > 59) return undefined;
  const at = new Date(Date.UTC(y, mo, d, h, mi, s));
  if (at.getUTCFullYear() !== y || at.getUTCMonth() !== mo || at.getUTCDate() !== d) return undefined;
  return at.toISOString();
}

/** Collects problems with their place; `card`/`row` come from the caller. */
export class Problems {
  readonly list: ImportProblem[] = [];
  error(where: { row?: number; card?: string }, field: string, message: string): void {
    this.list.push({ level: 'error', ...where, field, message });
  }
  warn(where: { row?: number; card?: string }, field: string, message: string): void {
    this.list.push({ level: 'warning', ...where, field, message });
  }
}

/** The first `n` characters of `text` (titles of cards, 500 characters at most). */
export function cut(text: string, n: number): string {
  return text.length > n ? text.slice(0, n) : text;
}

/** A Markdown task list of a checklist: `**name**` and one `- [ ]`/`- [x]` line per item. */
export function checklistMarkdown(name: string, items: Array<{ name: string; done: boolean }>): string {
  return [`**${name}**`, ...items.map((i) => `- [${i.done ? 'x' : ' '}] ${i.name.replace(/\n/g, ' ')}`)].join('\n');
}

/** A note's text: `**author** (date):` and the comment. */
export function noteText(note: PlanNote): string {
  if (note.verbatim) return note.text;
  return `**${note.author}**${note.date ? ` (${note.date})` : ''}:\n\n${note.text}`;
}
