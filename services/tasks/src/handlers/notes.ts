import type { Handler } from '@app/shared/bus';
import type { TasksOps } from '@app/shared/contracts';
import { newNoteDoc, runWrite, type ServiceDeps } from '@app/shared/domain';
import { listNotes as readNotes, loadTask, notesOf, toNote } from '../task-store.js';

/**
 * `tasks.addNote`: adds a note to a task the caller can write; replies with the note (201) and
 * emits `note.created` `{note}`. The task's version is unchanged (a note is not a task field).
 */
export const addNote = (deps: ServiceDeps): Handler<typeof TasksOps.addNote> => async (input, ctx) =>
  runWrite(deps, ctx, async (w) => {
    const { task } = await loadTask(deps.store, ctx, input.taskId, 'write', w.session);
    const note = newNoteDoc(input.taskId, input.content, w.userId, w.now);
    await notesOf(deps.store).insertOne(note, { session: w.session });
    const out = toNote(note);
    w.emit({ type: 'note.created', task_id: task._id, ...(task.boardId === undefined ? {} : { board_id: task.boardId }), data: { note: out } });
    return out;
  });

/** `tasks.listNotes`: the notes of a task the caller can read, oldest first. */
export const listNotes = (deps: ServiceDeps): Handler<typeof TasksOps.listNotes> => async (input, ctx) => {
  await loadTask(deps.store, ctx, input.taskId, 'read');
  return readNotes(deps.store, input.taskId);
};
