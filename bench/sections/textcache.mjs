// Section `textcache`: the write path while the text index keeps the match sets of 8 searches with
// the costliest patterns the query language accepts (up to 1,000 characters, 8 wildcard runs each;
// docs/query-language.md "Safety" and "Cost limits"), against the same server keeping none. Every create and title
// change is tested against each kept search (docs/store.md "Text search").
import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { accessToken, BENCH_USER_ID, http, JWT_SECRET, measure, pairedRatio, row, TABLE_HEAD, target } from '../lib.mjs';
import { CREATE_BODY } from './http.mjs';

/** Tasks PATCHed in rotation per server. */
const ROTATION = 200;

/**
 * The 8 kept searches: LIKE / ILIKE patterns at the limits (997 characters, 8 wildcard runs,
 * `_` runs inside each piece), on the title and the description, each with a literal of 3+
 * characters so the text index answers and keeps it.
 */
export const WORST_PATTERNS = Array.from({ length: 8 }, (_, i) => {
  const field = i % 2 === 0 ? 'title' : 'description';
  // 249 characters and 2 wildcard runs per piece (the trailing _ run joins the next %): 4 pieces and the closing % are 997 characters, 8 runs
  const piece = `%W${i}rite${'_'.repeat(100)}the${'_'.repeat(139)}`;
  return `${field} ${i < 4 ? 'LIKE' : 'ILIKE'} '${piece.repeat(4)}%'`;
});

async function server(scope) {
  const dir = scope.tempDir('bench-textcache-');
  const p = await scope.process(join('', 'bench/servers/all-in-one.mjs'), { env: { DATA_DIR: dir, JWT_SECRET } });
  return { url: `http://127.0.0.1:${p.info.port}`, pid: p.pid };
}

/** CPU time (user + system, µs) process `pid` has used so far (/proc, 10 ms ticks). */
function cpuOf(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** Server CPU µs per request of `requests` sent `amount` times at c=10 to `url`. */
async function cpuPerRequest(pid, url, requests, amount) {
  const before = cpuOf(pid);
  await new Promise((resolve, reject) => autocannon({ url, connections: 10, amount, requests, timeout: 10 }, (err, res) => (err ? reject(err) : resolve(res))));
  return (cpuOf(pid) - before) / amount;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function createRequests(headers) {
  return [{ method: 'POST', path: '/api/v1/tasks', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(CREATE_BODY) }];
}

function patchRequests(tasks, headers) {
  let n = 0;
  return [
    {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', ...headers },
      setupRequest: (req) => ({ ...req, path: `/api/v1/tasks/${tasks[n % tasks.length].id}`, body: JSON.stringify({ title: `Write the release notes ${n++}` }) }),
    },
  ];
}

/** c=10; ratio = req/s with the 8 kept searches ÷ without. Target ≥ 0.9× for create and PATCH. */
export async function textcacheSection(scope) {
  const token = accessToken(BENCH_USER_ID);
  const headers = { authorization: `Bearer ${token}` };
  const plainServer = await server(scope);
  const keptServer = await server(scope);
  const [plain, kept] = [plainServer.url, keptServer.url];
  const seeded = {};
  for (const [name, base] of [['plain', plain], ['kept', kept]]) {
    const tasks = [];
    for (let i = 0; i < ROTATION; i++) tasks.push((await http(base, 'POST', '/api/v1/tasks', { token, body: { ...CREATE_BODY, title: `patch ${i}` } })).json);
    seeded[name] = tasks;
  }
  for (const query of WORST_PATTERNS) {
    const res = await http(kept, 'POST', '/api/v1/tasks/query', { token, body: { query } });
    if (res.status !== 200) throw new Error(`kept search answered ${res.status}: ${JSON.stringify(res.json)}`);
  }
  const r = await measure({
    create: { url: plain, requests: createRequests(headers) },
    createKept: { url: kept, requests: createRequests(headers) },
    patch: { url: plain, requests: patchRequests(seeded.plain, headers) },
    patchKept: { url: kept, requests: patchRequests(seeded.kept, headers) },
  });
  const createRatio = pairedRatio(r.createKept, r.create);
  const patchRatio = pairedRatio(r.patchKept, r.patch);
  // server CPU per request, alternated (req/s at c=10 swings with the machine's other users; CPU less)
  const cpu = { create: [[], []], patch: [[], []] };
  for (let run = 0; run < 5; run++) {
    cpu.create[0].push(await cpuPerRequest(plainServer.pid, plain, createRequests(headers), 2000));
    cpu.create[1].push(await cpuPerRequest(keptServer.pid, kept, createRequests(headers), 2000));
    cpu.patch[0].push(await cpuPerRequest(plainServer.pid, plain, patchRequests(seeded.plain, headers), 2000));
    cpu.patch[1].push(await cpuPerRequest(keptServer.pid, kept, patchRequests(seeded.kept, headers), 2000));
  }
  const cpuRatio = (k) => median(cpu[k][0].map((plainUs, i) => plainUs / cpu[k][1][i]));
  const cpuText = (k) => `${Math.round(median(cpu[k][0]))} vs ${Math.round(median(cpu[k][1]))} µs per request, none ÷ kept ${cpuRatio(k).toFixed(3)}×`;
  return [
    'All-in-one server (embedded store), c=10. "kept": the text index keeps the match sets of 8 searches with patterns at the ' +
      'limits (997 characters, 8 wildcard runs; title and description), so each write is tested against all 8. ratio = req/s ÷ the row named.',
    '',
    TABLE_HEAD,
    row('POST /tasks', r.create, r.create),
    row('POST /tasks, 8 kept worst-case searches [POST]', r.createKept, r.create),
    row('PATCH /tasks/{id} title', r.patch, r.patch),
    row('PATCH /tasks/{id} title, 8 kept worst-case searches [PATCH]', r.patchKept, r.patch),
    '',
    target(createRatio.value >= 0.9, 'a create with 8 kept worst-case text searches runs at ≥ 0.9× the req/s of one with none', createRatio.text),
    target(patchRatio.value >= 0.9, 'a title PATCH with 8 kept worst-case text searches runs at ≥ 0.9× the req/s of one with none', patchRatio.text),
    `- server CPU (5 alternated runs of 2,000 requests, c=10): create ${cpuText('create')}; title PATCH ${cpuText('patch')}`,
  ];
}
