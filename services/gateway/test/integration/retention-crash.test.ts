import { afterAll, describe, expect, it } from 'vitest';
import { appendTestEvents } from '@app/shared/testing';
import { Collections, EmbeddedStore } from '@app/shared/store';
import { httpJson, startAllInOne, tempDir, type AllInOne } from './child.js';

/**
 * The retention sweep deletes old events from the embedded store in small units of work, each
 * committed on its own. The all-in-one process (built `services/gateway/dist/main.js --all`) is
 * killed with SIGKILL while its start-up sweep is removing a long expired history; after a restart
 * the feed still holds every event the sweep was not meant to remove, with no gap in `seq`.
 */
const servers: AllInOne[] = [];
let removeDir: (() => Promise<void>) | undefined;

afterAll(async () => {
  for (const s of servers) await s.child.stop();
  await removeDir?.();
});

const OLD_EVENTS = 20_000;
const RECENT_EVENTS = 40;

async function start(dataDir: string, opts: { ready?: boolean } = {}): Promise<AllInOne> {
  const server = await startAllInOne(dataDir, opts);
  servers.push(server);
  return server;
}

describe('event retention across a crash', () => {
  it('a SIGKILL during the retention sweep leaves the feed without gaps', async () => {
    const tmp = await tempDir('retention-crash-');
    removeDir = tmp.remove;
    const first = await start(tmp.dir);
    const creds = { username: 'sweeper', password: 'sweep test password' };
    expect((await httpJson(first, 'POST', '/auth/v2/register', creds)).status).toBe(201);
    const token = (await httpJson(first, 'POST', '/auth/v2/login', creds)).body.accessToken as string;
    const task = await httpJson(first, 'POST', '/api/v1/tasks', { title: 'watched' }, token);
    expect(task.status).toBe(201);
    await first.child.stop('SIGTERM');

    // a long history older than the retention (7 days), then a few recent events of the same task
    {
      await using store = await EmbeddedStore.open({ dir: tmp.dir });
      const old = new Date(Date.now() - 30 * 86_400_000);
      const about = { type: 'task.updated', task_id: task.body.id as string, data: { changes: [] } };
      for (let i = 0; i < OLD_EVENTS; i += 5_000) await appendTestEvents(store, Array.from({ length: 5_000 }, () => about), old);
      await appendTestEvents(store, Array.from({ length: RECENT_EVENTS }, () => about));
    }

    // killed as soon as the sweep has recorded what it removes (a cursor before it answers 410)
    const second = await start(tmp.dir, { ready: false });
    for (let expired = false; !expired; ) {
      if (second.child.proc.exitCode !== null) throw new Error(`the server exited: ${second.child.stderr()}`);
      const res = await fetch(`${second.base}/api/v1/events?after=0&limit=1`, { headers: { authorization: `Bearer ${token}` } }).catch(() => undefined);
      expired = res?.status === 410;
    }
    await second.child.stop('SIGKILL');
    let left: number;
    let swept: number;
    {
      await using store = await EmbeddedStore.open({ dir: tmp.dir });
      swept = ((await store.collection<{ _id: string; seq: number }>(Collections.counters).findOne({ _id: 'events_swept' }))?.seq ?? 0);
      left = await store.collection(Collections.events).countDocuments({ seq: { $lte: swept } });
    }
    expect(swept).toBeGreaterThan(OLD_EVENTS); // the task's create, then the old history
    expect(left).toBeGreaterThan(0); // the sweep was under way

    const third = await start(tmp.dir);
    const feed = await httpJson(third, 'GET', '/api/v1/events?limit=500', undefined, token);
    expect(feed.status).toBe(200);
    const seqs = feed.body.data.map((e: { seq: number }) => e.seq);
    expect(seqs).toEqual(Array.from({ length: RECENT_EVENTS }, (_, i) => swept + 1 + i));
    expect((await httpJson(third, 'GET', `/api/v1/events?after=${swept - 1}`, undefined, token)).status).toBe(410);
  }, 180_000);
});
