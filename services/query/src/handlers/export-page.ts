import { callerId, type Handler } from '@app/shared/bus';
import { EXPORT_PAGE_CARDS, type ExportCard, type ExportOps } from '@app/shared/contracts';
import { boardScopeFilter, loadBoard, toBoard, toTask, type NoteDoc, type ServiceDeps, type TaskDoc } from '@app/shared/domain';
import { Collections } from '@app/shared/store';
import { tasksOf } from '../reads.js';

/** A page ends before the card that would take its JSON past this many bytes (unless it is the page's first): it stays one bus reply. */
export const EXPORT_PAGE_MAX_BYTES = 512 * 1024;

/** The exported form of a stored card with its notes (oldest first). */
function exportCard(doc: TaskDoc, notes: readonly NoteDoc[]): ExportCard {
  const t = toTask(doc, 'full');
  return {
    id: t.id, title: t.title, description: t.description ?? '', status: t.status, path: t.path, tags: t.tags,
    ...(t.assignee !== undefined ? { assignee: t.assignee } : {}),
    ...(t.kickoff !== undefined ? { kickoff: t.kickoff } : {}),
    ...(t.deadline !== undefined ? { deadline: t.deadline } : {}),
    metadata: t.metadata, linked_to_ids: t.linkedToIds ?? [],
    notes: notes.map((n) => ({ content: n.content, created_at: n.created_at, created_by: n.created_by })),
    created_at: t.created_at, updated_at: t.updated_at,
  };
}

/**
 * `query.exportPage` (docs/import-export.md "Export"): one page of a board export, the cards of the
 * board's scope (docs/boards.md, as the board's columns read them, every card once whatever its
 * column) in id order after `after`, each with its fields, metadata (custom fields included), links
 * and notes; at most {@link EXPORT_PAGE_CARDS} cards and {@link EXPORT_PAGE_MAX_BYTES} of JSON
 * (always at least one card), with `next_after` while more may follow. `first: true` adds the
 * board. Every page checks read access anew. Errors: 404 `BOARD_NOT_FOUND`.
 */
export function exportPage({ store }: ServiceDeps): Handler<typeof ExportOps.page> {
  return async ({ boardId, after, first }, ctx) => {
    const userId = callerId(ctx);
    const { board, principal } = await loadBoard(store, userId, boardId, 'read');
    const scope = boardScopeFilter(board, principal);
    const docs = await tasksOf(store).find(after === undefined ? scope : { $and: [scope, { _id: { $gt: after } }] }, { sort: { _id: 1 }, limit: EXPORT_PAGE_CARDS });
    const notes = docs.length === 0 ? [] : await store.collection<NoteDoc>(Collections.notes).find({ task_id: { $in: docs.map((d) => d._id) } }, { sort: { created_at: 1, _id: 1 } });
    const byTask = new Map<string, NoteDoc[]>();
    for (const n of notes) byTask.set(n.task_id, [...(byTask.get(n.task_id) ?? []), n]);
    const cards: ExportCard[] = [];
    let bytes = 0;
    for (const doc of docs) {
      const card = exportCard(doc, byTask.get(doc._id) ?? []);
      bytes += Buffer.byteLength(JSON.stringify(card));
      if (cards.length > 0 && bytes > EXPORT_PAGE_MAX_BYTES) break;
      cards.push(card);
    }
    const more = cards.length < docs.length || docs.length === EXPORT_PAGE_CARDS;
    return {
      ...(first ? { board: toBoard(board, userId) as unknown as Record<string, unknown> } : {}),
      cards,
      ...(more ? { next_after: cards[cards.length - 1]!.id } : {}),
    };
  };
}
