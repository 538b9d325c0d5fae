import { describe, expect, it } from 'vitest';
import { EmbeddedStore } from '@app/shared/store';
import { aTask, insert, TransactionRulesStore } from '@app/shared/testing';
import { expectError, system } from './system.js';

/**
 * What a query may cost, through HTTP on the suite's store leg (docs/query-language.md "Safety"):
 * a LIKE pattern past the documented limits is a 400 naming its position on every store, and the
 * text matching of LIKE, ILIKE and `~` answers the same on both stores (case folding, the end of
 * the text).
 */
describe('query cost and text matching through HTTP', () => {
  it('refuses a deep page sorted by description, 60 nested parentheses and a 1,000-value IN list with 400 QUERY_TOO_COSTLY at their positions', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const deep = await sys.call('POST', '/api/v1/tasks/query', alice, { query: "description !~ 'zzz' ORDER BY description DESC", page: 200, pageSize: 200 });
    expect(expectError(deep, 400, 'QUERY_TOO_COSTLY').details).toMatchObject({ rule: 'text-sort-depth', position: 30 });
    const first = await sys.call('POST', '/api/v1/tasks/query', alice, { query: "description !~ 'zzz' ORDER BY description DESC", page: 1, pageSize: 200 });
    expect(first.status).toBe(200);
    const nested = `${'('.repeat(60)}title = 'a' OR title = 'b'${')'.repeat(60)}`;
    expect(expectError(await sys.call('POST', '/api/v1/tasks/query', alice, { query: nested }), 400, 'QUERY_TOO_COSTLY').details).toMatchObject({ rule: 'nesting' });
    const list = `cf.x IN (${Array.from({ length: 1000 }, (_, i) => i).join(',')})`;
    expect(expectError(await sys.call('POST', '/api/v1/tasks/query', alice, { query: list }), 400, 'QUERY_TOO_COSTLY').details).toMatchObject({ rule: 'list-size', position: 8 });
    const sorted = await sys.call('POST', '/api/v1/tasks/query', alice, { query: '', sort: { column: 'title', direction: 'asc' }, page: 100, pageSize: 50 });
    expect(expectError(sorted, 400, 'QUERY_TOO_COSTLY').details).toMatchObject({ field: '/sort/column' });
  });

  it("the probe `title LIKE '%_%_…'` is a 400 at the pattern's position, and every user's writes go on", async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const probe = `title LIKE '${'%_'.repeat(2500)}'`;
    const refused = expectError(await sys.call('POST', '/api/v1/tasks/query', alice, { query: probe }), 400, 'QUERY_SYNTAX');
    expect(refused.details.position).toBe(11);
    const validated = await sys.call('POST', '/api/v1/tasks/query/validate', alice, { query: probe });
    expect(validated.status).toBe(200);
    expect(validated.body).toMatchObject({ valid: false, errors: [{ code: 'QUERY_SYNTAX', position: 11 }] });
    // the largest accepted pattern runs, and writes of every user answer as before
    const allowed = `title LIKE '${'%_'.repeat(499)}%'`;
    expect((await sys.call('POST', '/api/v1/tasks/query', alice, { query: allowed })).status).toBe(200);
    const created = await sys.call('POST', '/api/v1/tasks', bob, { title: 'after the probe' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const renamed = await sys.call('PATCH', `/api/v1/tasks/${created.body.id}`, bob, { title: 'renamed after the probe' }, { 'If-Match': `"${created.body.version}"` });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
  });

  it("another user's read started while a long query runs is answered before it (the query yields)", async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const text = 'lorem ipsum dolor sit amet '.repeat(10);
    await insert(sys.store, { tasks: Array.from({ length: 30_000 }, (_, i) => aTask({ owner: alice.id, title: `t${i}`, description: `${text}${i}` })) });
    const mine = await sys.call('POST', '/api/v1/tasks', bob, { title: 'mine' });
    expect(mine.status).toBe(201);
    const query = { query: "description !~ 'a.*b.*c.*z' ORDER BY description DESC", pageSize: 200 };
    // warm: the first query fills the indexes
    expect((await sys.call('POST', '/api/v1/tasks/query', alice, query)).status).toBe(200);
    // bob reads in a loop while alice's query runs: no read waits behind the whole scan
    let running = true;
    const started = performance.now();
    const long = sys.call('POST', '/api/v1/tasks/query', alice, query).finally(() => (running = false));
    const gaps: number[] = [];
    let last = performance.now();
    // (each read after a turn of the event loop, as reads arriving on sockets would be)
    while (running && gaps.length < 10_000) {
      await new Promise((r) => setImmediate(r));
      const r = await sys.call('GET', `/api/v1/tasks/${mine.body.id}`, bob);
      expect(r.status).toBe(200);
      const now = performance.now();
      gaps.push(now - last);
      last = now;
    }
    const q = await long;
    const took = performance.now() - started;
    expect(q.status).toBe(200);
    expect(q.body.data).toHaveLength(200);
    expect(gaps.length).toBeGreaterThan(3);
    expect(Math.max(...gaps)).toBeLessThan(took / 3);
  });

  it('ILIKE and ~ fold ſ/s, Kelvin/k and Angstrom/å as MongoDB does, and a pattern ends at the end of the text, not before a final newline', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    for (const title of ['ſtatus', '\u212aelvin', '\u212bngström', 'İstanbul']) {
      expect((await sys.call('POST', '/api/v1/tasks', alice, { title })).status).toBe(201);
    }
    expect((await sys.call('POST', '/api/v1/tasks', alice, { title: 'newline', description: 'line\n' })).status).toBe(201);
    const titles = async (query: string) => {
      const res = await sys.call('POST', '/api/v1/tasks/query', alice, { query });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data.map((t: { title: string }) => t.title).sort();
    };
    expect(await titles("title ILIKE 'status'")).toEqual(['ſtatus']);
    expect(await titles("title ~ 'KELVIN'")).toEqual(['\u212aelvin']);
    expect(await titles("title ILIKE 'ångström'")).toEqual(['\u212bngström']);
    expect(await titles("title LIKE 'status'")).toEqual([]);
    expect(await titles("title ILIKE 'istanbul'")).toEqual([]);
    expect(await titles("description LIKE 'line'")).toEqual([]);
    expect(await titles("description ILIKE '%E'")).toEqual([]);
    expect(await titles("description LIKE 'line_'")).toEqual(['newline']);
  });

  it('a query whose scan runs past the time limit answers 503 QUERY_TIMEOUT, and the next request answers (embedded store, limit 0 ms)', async () => {
    await using sys = await system({ store: async () => new TransactionRulesStore(EmbeddedStore.memory({ queryTimeLimitMs: 0 }), { failFirstAttempt: false }) });
    const alice = await sys.user('alice');
    await insert(sys.store, { tasks: Array.from({ length: 1500 }, (_, i) => aTask({ owner: alice.id, title: `task ${i}` })) });
    const slow = await sys.call('POST', '/api/v1/tasks/query', alice, { query: "title ~ 'no such words'" });
    const body = expectError(slow, 503, 'QUERY_TIMEOUT');
    expect(body.message).toContain('time limit');
    expect((await sys.call('POST', '/api/v1/tasks', alice, { title: 'still writable' })).status).toBe(201);
  });
});
