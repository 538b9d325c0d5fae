import { callerId, type Handler } from '@app/shared/bus';
import type { QueryOps } from '@app/shared/contracts';
import { fieldTypesFor, loadBoard, loadPrincipal, type ServiceDeps } from '@app/shared/domain';
import { validateQuery } from '@app/shared/query';

/**
 * `POST /api/v1/tasks/query/validate` (docs/query-language.md "Validation as you type"): checks
 * the text without running it and answers 200 `{valid, errors, canonical}`, a fault being
 * `{position, length, code, message, suggestion?}`. With `board_id` the query runs on that board
 * (so `activeSprint()` is allowed); a board the caller cannot read is 404 `BOARD_NOT_FOUND`.
 * The custom fields in reach (the board's scope, else the caller's own and its groups') check
 * typed operators and values and name defined fields in suggestions (docs/custom-fields.md).
 * Store round trips: none without `board_id`, the board and the caller's groups with it; the
 * definitions (and the caller's groups) only for a query naming `cf.*` fields or an unknown word.
 */
export const validateQueryText =
  ({ store, clock }: ServiceDeps): Handler<typeof QueryOps.validate> =>
  async (input, ctx) => {
    const userId = callerId(ctx);
    const loaded = input.board_id !== undefined ? await loadBoard(store, userId, input.board_id, 'read') : undefined;
    const opts = { board: input.board_id !== undefined, now: clock.now() };
    const plain = validateQuery(input.query, opts);
    // the definitions matter only to a query naming cf.* fields, or to suggest one for an unknown word
    if (!/cf\./.test(input.query) && plain.errors[0]?.code !== 'QUERY_UNKNOWN_FIELD') return plain;
    const principal = loaded?.principal ?? (await loadPrincipal(store, userId));
    const fields = await fieldTypesFor(store, principal, loaded ? { board: loaded.board } : {});
    return validateQuery(input.query, { ...opts, fields });
  };
