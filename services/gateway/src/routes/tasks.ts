import {
  MetadataKeyParams, MetadataSetBody, Note, NoteCreateBody, NoteList, TaskCreateBody, TaskDetail, TaskMoveBody, TaskParams,
  TasksOps, TaskUpdateBody,
} from '@app/shared/contracts';
import { Task } from '@app/shared/domain';
import { route, tasksAt, type RouteSpec } from './route.js';

const TARGET = '/api/v1/tasks';
const common = { tag: 'tasks', maturity: 'live' } as const;
const taskId = (params: Record<string, string>) => params.taskId!;

/**
 * Routes of the task detail family (SPEC "Task detail family", "Metadata keys"): create, detail,
 * update (legacy verb POST), soft delete, one-key metadata writes, folder move and notes.
 * Every op input is `{...path params, ...body}`; path parameters win over body fields.
 */
export const taskRoutes: RouteSpec[] = [
  route({
    ...common,
    method: 'POST',
    ...tasksAt(''),
    op: TasksOps.create,
    input: (req) => req.body as TaskCreateBody,
    summary: 'Create a task (not on a board)',
    body: TaskCreateBody,
    response: Task,
    status: 201,
  }),
  route({
    ...common,
    method: 'GET',
    ...tasksAt('/:taskId'),
    op: TasksOps.get,
    conditional: true,
    input: (req) => ({ taskId: taskId(req.params) }),
    summary: 'Read a task with its notes and linked items',
    params: TaskParams,
    response: TaskDetail,
  }),
  route({
    ...common,
    method: 'PATCH',
    ...tasksAt('/:taskId', 'POST'),
    op: TasksOps.update,
    conditional: true,
    input: (req) => ({ ...(req.body as TaskUpdateBody), taskId: taskId(req.params) }),
    summary: 'Partially update a task; "" clears assignee, kickoff, deadline and derivedFromId',
    params: TaskParams,
    body: TaskUpdateBody,
    response: Task,
  }),
  route({
    ...common,
    method: 'DELETE',
    ...tasksAt('/:taskId'),
    op: TasksOps.remove,
    conditional: true,
    input: (req) => ({ taskId: taskId(req.params) }),
    summary: 'Soft-delete a task',
    params: TaskParams,
    status: 204,
  }),
  route({
    ...common,
    method: 'PATCH',
    ...tasksAt('/:taskId/metadata'),
    op: TasksOps.setMetadata,
    conditional: true,
    input: (req) => ({ ...(req.body as MetadataSetBody), taskId: taskId(req.params) }),
    summary: 'Set one metadata key (value: any JSON except null)',
    params: TaskParams,
    body: MetadataSetBody,
    response: TaskDetail,
  }),
  route({
    ...common,
    method: 'DELETE',
    ...tasksAt('/:taskId/metadata/:key'),
    op: TasksOps.deleteMetadata,
    conditional: true,
    input: (req) => ({ taskId: taskId(req.params), key: req.params.key! }),
    summary: 'Remove one metadata key',
    params: MetadataKeyParams,
    response: TaskDetail,
  }),
  route({
    ...common,
    method: 'PATCH',
    ...tasksAt('/:taskId/move'),
    op: TasksOps.movePath,
    conditional: true,
    input: (req) => ({ ...(req.body as TaskMoveBody), taskId: taskId(req.params) }),
    summary: 'Move a task to another folder path (not the kanban card move)',
    params: TaskParams,
    body: TaskMoveBody,
    response: Task,
  }),
  route({
    ...common,
    method: 'POST',
    url: `${TARGET}/:taskId/notes`,
    op: TasksOps.addNote,
    input: (req) => ({ ...(req.body as NoteCreateBody), taskId: taskId(req.params) }),
    summary: 'Add a note to a task',
    params: TaskParams,
    body: NoteCreateBody,
    response: Note,
    status: 201,
  }),
  route({
    ...common,
    method: 'GET',
    url: `${TARGET}/:taskId/notes`,
    op: TasksOps.listNotes,
    input: (req) => ({ taskId: taskId(req.params) }),
    summary: 'List the notes of a task, oldest first',
    params: TaskParams,
    response: NoteList,
  }),
];
