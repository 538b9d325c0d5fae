// Section `customfields`: a query on a defined select field (`cf.stage`) ÷ the same query on the
// built-in field it mirrors (`status`), over the query section's 110,000 tasks (docs/custom-fields.md "Indexes").
import { accessToken, measure, pairedRatio, row, target, TABLE_HEAD } from '../lib.mjs';
import { seedDir } from './seeded.mjs';

const BUILTIN = "status = 'doing' AND 'dev' IN tags ORDER BY metadata.order ASC";
const CUSTOM = "cf.stage = 's-doing' AND 'dev' IN tags ORDER BY metadata.order ASC";

/**
 * Seeds the query data with a `cf.stage` value on every task, defines `cf.stage` as a select field
 * for the caller through HTTP (which builds its index, as a user defining it would), then loads
 * both queries (c=10, page size 20) on the one server. Target: custom ≥ 0.8× the built-in's req/s.
 */
export async function customfieldsSection(scope) {
  const { seed, base } = await seedDir(scope, 'customfields');
  const headers = { authorization: `Bearer ${accessToken(seed.userId)}`, 'content-type': 'application/json' };
  const t0 = Date.now();
  const defined = await fetch(`${base}/api/v1/custom-fields`, {
    method: 'POST', headers,
    body: JSON.stringify({
      key: 'cf.stage', name: 'Stage', type: 'select',
      options: [{ id: 's-todo', label: 'To do' }, { id: 's-doing', label: 'Doing' }, { id: 's-review', label: 'Review' }, { id: 's-done', label: 'Done' }],
    }),
  });
  if (defined.status !== 201) throw new Error(`define cf.stage: ${defined.status} ${await defined.text()}`);
  const defineMs = Date.now() - t0;
  const load = (query) => ({ url: `${base}/api/v1/tasks/query`, method: 'POST', headers, body: JSON.stringify({ query, pageSize: 20 }) });
  const check = await (await fetch(`${base}/api/v1/tasks/query`, { method: 'POST', headers, body: JSON.stringify({ query: CUSTOM, pageSize: 1 }) })).json();
  if (check.total !== seed.stageQueryMatches) throw new Error(`custom query matched ${check.total}, expected ${seed.stageQueryMatches}`);
  const measured = await measure({ builtin: load(BUILTIN), custom: load(CUSTOM) }, { interleave: true, reps: 3, duration: 3 });
  const ratio = pairedRatio(measured.custom, measured.builtin);
  return [
    `Store: ${seed.tasks.toLocaleString('en')} tasks, the caller's scope ${seed.scope.toLocaleString('en')}; the built-in query matches ${seed.firstQueryMatches}, ` +
      `the custom one ${seed.stageQueryMatches}. Defining the field (its index built) took ${defineMs} ms. c=10, page size 20; ratio = req/s ÷ the built-in query.`,
    '',
    TABLE_HEAD,
    row('query on status (built-in)', measured.builtin, measured.builtin),
    row('query on cf.stage (select)', measured.custom, measured.builtin),
    '',
    `Built-in: \`${BUILTIN}\`; custom: \`${CUSTOM}\`.`,
    '',
    target(ratio.value >= 0.8, 'defined select field ≥ 0.8× the built-in field', ratio.text),
  ];
}
