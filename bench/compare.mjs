// `npm run bench:compare [REF] [options]`: this checkout's build beside the build of REF, side by side.
// REF (default: the last commit of main that is not part of the current change) is checked out in a
// temporary git worktree, given a copy of this checkout's node_modules and built there; then the
// http, board, sprint, writes and query sections load both builds' servers with the same fixtures,
// the two builds' runs taken in turn, and every row prints this ÷ REF in req/s and in the server's
// CPU per request (REF's ÷ this one's: paired, median and spread), marking a row below 0.9× on
// either as a regression. Written to bench/results/compare.md. See docs/bench.md.
//
// Options: --quick (2 runs of 2 s per row instead of 3 of 4 s), --reps N, --duration S,
// --sections http,board,… (a subset), --keep (keep REF's worktree and build in the temp dir and
// reuse it on the next run with the same REF), --no-confirm (a row below 0.9× is marked at once;
// by default it is measured again, 3 more runs per build, and stays marked only when that
// measurement is below 0.9× too).
// Exit code: 0, or 1 when a row is marked as a regression, 2 when a section or the build failed.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { accessToken, BENCH_USER_ID, DURATION_S, measureVariants, pairedRatio, REPS, Scope } from './lib.mjs';
import { boardSpecs } from './sections/board.mjs';
import { CREATE_BODY, httpServer } from './sections/http.mjs';
import { querySpecs } from './sections/query.mjs';
import { seedDir } from './sections/seeded.mjs';
import { reportsServer } from './sections/sprint.mjs';
import { createLoads, writeLoads, writesSeed, writesServer } from './sections/writes.mjs';

/** A paired ratio (this ÷ REF) below this marks its row as a regression. */
const REGRESSION_BELOW = 0.9;
/** Runs per build when a row below {@link REGRESSION_BELOW} is measured again (`--no-confirm`: never). */
const CONFIRM_REPS = 3;

const ROOT = new URL('..', import.meta.url).pathname;
process.chdir(ROOT);

/** The command line; `argsFault` the reason it was refused (told with the usage once the sections are known). */
const { opts, positionals, argsFault } = (() => {
  try {
    const { values, positionals } = parseArgs({
      allowNegative: true,
      allowPositionals: true,
      options: {
        quick: { type: 'boolean', default: false },
        reps: { type: 'string' },
        duration: { type: 'string' },
        sections: { type: 'string' },
        keep: { type: 'boolean', default: false },
        confirm: { type: 'boolean', default: true },
      },
    });
    return { opts: values, positionals, argsFault: undefined };
  } catch (e) {
    return { opts: {}, positionals: [], argsFault: String(e.message ?? e).split('.')[0] };
  }
})();
const reps = Number(opts.reps ?? (opts.quick ? 2 : REPS));
const duration = Number(opts.duration ?? (opts.quick ? 2 : DURATION_S));

const git = (...args) => execFileSync('git', args, { encoding: 'utf8' }).trim();

/**
 * The commit compared against when none is named: where this branch left main (the merge base); on
 * main's own commit, that commit when the change is not committed yet, else its first parent.
 */
function defaultRef() {
  const head = git('rev-parse', 'HEAD');
  const base = git('merge-base', 'HEAD', 'main');
  if (base !== head) return base;
  const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
  return dirty ? head : git('rev-parse', 'HEAD^');
}

function usage(message) {
  console.error(`${message}\nusage: npm run bench:compare -- [REF] [--quick] [--reps N] [--duration S] [--sections ${Object.keys(SECTIONS).join(',')}] [--keep] [--no-confirm]`);
  process.exit(2);
}

/**
 * REF's checkout with its build, in `<tmp>/bench-compare-<commit>`: a detached git worktree, the
 * node_modules of this checkout copied in (`cp -a`, so the workspace links stay relative and point
 * at REF's own packages), then `npm run build` there. With --keep a finished one is reused and
 * left in place; otherwise it is removed when the process exits.
 */
function refCheckout(sha) {
  const dir = join(tmpdir(), `bench-compare-${sha.slice(0, 12)}`);
  const built = join(dir, '.bench-compare-built');
  if (!opts.keep) process.once('exit', () => removeWorktree(dir));
  if (opts.keep && existsSync(built)) {
    console.log(`REF build reused: ${dir}`);
    return dir;
  }
  removeWorktree(dir);
  git('worktree', 'add', '--detach', dir, sha);
  const workspaces = JSON.parse(readFileSync('package.json', 'utf8')).workspaces.flatMap((w) =>
    w.endsWith('/*') ? git('ls-tree', '-d', '--name-only', `${sha}:${w.slice(0, -2)}`).split('\n').filter(Boolean).map((d) => `${w.slice(0, -2)}/${d}`) : [w],
  );
  for (const ws of ['.', ...workspaces]) {
    if (existsSync(join(ws, 'node_modules')) && existsSync(join(dir, ws))) execFileSync('cp', ['-a', join(ws, 'node_modules'), join(dir, ws)]);
  }
  console.log(`building REF ${sha.slice(0, 12)} in ${dir} …`);
  const build = spawnSync('npm', ['run', 'build'], { cwd: dir, encoding: 'utf8', timeout: 15 * 60_000 });
  if (build.status !== 0) {
    console.error(`npm run build of REF failed (${build.status ?? build.signal}):\n${(build.stdout + build.stderr).slice(-4000)}`);
    process.exit(2);
  }
  writeFileSync(built, `${sha}\n`);
  return dir;
}

function removeWorktree(dir) {
  if (!existsSync(dir)) return;
  spawnSync('git', ['worktree', 'remove', '--force', dir], { stdio: 'ignore' });
  rmSync(dir, { recursive: true, force: true });
  spawnSync('git', ['worktree', 'prune'], { stdio: 'ignore' });
}

const auth = (token) => ({ authorization: `Bearer ${token}` });
/** {name: {this: spec, ref: spec}} from two {name: spec} objects with the same names. */
const pair = (ours, theirs) => Object.fromEntries(Object.keys(ours).map((k) => [k, { this: ours[k], ref: theirs[k] }]));
const within = (label, m, top, bottom, key) => ({ label, this: pairedRatio(m[top].this, m[bottom].this, key), ref: pairedRatio(m[top].ref, m[bottom].ref, key) });

/**
 * Each section: (scope, refRoot, run) → {rows: [[label, {this, ref}]], ratios: [{label, this, ref}]}:
 * rows compared across builds by req/s; ratios are each build's own targets (paired within it).
 */
const SECTIONS = {
  async http(scope, refRoot, run) {
    const t = await httpServer(scope);
    const r = await httpServer(scope, refRoot);
    const bare = await scope.process('bench/servers/bare.mjs', { env: { BODY: t.detail.text, CREATED: t.created.text } });
    const bareUrl = `http://127.0.0.1:${bare.info.port}${t.path}`;
    const post = (s) => ({ url: `${s.base}/api/v1/tasks`, method: 'POST', body: JSON.stringify(CREATE_BODY), headers: auth(s.token) });
    const m = await run({
      get10: { bare: { url: bareUrl }, this: { url: t.base + t.path, headers: auth(t.token) }, ref: { url: r.base + r.path, headers: auth(r.token) } },
      get50: { this: { url: t.base + t.path, headers: auth(t.token), connections: 50 }, ref: { url: r.base + r.path, headers: auth(r.token), connections: 50 } },
      post: { this: post(t), ref: post(r) },
    }, { interleave: true });
    return {
      rows: [['GET /tasks/{id} c=10', m.get10], ['GET /tasks/{id} c=50', m.get50], ['POST /tasks c=10', m.post]],
      ratios: [{ label: 'all-in-one GET detail ÷ bare Fastify, c=10 (target ≥ 0.5×)', this: pairedRatio(m.get10.this, m.get10.bare), ref: pairedRatio(m.get10.ref, m.get10.bare) }],
    };
  },

  async board(scope, refRoot, run) {
    const t = await seedDir(scope, 'board');
    const r = await seedDir(scope, 'board', refRoot);
    const m = await run(pair(boardSpecs(t.seed, t.base), boardSpecs(r.seed, r.base)), { interleave: false });
    return {
      rows: [['GET /tasks/{id}', m.detail], ['column read (2,000 cards, page 20)', m.column], ['board summary', m.summary], ['board read GET …/tasks', m.boardTasks], ['card move Doing ⇄ Review', m.move]],
      ratios: [within('move ÷ GET detail, cost (detail req/s ÷ move req/s; target ≤ 3.5×)', m, 'detail', 'move'), within('summary ÷ column read, cost (target ≤ 3×)', m, 'column', 'summary')],
    };
  },

  async sprint(scope, refRoot, run) {
    const t = await reportsServer(scope);
    const r = await reportsServer(scope, refRoot);
    const m = await run(pair(t.specs, r.specs), { interleave: false });
    return {
      rows: [['GET /tasks/{id}', m.detail], ['sprint report (closed, 200 members)', m.report], ['velocity ?last=50', m.velocity], ['sprint list (51 sprints)', m.list]],
      ratios: [
        within('sprint report p50 ÷ GET detail p50 (target ≤ 2×)', m, 'report', 'detail', 'p50Runs'),
        within('sprint report cost in req/s (detail ÷ report)', m, 'detail', 'report'),
        within('velocity p50 ÷ GET detail p50 (target ≤ 3×)', m, 'velocity', 'detail', 'p50Runs'),
      ],
    };
  },

  async writes(scope, refRoot, run) {
    const [t, r] = [await writesServer(scope, ''), await writesServer(scope, refRoot)];
    const token = accessToken(BENCH_USER_ID);
    const headers = auth(token);
    const [ts, rs] = [await writesSeed(t, token), await writesSeed(r, token)];
    const w = await run(pair(writeLoads(t, ts, headers), writeLoads(r, rs, headers)), { interleave: true });
    const c = await run(pair(createLoads(t, headers), createLoads(r, headers)), { interleave: true });
    const tasksPerS = (x) => ({ ...x, rpsRuns: x.rpsRuns.map((v) => v * 100) });
    const batchGain = (v) => pairedRatio(tasksPerS(c.batch[v]), c.create[v]);
    return {
      rows: [
        ['PATCH /tasks/{id}', w.patch], ['PATCH with If-Match', w.patchIfMatch], ['card move', w.move], ['POST /tasks', c.create],
        ['POST /tasks, nonce header', c.createNonce], ['POST /tasks with Idempotency-Key', c.createKey], ['POST /tasks/batch (100 tasks)', c.batch],
      ],
      ratios: [
        within('keyed create ÷ nonce create, cost (target ≤ 1.3×)', c, 'createNonce', 'createKey'),
        within('PATCH with If-Match ÷ PATCH, cost (target ≤ 1.15×)', w, 'patch', 'patchIfMatch'),
        { label: 'batch tasks/s ÷ single creates (target ≥ 5×)', this: batchGain('this'), ref: batchGain('ref') },
      ],
    };
  },

  async query(scope, refRoot, run) {
    const t = await seedDir(scope, 'query');
    const r = await seedDir(scope, 'query', refRoot);
    const m = await run(pair(querySpecs(t.seed, t.base), querySpecs(r.seed, r.base)), { interleave: false });
    const names = Object.keys(m).filter((k) => k !== 'detail');
    return {
      rows: [['GET /tasks/{id}', m.detail], ...names.map((k) => [`query: ${k}`, m[k]])],
      ratios: [within(`first query ÷ GET detail (target ≥ 0.3×)`, m, names[0], 'detail')],
    };
  },
};

if (argsFault) usage(argsFault);
const wanted = opts.sections ? opts.sections.split(',') : Object.keys(SECTIONS);
const unknown = wanted.filter((s) => !SECTIONS[s]);
if (unknown.length) usage(`unknown section(s): ${unknown.join(', ')}`);
if (positionals.length > 1) usage('one REF at most');
if (!(Number.isInteger(reps) && reps >= 1 && duration > 0)) usage('--reps takes a whole number ≥ 1, --duration seconds > 0');

let refSha;
try {
  refSha = git('rev-parse', '--verify', `${positionals[0] ?? defaultRef()}^{commit}`);
} catch {
  usage(`not a commit: ${positionals[0]}`);
}
const headSha = git('rev-parse', 'HEAD');
const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
const subject = (sha) => git('log', '-1', '--format=%s', sha).slice(0, 80);
const started = Date.now();
const refRoot = refCheckout(refSha);

const out = [
  '# bench:compare — this build ÷ REF',
  '',
  `${new Date().toISOString()} · Node ${process.version} · ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'} · load average at start ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
  '',
  `- this: ${headSha.slice(0, 12)} ${subject(headSha)}${dirty ? ' (+ uncommitted changes)' : ''}`,
  `- REF: ${refSha.slice(0, 12)} ${subject(refSha)}`,
  `- ${reps} run(s) of ${duration} s per row and build (1 s warm-up each), the builds' runs in turn; c=10 unless named`,
  '',
];
const rowsOut = [
  '| section | row | this req/s | REF req/s | this ÷ REF (runs) | CPU µs/req this · REF | REF ÷ this CPU (runs) | |',
  '| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |',
];
const ratiosOut = ['| section | measure | this | REF |', '| --- | --- | ---: | ---: |'];
let regressions = 0;
let failed = false;
/** The specs each measured row came from ({this, ref, …} load specs by the row's result), to measure a marked row again. */
const measuredFrom = new Map();
const run = async (specs, { interleave }) => {
  const m = await measureVariants(specs, { reps, duration, interleave });
  for (const k of Object.keys(specs)) measuredFrom.set(m[k], specs[k]);
  return m;
};

/**
 * The measures (`req/s`, `CPU`) on which row `m` (this and REF's results) is below
 * {@link REGRESSION_BELOW}, with both paired ratios (`cpu` undefined when a server's CPU was not read).
 */
function judge(m) {
  const ratio = pairedRatio(m.this, m.ref);
  // server CPU per request, REF's ÷ this one's: above 1 this build does less work per request
  const cpu = m.this.cpuRuns && m.ref.cpuRuns ? pairedRatio(m.ref, m.this, 'cpuRuns') : undefined;
  const below = [ratio.value < REGRESSION_BELOW && 'req/s', cpu && cpu.value < REGRESSION_BELOW && 'CPU'].filter(Boolean);
  return { ratio, cpu, below };
}

/**
 * Measures a marked row again while its servers still run: {@link CONFIRM_REPS} more runs of
 * each build, in turn. A row stays a regression only when the second measurement is below
 * {@link REGRESSION_BELOW} on a measure the first one was (one run landing on a busy moment of a
 * shared VM is not a regression). Returns the second judgement.
 */
async function confirm(m, first) {
  const spec = measuredFrom.get(m);
  const again = await measureVariants({ row: { this: spec.this, ref: spec.ref } }, { reps: CONFIRM_REPS, duration, interleave: true });
  const second = judge(again.row);
  return { ...second, below: second.below.filter((x) => first.below.includes(x)) };
}
for (const name of wanted) {
  const scope = new Scope();
  const t0 = Date.now();
  try {
    const { rows, ratios } = await SECTIONS[name](scope, refRoot, run);
    for (const [label, m] of rows) {
      const first = judge(m);
      const { ratio, cpu } = first;
      const failures = (r) => r.errors + r.non2xx;
      // a request REF does not answer (a route it does not have) is no figure to compare with
      const comparable = failures(m.ref) * 2 < m.ref.n;
      const second = comparable && first.below.length > 0 && opts.confirm ? await confirm(m, first) : undefined;
      const below = second ? second.below : first.below;
      const regression = comparable && below.length > 0;
      if (regression) regressions++;
      const rerun = second && `measured again: ${second.ratio.text} req/s${second.cpu ? `, ${second.cpu.text} CPU` : ''}`;
      const mark = regression ? `**REGRESSION** (${below.join(', ')})`
        : !comparable ? 'not comparable: REF fails it'
        : second ? `not confirmed (${first.below.join(', ')} below ${REGRESSION_BELOW}× once)`
        : '';
      const notes = [
        mark,
        rerun,
        ...[['this', m.this], ['REF', m.ref]].filter(([, r]) => failures(r) > 0).map(([who, r]) => `${who}: ${failures(r)} errors`),
      ].filter(Boolean);
      const cpuCells = cpu ? `${m.this.cpuUs.toFixed(0)} · ${m.ref.cpuUs.toFixed(0)} | ${cpu.text}` : ' | ';
      rowsOut.push(`| ${name} | ${label} | ${Math.round(m.this.rps)} | ${Math.round(m.ref.rps)} | ${ratio.text} | ${cpuCells} | ${notes.join('; ')} |`);
    }
    for (const r of ratios) ratiosOut.push(`| ${name} | ${r.label} | ${r.this.text} | ${r.ref.text} |`);
  } catch (e) {
    failed = true;
    rowsOut.push(`| ${name} | **section failed**: ${String(e.message ?? e).split('\n')[0]} | | | | | | |`);
    console.error(e);
  } finally {
    await scope.close();
  }
  console.log(`${name}: ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}
out.push(...rowsOut, '', 'Ratios within each build (paired runs of one build):', '', ...ratiosOut, '');
out.push(`${regressions ? `**${regressions} row(s) below ${REGRESSION_BELOW}× REF**` : `no row below ${REGRESSION_BELOW}× REF`} · total ${((Date.now() - started) / 1000).toFixed(0)} s`, '');
const text = out.join('\n');
console.log(`\n${text}`);
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/compare.md', text);
process.exit(failed ? 2 : regressions ? 1 : 0);
