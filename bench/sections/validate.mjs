// Section `validate`: the check-as-you-type validation (`POST /api/v1/tasks/query/validate`) in-process:
// `validateQuery` on 500-character queries, each call a text not seen before (so the parse cache never
// answers), valid ones and ones with a fault near the end, and the same through the query service on a
// MemoryBus (the op the route forwards to, without board_id: no store read).
import { MemoryBus } from '@app/shared/bus';
import { QueryOps } from '@app/shared/contracts';
import { fixedClock } from '@app/shared/domain';
import { silentLogger } from '@app/shared/log';
import { validateQuery } from '@app/shared/query';
import { EmbeddedStore } from '@app/shared/store';
import { queryService } from '@app/query';
import { pct, target } from '../lib.mjs';

const CALLS = 20_000;
const LENGTH = 500;

/** A query of exactly LENGTH characters, made unique by `i`; `fault` puts an unknown function near the end. */
export function queryText(i, fault = false) {
  const head = `(status = 'doing' OR status = 'review') AND assignee = me() AND app.sprint IN openSprints() AND deadline <= endOfWeek(+1w)`;
  const tail = fault ? ` AND app.sprint = currentSprint()` : ` AND created_at >= startOfMonth(-1m)`;
  let body = `${head} AND cf.n${i} = ${i}`;
  while (body.length + tail.length < LENGTH - 40) body += ` AND ('x${i}' IN tags OR title ~ 'w${body.length}')`;
  const text = `${body}${tail} AND title ~ '`;
  return `${text}${'z'.repeat(Math.max(0, LENGTH - text.length - 1))}'`;
}

/**
 * Wall-clock and CPU milliseconds of `n` calls of `fn`. On a shared machine the wall p99 counts the
 * time the process was not scheduled; the CPU time (`process.cpuUsage`, µs resolution) is what the
 * call itself costs.
 */
function timeSync(fn, n) {
  const wall = new Float64Array(n);
  const cpu = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const c = process.cpuUsage();
    const t = performance.now();
    fn(i);
    wall[i] = performance.now() - t;
    const d = process.cpuUsage(c);
    cpu[i] = (d.user + d.system) / 1000;
  }
  return { wall: [...wall], cpu: [...cpu] };
}

export async function validateSection() {
  const lines = ['| case | calls | p50 ms | p99 ms | CPU p50 ms | CPU p99 ms |', '|---|---|---|---|---|---|'];
  for (let i = 0; i < 2_000; i++) validateQuery(queryText(-i), { board: false }); // warm-up
  const valid = timeSync((i) => validateQuery(queryText(i), { board: false }), CALLS);
  const faulty = timeSync((i) => validateQuery(queryText(CALLS + i, true), { board: false }), CALLS);
  const check = validateQuery(queryText(1, true), { board: false });
  if (queryText(1).length !== LENGTH || check.valid || check.errors[0].code !== 'QUERY_UNKNOWN_FUNCTION') throw new Error('bench queries are not what they claim');
  const cells = (r) => [r.wall, r.wall, r.cpu, r.cpu].map((v, k) => pct(v, k % 2 ? 99 : 50).toFixed(3)).join(' | ');
  lines.push(`| validateQuery, valid, ${LENGTH} chars | ${CALLS} | ${cells(valid)} |`);
  lines.push(`| validateQuery, unknown function near the end | ${CALLS} | ${cells(faulty)} |`);

  const store = EmbeddedStore.memory();
  const bus = new MemoryBus();
  const log = silentLogger();
  await bus.serve(queryService.bindings({ store, clock: fixedClock(new Date().toISOString()), log }), { queue: queryService.name, log });
  const viaBus = [];
  for (let i = 0; i < 5_000; i++) {
    const t = performance.now();
    await bus.request(QueryOps.validate, { query: queryText(2 * CALLS + i) }, { userId: 'bench-user' });
    if (i >= 500) viaBus.push(performance.now() - t);
  }
  await bus.close();
  await store.close();
  lines.push(`| query.validate op on a MemoryBus | ${viaBus.length} | ${pct(viaBus, 50).toFixed(3)} | ${pct(viaBus, 99).toFixed(3)} | | |`);
  const wallP99 = Math.max(pct(valid.wall, 99), pct(faulty.wall, 99));
  const cpuP99 = Math.max(pct(valid.cpu, 99), pct(faulty.cpu, 99));
  lines.push('', target(cpuP99 < 2, `validation p99 < 2 ms for a ${LENGTH}-character query (validateQuery, uncached text, CPU time)`, `${cpuP99.toFixed(3)} ms (wall p99 ${wallP99.toFixed(3)} ms)`));
  return lines;
}
