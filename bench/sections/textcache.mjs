// Section `textcache`: the write path while the text index keeps the match sets of 8 searches with
// the costliest patterns the query language accepts (1,000 characters, 32 wildcard runs each;
// docs/query-language.md "Safety"), against the same server keeping none. Every create and title
// change is tested against each kept search (docs/store.md "Text search").
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { accessToken, http, JWT_SECRET, measure, pairedRatio, row, target, TABLE_HEAD } from '../lib.mjs';
import { CREATE_BODY } from './http.mjs';

/** Tasks PATCHed in rotation per server. */
const ROTATION = 200;

/**
 * The 8 kept searches: LIKE / ILIKE patterns at the limits (1,000 characters, 32 wildcard runs,
 * `_` runs inside each piece), on the title and the description, each with a literal of 3+
 * characters so the text index answers and keeps it.
 */
export const WORST_PATTERNS = Array.from({ length: 8 }, (_, i) => {
  const field = i % 2 === 0 ? 'title' : 'description';
  // 62 characters and 2 wildcard runs per piece (the trailing _ run joins the next %): 15 pieces and the closing % are 931 characters, 31 runs
  const piece = `%W${i}rite${'_'.repeat(20)}the${'_'.repeat(32)}`;
  return `${field} ${i < 4 ? 'LIKE' : 'ILIKE'} '${piece.repeat(15)}%'`;
});

async function server(scope) {
  const dir = scope.tempDir('bench-textcache-');
  const p = await scope.process(join('', 'bench/servers/all-in-one.mjs'), { env: { DATA_DIR: dir, JWT_SECRET } });
  return `http://127.0.0.1:${p.info.port}`;
}

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
  const token = accessToken(randomUUID());
  const headers = { authorization: `Bearer ${token}` };
  const plain = await server(scope);
  const kept = await server(scope);
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
  return [
    'All-in-one server (embedded store), c=10. "kept": the text index keeps the match sets of 8 searches with patterns at the ' +
      'limits (1,000 characters, 32 wildcard runs; title and description), so each write is tested against all 8. ratio = req/s ÷ the row named.',
    '',
    TABLE_HEAD,
    row('POST /tasks', r.create, r.create),
    row('POST /tasks, 8 kept worst-case searches [POST]', r.createKept, r.create),
    row('PATCH /tasks/{id} title', r.patch, r.patch),
    row('PATCH /tasks/{id} title, 8 kept worst-case searches [PATCH]', r.patchKept, r.patch),
    '',
    target(createRatio.value >= 0.9, 'a create with 8 kept worst-case text searches runs at ≥ 0.9× the req/s of one with none', createRatio.text),
    target(patchRatio.value >= 0.9, 'a title PATCH with 8 kept worst-case text searches runs at ≥ 0.9× the req/s of one with none', patchRatio.text),
  ];
}
