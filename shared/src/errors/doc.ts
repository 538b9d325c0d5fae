import { ErrorCodes } from './codes.js';
import { legacyErrorBody, type ErrorEnvelope } from './legacy.js';

/** The example error of the doc, rendered in both shapes. */
const EXAMPLE: ErrorEnvelope = {
  code: 'VALIDATION_FAILED',
  message: "body/name: must have required property 'name'",
  details: { in: 'body' },
  traceId: '6f1c…',
  validationErrors: [
    { field: '/name', code: 'required', message: "must have required property 'name'" },
    { field: '/board_type', code: 'enum', message: 'must be equal to one of the allowed values' },
  ],
};

/** Renders `docs/errors.md` from the catalogue; a unit test checks the file matches. */
export function renderErrorsDoc(): string {
  const rows = Object.entries(ErrorCodes).map(([code, e]) => `| \`${code}\` | ${e.status} | ${e.message} | ${e.when} |`);
  return [
    '# Error catalogue',
    '',
    'Generated from `shared/src/errors/codes.ts` by `npm run docs:errors`; a unit test keeps it in step.',
    '',
    'One catalogue, two renderings of the same error (same code, HTTP status and message):',
    '',
    '- **Full envelope**, on every path but those below:',
    '  `{ "code", "message", "details"?, "traceId", "validationErrors"?: [{field, code, message}] }`',
    '  (the 409 move body adds `task`).',
    '- **Legacy shape**, on the paths of ud\'s published Swagger under `/api/v1`',
    '  (`/api/v1/todolist…`, `/api/v1/kanban/boards…`, `/api/v1/auth/…`; docs/compat.md), whose',
    '  Swagger documents the kanban errors as an object of string values: `code`, `message` and',
    '  `traceId`; each `details` entry as a top-level string (arrays and objects as JSON text); the',
    '  field errors folded into `field` (the first field at fault) and `errors` (every',
    '  `field: message`, joined with `; `). The move\'s 409 `task` snapshot stays an object (SPEC fixes',
    '  it; ud\'s Swagger has no move).',
    '',
    'The same 400, full envelope (`POST /api/v1/boards`) and legacy shape (`POST /api/v1/kanban/boards`):',
    '',
    '```json',
    JSON.stringify(EXAMPLE),
    JSON.stringify(legacyErrorBody(EXAMPLE)),
    '```',
    '',
    '| code | HTTP | message | when |',
    '|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}
