/**
 * A script on a client generated from the service's OpenAPI 3.1 document (README "A typed
 * client"): openapi-typescript makes `openapi.gen.ts` from `GET /api/v1/openapi.json`, and
 * openapi-fetch sends typed requests with it. Every path, body field and answer below is checked
 * by `tsc` against the document; a route change that breaks the script fails the type check.
 *
 *   npx openapi-typescript http://localhost:8080/api/v1/openapi.json -o openapi.gen.ts
 *
 * Runs the board's main loop: log in, create a task, create a board, put a card on it and move
 * it, query, then close a sprint. Throws the error body of a refused request.
 */
import createClient from 'openapi-fetch';
import type { components, paths } from './openapi.gen.js';

export type Task = components['schemas']['Task'];

/** What the walkthrough made and read, for the caller to print (or a test to check). */
export interface WalkthroughResult {
  task: Task;
  boardId: string;
  moved: { status: string; applied: number };
  found: number;
  closed: unknown;
}

/** The error body of a refused request, as an Error. */
function refused(what: string, error: unknown): Error {
  return new Error(`${what}: ${JSON.stringify(error)}`);
}

/** Logs in as `username` at `baseUrl` (e.g. `http://localhost:8080`) and walks the main loop. */
export async function walkthrough(baseUrl: string, username: string, password: string): Promise<WalkthroughResult> {
  const api = createClient<paths>({ baseUrl });

  const login = await api.POST('/auth/v2/login', { body: { username, password } });
  if (!login.data) throw refused('login', login.error);
  api.use({ onRequest: ({ request }) => { request.headers.set('authorization', `Bearer ${login.data.accessToken}`); } });

  const task = await api.POST('/api/v1/tasks', { body: { title: 'Write the release notes', tags: ['docs'] } });
  if (!task.data) throw refused('create task', task.error);

  const board = await api.POST('/api/v1/boards', {
    body: {
      name: 'Release', board_type: 'private',
      columns: [{ name: 'To Do', query: "status = 'todo'" }, { name: 'Done', query: "status = 'done'", actions: [{ trigger: 'enter', field: 'status', operation: 'set', value: 'done' }] }],
    },
  });
  // the document's 2xx answers of a board create: 201 the board, or 200 a dry run's preview (`?dry_run=true`)
  if (!board.data || !('columns' in board.data)) throw refused('create board', board.error);
  const [todo, done] = board.data.columns;
  if (!todo || !done) throw new Error('the board has no two columns');
  const boardId = board.data.id;

  const card = await api.POST('/api/v1/boards/{boardId}/tasks', { params: { path: { boardId } }, body: { title: 'Tag the release', column_id: todo.id } });
  if (!card.data) throw refused('create card', card.error);
  const move = await api.POST('/api/v1/boards/{boardId}/tasks/{taskId}/move', {
    params: { path: { boardId, taskId: card.data.id } },
    body: { from_column_id: todo.id, to_column_id: done.id },
  });
  if (!move.data) throw refused('move', move.error);

  const query = await api.POST('/api/v1/tasks/query', { body: { query: "tags CONTAINS 'docs'", pageSize: 50 } });
  if (!query.data) throw refused('query', query.error);

  const sprint = await api.POST('/api/v1/boards/{boardId}/sprints', { params: { path: { boardId } }, body: { title: 'Sprint 1', start: true } });
  if (!sprint.data) throw refused('create sprint', sprint.error);
  const closed = await api.POST('/api/v1/tasks/{sprintId}/close-sprint', { params: { path: { sprintId: sprint.data.id } }, body: {} });
  if (!closed.data) throw refused('close sprint', closed.error);

  return {
    task: task.data,
    boardId,
    moved: { status: move.data.task.status, applied: move.data.applied_actions.length },
    found: query.data.total,
    closed: closed.data,
  };
}
