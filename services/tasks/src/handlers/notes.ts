import type { Handler } from '@app/shared/bus';
import type { TasksOps } from '@app/shared/contracts';
import { newNoteDoc, type ServiceDeps } from '@app/shared/domain';
import { listNotes as readNotes, loadTask, notesOf, toNote } from '../task-access.js';

/** `tasks.addNote`: adds a note to a task the caller can write; replies with the note (201). */
export const addNote = (deps: ServiceDeps): Handler<typeof TasksOps.addNote> => async (input, ctx) => {
  const { userId } = await loadTask(deps.store, ctx, input.taskId, 'write');
  const note = newNoteDoc(input.taskId, input.content, userId, deps.clock.now());
  await notesOf(deps.store).insertOne(note);
  return toNote(note);
};

/** `tasks.listNotes`: the notes of a task the caller can read, oldest first. */
export const listNotes = (deps: ServiceDeps): Handler<typeof TasksOps.listNotes> => async (input, ctx) => {
  await loadTask(deps.store, ctx, input.taskId, 'read');
  return readNotes(deps.store, input.taskId);
};
