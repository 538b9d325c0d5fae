import { callerId, type Handler } from '@app/shared/bus';
import type { QueryOps } from '@app/shared/contracts';
import { boardScopeFilter, loadBoard, type ServiceDeps } from '@app/shared/domain';
import { compileFilter, metadataPath, sortDocs, type Filter, type Projection } from '@app/shared/store';
import { compileColumn, sprintFor, tasksOf, type CompiledColumn } from '../reads.js';

const DEFAULT_PREVIEW = 3;

/**
 * The top-level stored fields a filter or sort reads: every key that is not an operator, cut to
 * its first path segment (`metadata.app%2Esprint` → `metadata`). Over-inclusion is harmless.
 */
function fieldsRead(node: unknown, out: Set<string>): Set<string> {
  if (Array.isArray(node)) for (const n of node) fieldsRead(n, out);
  else if (node !== null && typeof node === 'object')
    for (const [k, v] of Object.entries(node)) {
      if (!k.startsWith('$')) out.add(k.split('.')[0]!);
      fieldsRead(v, out);
    }
  return out;
}

/** Inclusion projection covering every column's filter and sort plus the preview title. */
function projectionFor(columns: CompiledColumn[]): Projection {
  const fields = new Set(['title']);
  for (const c of columns) fieldsRead([c.filter, c.sort], fields);
  return Object.fromEntries([...fields].map((f) => [f, 1 as const]));
}

/**
 * Board summary (Draft; SPEC "GET /api/v1/boards/{boardId}/summary"): per column its total, the
 * first `preview` titles in column order, and its WIP flags.
 *
 * Store round trips are constant, not per column: ONE `find` of the board scope (narrowed by the
 * sprint clause, which every column's effective query carries), projected to the fields the
 * columns read; then each column's compiled filter is evaluated in memory with the embedded
 * store's matcher (`compileFilter`) and its first `preview` matches picked in the column's own sort
 * (`sortDocs`, MongoDB order). Cost is O(scope × columns) in memory (docs/query-service.md).
 * Errors: 404 `BOARD_NOT_FOUND`; 400 if a stored column query no longer compiles.
 */
export const boardSummary =
  ({ store, clock }: ServiceDeps): Handler<typeof QueryOps.summary> =>
  async (input, ctx) => {
    const { board, principal } = await loadBoard(store, callerId(ctx), input.boardId, 'read');
    const sprintId = sprintFor(board, input.sprint);
    const now = clock.now();
    const columns = board.columns.map((column) => compileColumn(board, column, sprintId, now));
    const scope: Filter = boardScopeFilter(board, principal);
    const docs = await tasksOf(store).find(sprintId === undefined ? scope : { $and: [scope, { [metadataPath('app.sprint')]: sprintId }] }, {
      projection: projectionFor(columns),
    });
    const preview = input.preview ?? DEFAULT_PREVIEW;
    return {
      board_id: board._id,
      name: board.name,
      ...(board.activeSprintId !== undefined ? { active_sprint_id: board.activeSprintId } : {}),
      columns: columns.map(({ column, filter, sort }) => {
        const matches = compileFilter(filter);
        const matching = docs.filter((d) => matches(d));
        const titles = sortDocs(matching, sort, preview).map((d) => d.title);
        return {
          column_id: column.id,
          name: column.name,
          total: matching.length,
          preview: titles,
          ...(column.wip_limit !== undefined ? { wip_limit: column.wip_limit, over_wip_limit: matching.length > column.wip_limit } : {}),
        };
      }),
    };
  };
