import { Type, type Static } from '@sinclair/typebox';
import { op } from './op.js';
import { busRequest, PathId, StringEnum, Timestamp } from './schemas.js';

/**
 * Contracts of imports and exports (docs/import-export.md): `POST /api/v1/imports` and
 * `GET /api/v1/imports/{id}` (boards service: it owns board and card create), and the pages a
 * board export is streamed from (query service). All schemas are Swagger-2.0-safe.
 */

/** Largest import: the export in the JSON body or the uploaded file, in bytes (4 MiB: with its JSON escaping it stays within the 8 MB NATS `max_payload` of docker compose); larger is 413 `IMPORT_TOO_LARGE`. */
export const IMPORT_MAX_BYTES = 4 * 1024 * 1024;
/** Most cards one import creates (10,000); more is 400 `IMPORT_TOO_MANY_CARDS`. */
export const IMPORT_MAX_CARDS = 10_000;
/** Cards per page of a streamed export (a page is one bus reply). */
export const EXPORT_PAGE_CARDS = 200;

const Format = StringEnum(['trello', 'jira-csv', 'csv', 'board-json'], {
  description: '`trello`: a Trello board JSON export; `jira-csv`: a Jira CSV export of issues; `csv`: a CSV with a header row; `board-json`: this service\'s board export',
});
const StringMap = (description: string) => Type.Object({}, { additionalProperties: Type.String(), description });

/** The column mapping of an import (CSV formats) and the mapping of source user names. */
export const ImportMapping = Type.Object(
  {
    columns: Type.Optional(StringMap('our field → the CSV header to read it from: `id`, `title`, `description`, `status`, `tags`, `assignee`, `deadline`, `kickoff`, `points`, `order` (csv); Jira also `type`, `priority`, `reporter`, `created`, `due`, `start`, `labels`, `sprint`, `comment`')),
    users: Type.Optional(StringMap('a source user name → a user id or user name here; `""` maps it to none. Unmapped names are looked up as user names; unknown ones are reported and left unassigned')),
    board_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'the new board\'s name (default: the Trello board\'s, "Jira import", "Imported board")' })),
  },
  { additionalProperties: false },
);

/** Body of `POST /api/v1/imports` (or the fields of a multipart upload beside its `file` part). */
export const ImportCreateBody = Type.Object(
  {
    format: Format,
    data: Type.Optional(Type.Unknown({ description: 'the export: the Trello or board JSON object (or its text), or the CSV text; a multipart upload sends it as the `file` part instead' })),
    mapping: Type.Optional(ImportMapping),
    dry_run: Type.Optional(Type.Boolean({ default: false, description: 'true: answer 200 with what would be created and every problem; nothing written' })),
  },
  { additionalProperties: false },
);
export type ImportCreateBody = Static<typeof ImportCreateBody>;

/** One problem of an export: where, which field, why (`error`: stops the import; `warning`: the value is left out). */
export const ImportProblem = Type.Object({
  level: StringEnum(['error', 'warning']),
  row: Type.Optional(Type.Integer({ description: 'CSV line (the header is line 1)' })),
  card: Type.Optional(Type.String({ description: 'the source card id or issue key' })),
  field: Type.String(),
  message: Type.String(),
});

/** What an import creates and updates. */
export const ImportCounts = Type.Object({
  cards_created: Type.Integer({ minimum: 0 }),
  cards_updated: Type.Integer({ minimum: 0, description: 'cards of an earlier import of the same source, updated instead of duplicated' }),
  notes_created: Type.Integer({ minimum: 0 }),
  sprints_created: Type.Integer({ minimum: 0 }),
  columns: Type.Integer({ minimum: 0 }),
});

/** The import job (`GET /api/v1/imports/{id}`; the 202 of the create). */
export const ImportJob = Type.Object({
  id: Type.String(),
  format: Format,
  state: StringEnum(['queued', 'running', 'done', 'failed']),
  progress: Type.Object({
    total: Type.Integer({ minimum: 0, description: 'cards to write' }),
    done: Type.Integer({ minimum: 0, description: 'cards written so far (all appear at once, when the job is done)' }),
  }),
  counts: ImportCounts,
  problems: Type.Array(ImportProblem),
  unknown_users: Type.Array(Type.String(), { description: 'source user names that match no user here: their cards are unassigned' }),
  board_id: Type.Optional(Type.String({ description: 'the created (or, on a repeat, updated) board, once done' })),
  error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() }, { description: 'why the job failed; nothing of it was written' })),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type ImportJob = Static<typeof ImportJob>;

/** The dry run's answer: what the import would create or update, and every problem. */
export const ImportPreview = Type.Object({
  dry_run: Type.Boolean({ description: 'always true' }),
  format: Format,
  board: Type.Object({
    name: Type.String(),
    existing_board_id: Type.Optional(Type.String({ description: 'a repeat: the board of the earlier import that would be updated' })),
    columns: Type.Array(Type.Object({ name: Type.String(), query: Type.String() })),
  }),
  counts: ImportCounts,
  cards: Type.Array(Type.Object({ source_id: Type.String(), title: Type.String(), status: Type.String(), action: StringEnum(['create', 'update']) }), {
    description: 'the first 50 cards',
  }),
  problems: Type.Array(ImportProblem),
  unknown_users: Type.Array(Type.String()),
  ignored_columns: Type.Array(Type.String({ description: 'CSV headers no field reads' })),
});
export type ImportPreview = Static<typeof ImportPreview>;

/** Path parameter of an import job. */
export const ImportParams = Type.Object({ importId: PathId });

/** Query string of the export: `format=json` (default) or `csv`. */
export const ExportQuerystring = Type.Object(
  { format: Type.Optional(StringEnum(['json', 'csv'], { default: 'json', description: '`json`: the board-json document (re-importable); `csv`: one row per card' })) },
  { additionalProperties: false },
);

/** One card of an export: the task's fields, its notes and links. */
export const ExportCard = Type.Object({
  id: Type.String(),
  title: Type.String(),
  description: Type.String(),
  status: Type.String(),
  path: Type.String(),
  tags: Type.Array(Type.String()),
  assignee: Type.Optional(Type.String()),
  kickoff: Type.Optional(Type.String()),
  deadline: Type.Optional(Type.String()),
  metadata: Type.Object({}, { additionalProperties: true }),
  linked_to_ids: Type.Array(Type.String()),
  notes: Type.Array(Type.Object({ content: Type.String(), created_at: Type.String(), created_by: Type.String() })),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type ExportCard = Static<typeof ExportCard>;

/** One page of a board export: the board (on the first page), cards after `after` in id order, the next cursor. */
export const ExportPage = Type.Object({
  board: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'first page only: the board as `GET /boards/{id}` returns it' })),
  cards: Type.Array(ExportCard),
  next_after: Type.Optional(Type.String({ description: 'absent on the last page' })),
});
export type ExportPage = Static<typeof ExportPage>;

/** The boards service's import ops, subjects `imports.<verb>`. */
export const ImportsOps = {
  /** Parses and checks the export, then queues the job (202); a dry run answers the preview instead. */
  create: op({ subject: 'imports.create', request: busRequest(ImportCreateBody.properties), response: ImportJob, timeoutMs: 30_000 }),
  preview: op({ subject: 'imports.preview', request: busRequest(ImportCreateBody.properties), response: ImportPreview, timeoutMs: 30_000 }),
  get: op({ subject: 'imports.get', request: ImportParams, response: ImportJob }),
} as const;

/** The query service's export page op: one page per bus request (docs/import-export.md "Streaming"). */
export const ExportOps = {
  page: op({
    subject: 'query.exportPage',
    request: Type.Object({ boardId: PathId, after: Type.Optional(Type.String()), first: Type.Optional(Type.Boolean()) }),
    response: ExportPage,
  }),
} as const;
