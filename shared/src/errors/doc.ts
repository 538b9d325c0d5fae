import { ErrorCodes } from './codes.js';

/** Renders `docs/errors.md` from the catalogue; a unit test checks the file matches. */
export function renderErrorsDoc(): string {
  const rows = Object.entries(ErrorCodes).map(([code, e]) => `| \`${code}\` | ${e.status} | ${e.message} | ${e.when} |`);
  return [
    '# Error catalogue',
    '',
    'Generated from `shared/src/errors/codes.ts` by `npm run docs:errors`; a unit test keeps it in step.',
    '',
    'Every error body has the shape',
    '`{ "code", "message", "details"?, "traceId", "validationErrors"?: [{field, code, message}] }`',
    '(the 409 move body adds `task`).',
    '',
    '| code | HTTP | message | when |',
    '|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}
