// `npm run bench` (after the build): runs every section, or one (`node bench/run.mjs <section>`),
// prints a markdown table per section and writes them to bench/results/latest.md. Ratios are
// within one run; targets print PASS/MISS and never fail the process. See docs/bench.md.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { Scope } from './lib.mjs';
import { agentsSection } from './sections/agents.mjs';
import { boardSection } from './sections/board.mjs';
import { customfieldsSection } from './sections/customfields.mjs';
import { distributedSection } from './sections/distributed.mjs';
import { durabilitySection } from './sections/durability.mjs';
import { eventsSection } from './sections/events.mjs';
import { fairnessSection } from './sections/fairness.mjs';
import { flowSection, flowWritesSection } from './sections/flow.mjs';
import { httpSection } from './sections/http.mjs';
import { importsSection } from './sections/imports.mjs';
import { leasesSection } from './sections/leases.mjs';
import { observabilitySection } from './sections/observability.mjs';
import { querySection } from './sections/query.mjs';
import { scaleSection } from './sections/scale.mjs';
import { soakSection } from './sections/soak.mjs';
import { sprintSection } from './sections/sprint.mjs';
import { textcacheSection } from './sections/textcache.mjs';
import { validateSection } from './sections/validate.mjs';
import { writesSection } from './sections/writes.mjs';

const SECTIONS = {
  http: ['http: all-in-one vs bare Fastify', httpSection],
  distributed: ['distributed: gateway + tasks processes over NATS vs the transport floor', distributedSection],
  query: ['query: the query gate over 110,000 tasks', querySection],
  board: ['board: column read, summary and move on a 10,000-card board', boardSection],
  flow: ['flow: cumulative flow over a year and cycle time of 5,000 finished cards vs a column read', flowSection],
  leases: ['leases: 20 claimers on one column vs 20 movers, no card claimed twice', leasesSection],
  sprint: ['sprint: close-sprint in-process', sprintSection],
  durability: ['durability: embedded journal synchronous=FULL (default) vs EMBEDDED_SYNC=normal', durabilitySection],
  scale: ['scale: the all-in-one server at 100,000 and 1,000,000 tasks (BENCH_SCALE_SIZES)', scaleSection],
  writes: ['writes: safe writes — If-Match, Idempotency-Key, batch, and the outbox against the build before', writesSection],
  events: ['events: commit-to-SSE latency with 100 streams; feed page vs task detail', eventsSection],
  textcache: ['textcache: writes while 8 worst-case text searches are kept', textcacheSection],
  validate: ['validate: check-as-you-type query validation in-process, 500-character queries', validateSection],
  observability: ['observability: GET detail and move with metrics off, on, and on with every request traced', observabilitySection],
  agents: ['agents: the MCP tool find_tasks ÷ the same query over REST, with an access token', agentsSection],
  fairness: ['fairness: one user\'s costly requests beside another user\'s sequential reads', fairnessSection],
  customfields: ['customfields: a query on a defined select field ÷ the same on a built-in field, 110,000 tasks', customfieldsSection],
  soak: ['soak: 400,000 PATCHes of 200 tasks on the embedded default — memory, req/s per round, restart', soakSection],
  flowwrites: ['flowwrites: a PATCH on a task held by 20 boards ÷ one held by none (flow history from every write)', flowWritesSection],
  imports: ['imports: a 10,000-card import beside another user\'s reads; a streamed 50,000-card export', importsSection],
};
/** Sections run only when named (they take long): `node bench/run.mjs scale`. */
const OPT_IN = new Set(['scale', 'soak']);

const wanted = process.argv.slice(2);
const unknown = wanted.filter((s) => !SECTIONS[s]);
if (unknown.length) {
  console.error(`unknown section(s): ${unknown.join(', ')}; choose from ${Object.keys(SECTIONS).join(', ')}`);
  process.exit(2);
}
process.chdir(new URL('..', import.meta.url).pathname);

const started = Date.now();
const out = [
  '# Benchmark results',
  '',
  `${new Date().toISOString()} · Node ${process.version} · ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'} · loopback`,
];
let failed = false;
for (const name of wanted.length ? wanted : Object.keys(SECTIONS).filter((n) => !OPT_IN.has(n))) {
  const [title, section] = SECTIONS[name];
  const scope = new Scope();
  const t0 = Date.now();
  let lines;
  try {
    lines = await section(scope);
  } catch (e) {
    failed = true;
    lines = [`**section failed**: ${e.stack ?? e}`];
  } finally {
    await scope.close();
  }
  const text = ['', `## ${title}`, '', ...lines, '', `_${name}: ${((Date.now() - t0) / 1000).toFixed(0)} s_`].join('\n');
  console.log(text);
  out.push(text);
}
out.push('', `_total: ${((Date.now() - started) / 1000).toFixed(0)} s_`, '');
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/latest.md', out.join('\n'));
console.log(`\n(total ${((Date.now() - started) / 1000).toFixed(0)} s; written to bench/results/latest.md)`);
process.exit(failed ? 1 : 0);
