import { describe, expect, it } from 'vitest';
import { validateQuery } from '@app/shared/query';

describe('validateQuery: check as you type', () => {
  it('answers the canonical text of a valid query, functions kept', () => {
    expect(validateQuery("status='todo' and assignee = ME() order by title", { board: false })).toEqual({
      valid: true, errors: [], canonical: "status = 'todo' AND assignee = me() ORDER BY title DESC",
    });
  });

  it('underlines the token at fault', () => {
    expect(validateQuery("status = todo AND x = 1", { board: false })).toEqual({
      valid: false, canonical: null,
      errors: [{ position: 9, length: 4, code: 'QUERY_SYNTAX', message: expect.stringContaining('Unexpected "todo" at position 9') }],
    });
    expect(validateQuery("status = 'todo' AND", { board: false }).errors).toEqual([
      { position: 19, length: 0, code: 'QUERY_SYNTAX', message: expect.stringContaining('end of query') },
    ]);
  });

  it('suggests the nearest field or function', () => {
    expect(validateQuery("stauts = 'todo'", { board: false }).errors).toEqual([
      { position: 0, length: 6, code: 'QUERY_UNKNOWN_FIELD', message: expect.any(String), suggestion: 'status' },
    ]);
    expect(validateQuery('app.sprint = currentSprint()', { board: true }).errors).toEqual([
      { position: 13, length: 13, code: 'QUERY_UNKNOWN_FUNCTION', message: expect.stringContaining('did you mean activeSprint()'), suggestion: 'activeSprint()' },
    ]);
  });

  it('allows activeSprint() only when the query runs on a board', () => {
    expect(validateQuery('app.sprint = activeSprint()', { board: true }).valid).toBe(true);
    expect(validateQuery('app.sprint = activeSprint()', { board: false }).errors).toEqual([
      { position: 13, length: 12, code: 'QUERY_FUNCTION_CONTEXT', message: expect.any(String) },
    ]);
  });

  it('reports a text over the length limit from the limit on', () => {
    const text = `title ~ '${'x'.repeat(10_000)}'`;
    expect(validateQuery(text, { board: false }).errors).toEqual([
      { position: 10_000, length: text.length - 10_000, code: 'QUERY_TOO_LONG', message: expect.any(String) },
    ]);
  });
});
