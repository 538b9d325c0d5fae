import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { httpJson, startAllInOne, tempDir, type AllInOne } from './child.js';

/**
 * Crash test (docs/store.md "One process, durable acknowledgements"): the built
 * all-in-one on a temporary DATA_DIR takes concurrent task creates, card moves and close-sprints
 * over loopback; it is SIGKILLed at a random moment, restarted on the same folder, and then:
 * every acknowledged write is there, every card is in exactly one column (a move is all or
 * nothing), and every sprint is either open with all its members or closed with all of them
 * rolled over and its retro note written. Two rounds (the second crashes a restarted store);
 * bounded in requests and time; the folder and the processes are removed whatever happens.
 *
 * A request the kill cuts off has an unknown outcome and ends its worker; anything else a worker
 * meets (an unexpected status, the server gone before the kill) is a failure, counted and reported.
 * The kill times and the close spread come from one seed, logged at the start: `CRASH_SEED=<seed>`
 * replays them.
 */

/** The seed of this run's random timings: `CRASH_SEED`, else a fresh one (logged). */
const SEED = process.env.CRASH_SEED !== undefined ? Number(process.env.CRASH_SEED) : randomInt(2 ** 31);

/** A small seeded generator (mulberry32): uniform floats in [0, 1). */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** True for the error of a request the server's death cut off (fetch's `fetch failed` / `terminated`). */
function cutOff(e: unknown): boolean {
  return e instanceof TypeError && (e.message === 'fetch failed' || e.message === 'terminated');
}

const ROUNDS = 2;
const CREATORS = 4;
const CARDS_PER_MOVER = 4;
const MOVERS = 3;
const SPRINTS = 6;
/** Each worker stops after this many requests, whatever the kill timer does. */
const MAX_REQUESTS_PER_WORKER = 400;

const COLUMNS = [
  { name: 'To Do', query: "status = 'todo'" },
  { name: 'Doing', query: "status = 'doing' AND 'wip' IN tags" },
  { name: 'Done', query: "status = 'done'" },
];
const NEXT: Record<string, string> = { 'col-to-do': 'col-doing', 'col-doing': 'col-done', 'col-done': 'col-to-do' };

/** The all-in-one on `dir`, logging warnings (a crash test's failure wants the server's side too). */
const start = (dir: string) => startAllInOne(dir, { env: { LOG_LEVEL: 'warn' } });

/** {@link httpJson} whose answer must have `status` (setup steps, checks); returns the body. */
async function must(s: AllInOne, token: string | undefined, status: number, method: string, path: string, body?: unknown): Promise<any> {
  const res = await httpJson(s, method, path, body, token);
  if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** The column a card's fields put it in, or a description of the impossible state it is in. */
function columnOf(task: { status: string; tags: string[] }): string {
  const wip = task.tags.includes('wip');
  if (task.status === 'todo' && !wip) return 'col-to-do';
  if (task.status === 'doing' && wip) return 'col-doing';
  if (task.status === 'done' && !wip) return 'col-done';
  return `half-applied (status ${task.status}, tags ${JSON.stringify(task.tags)})`;
}

describe('crash: SIGKILL during concurrent writes, then restart', () => {
  it('keeps every acknowledged write and never half-applies a move or a close-sprint', { timeout: 180_000 }, async () => {
    console.log(`crash test seed ${SEED} (replay the kill times with CRASH_SEED=${SEED})`);
    const random = seededRandom(SEED);
    const data = await tempDir('crash-test-');
    let server: AllInOne | undefined;
    try {
      server = await start(data.dir);
      await must(server, undefined, 201, 'POST', '/auth/v2/register', { username: 'crash', password: 'crash test password' });
      const token: string = (await must(server, undefined, 200, 'POST', '/auth/v2/login', { username: 'crash', password: 'crash test password' })).accessToken;
      const board = await must(server, token, 201, 'POST', '/api/v1/boards', { name: 'Crash', board_type: 'private', columns: COLUMNS });

      const createdAcked = new Map<string, string>(); // task id → title
      const cards = new Map<string, { acked: string; inFlight?: string }>(); // card id → column
      const sprints = new Map<string, { members: string[]; finished: string; closeAcked: boolean }>();

      for (let round = 1; round <= ROUNDS; round++) {
        const s: AllInOne = server!;
        // setup of this round, acknowledged before the chaos starts
        const roundCards: string[] = [];
        for (let i = 0; i < MOVERS * CARDS_PER_MOVER; i++) {
          const card = await must(s, token, 201, 'POST', `/api/v1/boards/${board.id}/tasks`, { title: `card ${round}-${i}`, column_id: 'col-to-do' });
          cards.set(card.id, { acked: 'col-to-do' });
          roundCards.push(card.id);
        }
        const roundSprints: string[] = [];
        for (let i = 0; i < SPRINTS; i++) {
          const sprint = await must(s, token, 201, 'POST', '/api/v1/tasks', { title: `sprint ${round}-${i}`, status: 'doing', metadata: { 'app.type': 'sprint' } });
          const members: string[] = [];
          for (let m = 0; m < 2; m++) {
            members.push((await must(s, token, 201, 'POST', '/api/v1/tasks', { title: `open ${round}-${i}-${m}`, metadata: { 'app.sprint': sprint.id } })).id);
          }
          const finished = (await must(s, token, 201, 'POST', '/api/v1/tasks', { title: `done ${round}-${i}`, status: 'done', metadata: { 'app.sprint': sprint.id, 'app.points': 3 } })).id;
          sprints.set(sprint.id, { members, finished, closeAcked: false });
          roundSprints.push(sprint.id);
        }

        // the chaos: concurrent writers until the server is killed (or their request budget ends)
        let killing = false;
        const failures: string[] = [];
        const worker = async (name: string, step: (i: number) => Promise<void>) => {
          for (let i = 0; i < MAX_REQUESTS_PER_WORKER && !killing; i++) {
            try {
              await step(i);
            } catch (e) {
              // cut off by the kill: its outcome is unknown; anything else is a failure
              if (!(killing && cutOff(e))) failures.push(`${name}, request ${i}: ${e instanceof Error ? e.message : String(e)}`);
              return;
            }
          }
        };
        const creators = Array.from({ length: CREATORS }, (_, w) =>
          worker(`creator ${w}`, async (i) => {
            const title = `created ${round}-${w}-${i}`;
            const res = await httpJson(s, 'POST', '/api/v1/tasks', { title, tags: ['crash'] }, token);
            if (res.status === 201) createdAcked.set(res.body.id, title);
          }),
        );
        const movers = Array.from({ length: MOVERS }, (_, w) =>
          worker(`mover ${w}`, async (i) => {
            const id = roundCards[w * CARDS_PER_MOVER + (i % CARDS_PER_MOVER)]!;
            const card = cards.get(id)!;
            const to = NEXT[card.acked]!;
            card.inFlight = to;
            const res = await httpJson(s, 'POST', `/api/v1/boards/${board.id}/tasks/${id}/move`, { from_column_id: card.acked, to_column_id: to }, token);
            if (res.status !== 200) throw new Error(`move ${id}: ${res.status} ${JSON.stringify(res.body)}`);
            cards.set(id, { acked: to });
          }),
        );
        const closer = worker('closer', async (i) => {
          if (i >= roundSprints.length) {
            await sleep(5);
            return;
          }
          await sleep(Math.floor(random() * 150)); // closes spread over the window the kill falls in
          const id = roundSprints[i]!;
          const res = await httpJson(s, 'POST', `/api/v1/tasks/${id}/close-sprint`, { rollover: 'backlog' }, token);
          if (res.status !== 200) throw new Error(`close ${id}: ${res.status} ${JSON.stringify(res.body)}`);
          sprints.get(id)!.closeAcked = true;
        });

        await sleep(150 + Math.floor(random() * 1_200));
        killing = true;
        await s.child.stop('SIGKILL');
        await Promise.all([...creators, ...movers, closer]);
        expect(failures, `worker failures in round ${round} (CRASH_SEED=${SEED})`).toEqual([]);
        expect(createdAcked.size).toBeGreaterThan(0);

        // restart on the same folder and check everything acknowledged so far (all rounds)
        server = await start(data.dir);
        const r: AllInOne = server;
        const missing: string[] = [];
        for (const [id, title] of createdAcked) {
          const res = await httpJson(r, 'GET', `/api/v1/tasks/${id}`, undefined, token);
          if (res.status !== 200 || res.body.title !== title) missing.push(`${id} (${res.status})`);
        }
        expect(missing, `acknowledged creates missing after the crash of round ${round}`).toEqual([]);

        for (const [id, card] of cards) {
          const task = await must(r, token, 200, 'GET', `/api/v1/tasks/${id}`);
          const column = columnOf(task);
          // the last acknowledged move is applied; the one in flight at the kill may be, as a whole
          expect([card.acked, ...(card.inFlight ? [card.inFlight] : [])], `card ${id}`).toContain(column);
          cards.set(id, { acked: column });
        }

        for (const [id, sprint] of sprints) {
          const detail = await must(r, token, 200, 'GET', `/api/v1/tasks/${id}`);
          const members = await Promise.all(sprint.members.map((m) => must(r, token, 200, 'GET', `/api/v1/tasks/${m}`)));
          const finished = await must(r, token, 200, 'GET', `/api/v1/tasks/${sprint.finished}`);
          expect(finished.metadata['app.sprint'], `finished member of ${id}`).toBe(id);
          if (detail.status === 'done') {
            expect(detail.notes, `retro note of closed sprint ${id}`).toHaveLength(1);
            for (const m of members) expect(m.metadata, `rolled-over member of closed sprint ${id}`).not.toHaveProperty(['app.sprint']);
          } else {
            expect(sprint.closeAcked, `sprint ${id} was closed with a 200 but is open`).toBe(false);
            expect(detail.notes).toEqual([]);
            for (const m of members) expect(m.metadata['app.sprint'], `member of open sprint ${id}`).toBe(id);
          }
        }
      }
    } finally {
      await server?.child.stop();
      await data.remove();
    }
  });
});
