import { AppError } from '../errors/index.js';
import { MAX_QUERY_LENGTH, parseQueryOnce } from './parse.js';
import { printQuery } from './print.js';
import { checkFunctionContext } from './resolve.js';
import { checkQueryTypes, suggestDefinedField, type FieldTypes } from './typed.js';

/** One fault of a query text, for a client to underline (`position`, `length` in UTF-16 code units). */
export interface QueryFault {
  position: number;
  length: number;
  code: string;
  message: string;
  /** The nearest field or function, when the fault is an unknown one. */
  suggestion?: string;
}

/** The answer of `validateQuery`: `canonical` is the canonical text of a valid query, else null. */
export interface QueryValidation {
  valid: boolean;
  errors: QueryFault[];
  canonical: string | null;
}

/**
 * Checks query text without running it (docs/query-language.md "Validation as you type"): parses
 * it (outside the parse cache: each keystroke is a new text) and checks function context (`activeSprint()` needs
 * `board` true). Never throws for a bad query: its one fault (the parser stops at the first)
 * comes back in `errors`, with the length of the token at fault (0 at the end of the text).
 * Anything but a query error is thrown as is. With `fields` (the custom fields in reach), the
 * operators and values of typed predicates are checked too (`checkQueryTypes`, at `now`), and an
 * unknown bare word that names a defined field (its key's last part or its name, any case) is
 * answered with that field as the suggestion (docs/custom-fields.md "In queries").
 */
export function validateQuery(text: string, opts: { board: boolean; fields?: FieldTypes; now?: Date }): QueryValidation {
  try {
    const q = parseQueryOnce(text);
    checkFunctionContext(q, opts);
    checkQueryTypes(q, opts.fields, opts.now ?? new Date());
    return { valid: true, errors: [], canonical: printQuery(q) };
  } catch (e) {
    if (!AppError.is(e) || e.status !== 400) throw e;
    return { valid: false, errors: [suggestDefinedField(fault(text, e), opts.fields)], canonical: null };
  }
}

function fault(text: string, e: AppError): QueryFault {
  const d = e.details ?? {};
  if (e.code === 'QUERY_TOO_LONG') return { position: MAX_QUERY_LENGTH, length: text.length - MAX_QUERY_LENGTH, code: e.code, message: e.message };
  const position = typeof d.position === 'number' ? d.position : 0;
  let length: number;
  if (typeof d.field === 'string') length = d.field.length;
  else if (typeof d.function === 'string') length = d.function.length;
  else if (typeof d.found === 'string') length = d.found.endsWith('…') ? d.found.length - 1 : d.found.length;
  else length = 0;
  const out: QueryFault = { position, length: Math.min(length, text.length - position), code: e.code, message: e.message };
  if (typeof d.suggestion === 'string') out.suggestion = d.suggestion;
  return out;
}
