import { callerId, type Handler } from '@app/shared/bus';
import type { QueryOps } from '@app/shared/contracts';
import { loadBoard, type ServiceDeps } from '@app/shared/domain';
import { validateQuery } from '@app/shared/query';

/**
 * `POST /api/v1/tasks/query/validate` (docs/query-language.md "Validation as you type"): checks
 * the text without running it and answers 200 `{valid, errors, canonical}`, a fault being
 * `{position, length, code, message, suggestion?}`. With `board_id` the query runs on that board
 * (so `activeSprint()` is allowed); a board the caller cannot read is 404 `BOARD_NOT_FOUND`.
 * Store round trips: none without `board_id`, the board and the caller's groups with it.
 */
export const validateQueryText =
  ({ store }: ServiceDeps): Handler<typeof QueryOps.validate> =>
  async (input, ctx) => {
    const userId = callerId(ctx);
    if (input.board_id !== undefined) await loadBoard(store, userId, input.board_id, 'read');
    return validateQuery(input.query, { board: input.board_id !== undefined });
  };
