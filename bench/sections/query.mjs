// Section `query` : the global query gate over a 110,000-task store,
// for a user whose read scope is 11,000 tasks, beside a task detail read from the same server.
import { accessToken, measure, pairedRatio, row, target, TABLE_HEAD } from '../lib.mjs';
import { seedDir } from './seeded.mjs';

/** The queries measured (the first carries the targets). */
export const QUERIES = [
  ['status + tag, ORDER BY metadata.order', "status = 'doing' AND 'dev' IN tags ORDER BY metadata.order ASC"],
  ['text search title ~', 'title ~ "webhook"'],
  ['empty query (whole scope)', ''],
];

/**
 * The query section's load specs on a server at `base` seeded by `bench/seed.mjs query` (`seed`:
 * its READY info): `detail`, then one per {@link QUERIES} entry, named by it.
 */
export function querySpecs(seed, base) {
  const headers = { authorization: `Bearer ${accessToken(seed.userId)}` };
  const queryLoad = (query) => ({ url: `${base}/api/v1/tasks/query`, method: 'POST', headers, body: JSON.stringify({ query, pageSize: 20 }) });
  return {
    detail: { url: `${base}/api/v1/tasks/${seed.detailId}`, headers },
    ...Object.fromEntries(QUERIES.map(([name, query]) => [name, queryLoad(query)])),
  };
}

/**
 * POST /api/v1/tasks/query (pageSize 20, c=10) for each of {@link QUERIES}, and GET
 * /api/v1/tasks/{id} from the same server. Targets: first query p50 < 10 ms, p99 < 50 ms, and
 * ≥ 0.3× the req/s of GET detail.
 */
export async function querySection(scope) {
  const { seed, base } = await seedDir(scope, 'query');
  const measured = await measure(querySpecs(seed, base), { interleave: false });
  const detail = measured.detail;
  const results = QUERIES.map(([name]) => [name, measured[name]]);
  const [, first] = results[0];
  const ratio = pairedRatio(first, detail);
  const textRatio = pairedRatio(results[1][1], detail);
  return [
    `Store: ${seed.tasks.toLocaleString('en')} tasks seeded in ${(seed.seedMs / 1000).toFixed(1)} s, loaded by the server in ${(seed.loadMs / 1000).toFixed(1)} s; ` +
      `the caller's scope: ${seed.scope.toLocaleString('en')} live tasks (own 1,000 + a group's 10,000); first query matches ${seed.firstQueryMatches}. ` +
      'c=10, page size 20; ratio = req/s ÷ GET detail.',
    '',
    TABLE_HEAD,
    row('GET /tasks/{id}', detail, detail),
    ...results.map(([name, r]) => row(`query: ${name}`, r, detail)),
    '',
    `First query: \`${QUERIES[0][1]}\`; text search: \`${QUERIES[1][1]}\`.`,
    '',
    target(first.p50 < 10, 'first query p50 < 10 ms (c=10)', `${first.p50.toFixed(2)} ms`),
    target(first.p99 < 50, 'first query p99 < 50 ms (c=10)', `${first.p99.toFixed(2)} ms`),
    target(ratio.value >= 0.3, 'first query ≥ 0.3× the req/s of GET detail', ratio.text),
    target(textRatio.value >= 0.3, 'text search ≥ 0.3× the req/s of GET detail', textRatio.text),
  ];
}
