import { describe, expect, it } from 'vitest';
import { boardsService } from '@app/boards';
import { queryService } from '@app/query';
import { sprintsService } from '@app/sprints';
import { tasksService } from '@app/tasks';
import { OP_SCOPES } from '@app/shared/contracts';
import { fixedClock } from '@app/shared/domain';
import { silentLogger } from '@app/shared/log';
import { EmbeddedStore } from '@app/shared/store';
import { allRoutes } from '../../src/index.js';

/** Access token scopes (docs/auth.md "Access tokens") cover every op a service serves. */
describe('op scopes', () => {
  it('name the scope of every op the four services serve (an unlisted op would need admin)', async () => {
    const store = EmbeddedStore.memory();
    const deps = { store, clock: fixedClock('2026-03-02T09:00:00Z'), log: silentLogger() };
    const served = [tasksService, boardsService, sprintsService, queryService].flatMap((s) => s.bindings(deps)).map((b) => b.op.subject);
    expect(served.filter((s) => OP_SCOPES[s] === undefined)).toEqual([]);
    await store.close();
  });

  it('let a read token reach every GET route of the table but the webhooks (admin)', () => {
    const notRead = allRoutes.filter((r) => r.method === 'GET' && OP_SCOPES[r.op.subject] !== 'read');
    expect(notRead.map((r) => `${r.url} ${OP_SCOPES[r.op.subject]}`)).toEqual(notRead.map((r) => `${r.url} admin`));
    expect(notRead.every((r) => r.url.startsWith('/api/v1/webhooks'))).toBe(true);
  });
});
