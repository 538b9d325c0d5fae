import { describe, expect, it } from 'vitest';
import { httpJson, startAllInOne, tempDir } from './child.js';

/**
 * `EMBEDDED_ISOLATION=snapshot` (docs/store.md "Snapshot isolation"): the built all-in-one runs its
 * embedded store under MongoDB's concurrency model, says so at start, keeps every rule a user
 * sees (a blocking WIP limit holds under concurrent moves), and counts write conflicts and
 * transaction retries in /metrics.
 */
describe('the all-in-one with EMBEDDED_ISOLATION=snapshot', () => {
  it('warns at start, holds a blocking WIP limit under concurrent moves, and reports conflicts and retries in /metrics', { timeout: 120_000 }, async () => {
    const data = await tempDir('isolation-');
    const server = await startAllInOne(data.dir, { env: { EMBEDDED_ISOLATION: 'snapshot', LOG_LEVEL: 'warn' } });
    try {
      expect(server.child.stdout() + server.child.stderr()).toContain('EMBEDDED_ISOLATION=snapshot');
      expect((await httpJson(server, 'POST', '/auth/v2/register', { username: 'iso', password: 'isolation password' })).status).toBe(201);
      const token: string = (await httpJson(server, 'POST', '/auth/v2/login', { username: 'iso', password: 'isolation password' })).body.accessToken;
      const board = await httpJson(server, 'POST', '/api/v1/boards', {
        name: 'Flow', board_type: 'private', columns: [
          { id: 'todo', name: 'To Do', query: "status = 'todo'" },
          { id: 'doing', name: 'Doing', query: "status = 'doing'", wip_limit: 1, wip_policy: 'block' },
        ],
      }, token);
      expect(board.status).toBe(201);
      const boardId: string = board.body.id;
      // rounds of two concurrent moves into the one free place, each round on a fresh column state
      for (let round = 0; round < 5; round++) {
        const ids: string[] = [];
        for (const title of ['a', 'b']) ids.push((await httpJson(server, 'POST', `/api/v1/boards/${boardId}/tasks`, { title: `${title}${round}`, status: 'todo' }, token)).body.id);
        const moves = await Promise.all(ids.map((id) => httpJson(server, 'POST', `/api/v1/boards/${boardId}/tasks/${id}/move`, { from_column_id: 'todo', to_column_id: 'doing' }, token)));
        expect(moves.map((m) => m.status).sort(), JSON.stringify(moves.map((m) => m.body))).toEqual([200, 409]);
        // empty the column again
        const moved = moves.find((m) => m.status === 200)!.body.task.id as string;
        expect((await httpJson(server, 'PATCH', `/api/v1/tasks/${moved}`, { status: 'done' }, token)).status).toBe(200);
      }
      const metrics = await fetch(`${server.base}/metrics`).then((r) => r.text());
      expect(metrics).toMatch(/^store_write_conflicts_total \d+/m);
      expect(metrics).toMatch(/^store_transaction_retries_total \d+/m);
    } finally {
      await server.child.stop('SIGTERM');
      await data.remove();
    }
  });
});
