// Section `durability`: the embedded journal's `synchronous=FULL` (the default: a 2xx
// means the write is on disk) against `EMBEDDED_SYNC=normal` (synced at checkpoints only), on the
// write paths where the difference shows: task create and task PATCH.
import { accessToken, BENCH_USER_ID, http, JWT_SECRET, measure, pairedRatio, row, TABLE_HEAD } from '../lib.mjs';
import { CREATE_BODY } from './http.mjs';

const PATCH_BODY = { description: 'Reworded after the review: cover the column read first.', status: 'doing' };

/**
 * Two all-in-one processes, one per EMBEDDED_SYNC value, each on its own temp DATA_DIR (the same
 * disk), loaded alternately (interleaved runs, medians): POST /api/v1/tasks and PATCH
 * /api/v1/tasks/{id} at c=10. Reports FULL ÷ NORMAL per write path; no target (the figure is the
 * price of durable acknowledgements, written into docs/store.md).
 */
export async function durabilitySection(scope) {
  const servers = {};
  for (const sync of ['full', 'normal']) {
    const proc = await scope.process('bench/servers/all-in-one.mjs', {
      env: { DATA_DIR: scope.tempDir(`bench-sync-${sync}-`), JWT_SECRET, EMBEDDED_SYNC: sync },
    });
    const base = `http://127.0.0.1:${proc.info.port}`;
    const token = accessToken(BENCH_USER_ID);
    const created = await http(base, 'POST', '/api/v1/tasks', { token, body: CREATE_BODY });
    servers[sync] = { base, auth: { authorization: `Bearer ${token}` }, taskPath: `/api/v1/tasks/${created.json.id}` };
  }
  const post = (s) => ({ url: `${s.base}/api/v1/tasks`, method: 'POST', body: JSON.stringify(CREATE_BODY), headers: s.auth });
  const patch = (s) => ({ url: s.base + s.taskPath, method: 'PATCH', body: JSON.stringify(PATCH_BODY), headers: s.auth });
  const { full, normal } = servers;

  const r = await measure({
    normalPost: post(normal),
    fullPost: post(full),
    normalPatch: patch(normal),
    fullPatch: patch(full),
  });
  const postRatio = pairedRatio(r.fullPost, r.normalPost);
  const patchRatio = pairedRatio(r.fullPatch, r.normalPatch);
  return [
    'Two all-in-one processes (EMBEDDED_SYNC=normal and the default full), own DATA_DIRs on the same disk, interleaved runs at c=10; ratio = req/s ÷ the NORMAL row above it.',
    '',
    TABLE_HEAD,
    row('NORMAL POST /tasks c=10', r.normalPost, r.normalPost),
    row('FULL (default) POST /tasks c=10', r.fullPost, r.normalPost),
    row('NORMAL PATCH /tasks/{id} c=10', r.normalPatch, r.normalPatch),
    row('FULL (default) PATCH /tasks/{id} c=10', r.fullPatch, r.normalPatch),
    '',
    `- FULL ÷ NORMAL, task create: ${postRatio.text}`,
    `- FULL ÷ NORMAL, task PATCH: ${patchRatio.text}`,
  ];
}
