import type { FieldError } from './app-error.js';

/** An error body as the target paths send it (docs/architecture.md §4): what {@link legacyErrorBody} folds. */
export interface ErrorEnvelope {
  code: string;
  message: string;
  details?: Record<string, unknown>;
  validationErrors?: FieldError[];
  traceId: string;
  [extra: string]: unknown;
}

/** A value as a string: strings as they are, numbers and booleans printed, anything else as JSON. */
function asString(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v) ?? '';
}

/**
 * The same error in the legacy shape, for the paths of ud's published Swagger (docs/errors.md,
 * docs/compat.md). That Swagger documents the kanban errors as an object whose values are all
 * strings, the todolist and auth errors as a free-form object; this shape fits both:
 * - `code`, `message` and `traceId` as they are;
 * - each `details` entry becomes a top-level string (`position: "12"`, `boardId: "…"`; arrays and
 *   objects as JSON text), unless it would replace one of the fields here;
 * - `validationErrors` fold into `field` (the first field at fault, e.g. `/name`) and `errors`
 *   (every `field: message`, joined with `; `);
 * - other top-level fields an operation adds (the move's 409 `task` snapshot, which SPEC fixes and
 *   ud's Swagger does not describe) stay as they are.
 * Pure; the catalogue, codes and statuses are the same on both kinds of path.
 */
export function legacyErrorBody(body: ErrorEnvelope): Record<string, unknown> {
  const { code, message, details, validationErrors, traceId, ...extra } = body;
  const out: Record<string, unknown> = { code, message, traceId };
  const first = validationErrors?.[0];
  if (first) {
    out.field = first.field;
    out.errors = validationErrors.map((e) => `${e.field}: ${e.message}`).join('; ');
  }
  for (const [k, v] of Object.entries(details ?? {})) if (!(k in out) && v !== undefined) out[k] = asString(v);
  for (const [k, v] of Object.entries(extra)) if (!(k in out)) out[k] = v;
  return out;
}
