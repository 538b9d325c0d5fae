// `npm run bench:compare [REF] [options]`: this checkout's build beside the build of REF and the
// fixed anchor build (the commit in bench/anchor, docs/bench.md "The anchor"), side by side. REF
// (default: the last commit of main that is not part of the current change) and the anchor are each
// checked out in a temporary git worktree, given a copy of this checkout's node_modules and built
// there; then the http, board, sprint, writes and query sections load the builds' servers with the
// same fixtures, the builds' runs taken in turn, and every row prints this ÷ REF and this ÷ ANCHOR in
// req/s and in the server's CPU per request (the other build's ÷ this one's: paired, median and
// spread), marking a row below 0.9× on either, against either build, as a regression. Written to
// bench/results/compare.md. See docs/bench.md.
//
// Options: --quick (2 runs of 2 s per row instead of 3 of 4 s), --reps N, --duration S,
// --sections http,board,… (a subset), --keep (keep the other builds' worktrees in the temp dir and
// reuse them on the next run with the same commits), --no-confirm (a row below 0.9× is marked at once;
// by default it is measured again, 3 more runs per build, and stays marked only when that
// measurement is below 0.9× too), --anchor COMMIT (another anchor for this run; `none`: no anchor).
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
        anchor: { type: 'string' },
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
  console.error(`${message}\nusage: npm run bench:compare -- [REF] [--quick] [--reps N] [--duration S] [--sections ${Object.keys(SECTIONS).join(',')}] [--keep] [--no-confirm] [--anchor COMMIT|none]`);
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
/** {name: {build: spec}} from {build: {name: spec}} (every build's specs have the same names). */
const byName = (perBuild) => {
  const builds = Object.keys(perBuild);
  return Object.fromEntries(Object.keys(perBuild[builds[0]]).map((k) => [k, Object.fromEntries(builds.map((b) => [b, perBuild[b][k]]))]));
};
/** `fn(root, build)` for each build compared (this = '', REF, the anchor when it is another commit), in turn. */
async function perBuild(roots, fn) {
  const out = {};
  for (const [build, root] of Object.entries(roots)) out[build] = await fn(root, build);
  return out;
}
/** A ratio within each build: `m[top][build] ÷ m[bottom][build]` paired, per build. */
const within = (label, m, top, bottom, key) => ({ label, ...Object.fromEntries(Object.keys(m[top]).filter((b) => b !== 'bare').map((b) => [b, pairedRatio(m[top][b], m[bottom][b], key)])) });

/**
 * Each section: (scope, roots, run) → {rows: [[label, {this, ref, anchor?}]], ratios: [{label, this, ref, anchor?}]}:
 * `roots` = {this: '', ref: REF's checkout, anchor?: the anchor's}; rows are compared across builds
 * by req/s and server CPU per request; ratios are each build's own targets (paired within it).
 */
const SECTIONS = {
  async http(scope, roots, run) {
    const s = await perBuild(roots, (root) => httpServer(scope, root));
    const t = s.this;
    const bare = await scope.process('bench/servers/bare.mjs', { env: { BODY: t.detail.text, CREATED: t.created.text } });
    const bareUrl = `http://127.0.0.1:${bare.info.port}${t.path}`;
    const post = (x) => ({ url: `${x.base}/api/v1/tasks`, method: 'POST', body: JSON.stringify(CREATE_BODY), headers: auth(x.token) });
    const get = (x, c) => ({ url: x.base + x.path, headers: auth(x.token), ...(c ? { connections: c } : {}) });
    const builds = Object.keys(roots);
    const each = (fn) => Object.fromEntries(builds.map((b) => [b, fn(s[b])]));
    const m = await run({ get10: { bare: { url: bareUrl }, ...each((x) => get(x)) }, get50: each((x) => get(x, 50)), post: each(post) }, { interleave: true });
    const bareRatio = Object.fromEntries(builds.map((b) => [b, pairedRatio(m.get10[b], m.get10.bare)]));
    return {
      rows: [['GET /tasks/{id} c=10', m.get10], ['GET /tasks/{id} c=50', m.get50], ['POST /tasks c=10', m.post]],
      ratios: [{ label: 'all-in-one GET detail ÷ bare Fastify, c=10 (target ≥ 0.5×)', ...bareRatio }],
    };
  },

  async board(scope, roots, run) {
    const s = await perBuild(roots, (root) => seedDir(scope, 'board', root));
    const m = await run(byName(Object.fromEntries(Object.entries(s).map(([b, x]) => [b, boardSpecs(x.seed, x.base)]))), { interleave: false });
    return {
      rows: [['GET /tasks/{id}', m.detail], ['column read (2,000 cards, page 20)', m.column], ['board summary', m.summary], ['board read GET …/tasks', m.boardTasks], ['card move Doing ⇄ Review', m.move]],
      ratios: [within('move ÷ GET detail, cost (detail req/s ÷ move req/s; target ≤ 3.5×)', m, 'detail', 'move'), within('summary ÷ column read, cost (target ≤ 3×)', m, 'column', 'summary')],
    };
  },

  async sprint(scope, roots, run) {
    const s = await perBuild(roots, (root) => reportsServer(scope, root));
    const m = await run(byName(Object.fromEntries(Object.entries(s).map(([b, x]) => [b, x.specs]))), { interleave: false });
    return {
      rows: [['GET /tasks/{id}', m.detail], ['sprint report (closed, 200 members)', m.report], ['velocity ?last=50', m.velocity], ['sprint list (51 sprints)', m.list]],
      ratios: [
        within('sprint report p50 ÷ GET detail p50 (target ≤ 2×)', m, 'report', 'detail', 'p50Runs'),
        within('sprint report cost in req/s (detail ÷ report)', m, 'detail', 'report'),
        within('velocity p50 ÷ GET detail p50 (target ≤ 3×)', m, 'velocity', 'detail', 'p50Runs'),
      ],
    };
  },

  async writes(scope, roots, run) {
    const bases = await perBuild(roots, (root) => writesServer(scope, root));
    const token = accessToken(BENCH_USER_ID);
    const headers = auth(token);
    const seeds = await perBuild(roots, (_root, b) => writesSeed(bases[b], token));
    const loads = (fn) => byName(Object.fromEntries(Object.keys(roots).map((b) => [b, fn(b)])));
    const w = await run(loads((b) => writeLoads(bases[b], seeds[b], headers)), { interleave: true });
    const c = await run(loads((b) => createLoads(bases[b], headers)), { interleave: true });
    const tasksPerS = (x) => ({ ...x, rpsRuns: x.rpsRuns.map((v) => v * 100) });
    const batchGain = Object.fromEntries(Object.keys(roots).map((b) => [b, pairedRatio(tasksPerS(c.batch[b]), c.create[b])]));
    return {
      rows: [
        ['PATCH /tasks/{id}', w.patch], ['PATCH with If-Match', w.patchIfMatch], ['card move', w.move], ['POST /tasks', c.create],
        ['POST /tasks, nonce header', c.createNonce], ['POST /tasks with Idempotency-Key', c.createKey], ['POST /tasks/batch (100 tasks)', c.batch],
      ],
      ratios: [
        within('keyed create ÷ nonce create, cost (target ≤ 1.3×)', c, 'createNonce', 'createKey'),
        within('PATCH with If-Match ÷ PATCH, cost (target ≤ 1.15×)', w, 'patch', 'patchIfMatch'),
        { label: 'batch tasks/s ÷ single creates (target ≥ 5×)', ...batchGain },
      ],
    };
  },

  async query(scope, roots, run) {
    const s = await perBuild(roots, (root) => seedDir(scope, 'query', root));
    const m = await run(byName(Object.fromEntries(Object.entries(s).map(([b, x]) => [b, querySpecs(x.seed, x.base)]))), { interleave: false });
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

/** A commit's full sha, or the usage line when `name` is none. */
function commitOf(name) {
  try {
    return git('rev-parse', '--verify', `${name}^{commit}`);
  } catch {
    return usage(`not a commit: ${name}`);
  }
}
const refSha = commitOf(positionals[0] ?? defaultRef());
/** The fixed anchor (bench/anchor, docs/bench.md "The anchor"; `--anchor C` another, `--anchor none` none); measured once when it is REF itself. */
const anchorName = opts.anchor ?? (existsSync('bench/anchor') ? readFileSync('bench/anchor', 'utf8').split(/\s/)[0] : '');
const anchorSha = anchorName && anchorName !== 'none' ? commitOf(anchorName) : undefined;
const headSha = git('rev-parse', 'HEAD');
const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
const subject = (sha) => git('log', '-1', '--format=%s', sha).slice(0, 80);
const started = Date.now();
const roots = { this: '', ref: refCheckout(refSha), ...(anchorSha && anchorSha !== refSha ? { anchor: refCheckout(anchorSha) } : {}) };
/** The builds this one is compared with, by their name in the tables. */
const against = Object.keys(roots).filter((b) => b !== 'this');
const NAME = { ref: 'REF', anchor: 'ANCHOR' };

const out = [
  `# bench:compare — this build ÷ ${against.map((b) => NAME[b]).join(' and ÷ ')}`,
  '',
  `${new Date().toISOString()} · Node ${process.version} · ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'} · load average at start ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
  '',
  `- this: ${headSha.slice(0, 12)} ${subject(headSha)}${dirty ? ' (+ uncommitted changes)' : ''}`,
  `- REF: ${refSha.slice(0, 12)} ${subject(refSha)}`,
  ...(roots.anchor ? [`- ANCHOR: ${anchorSha.slice(0, 12)} ${subject(anchorSha)} (bench/anchor)`] : anchorSha ? ['- ANCHOR: the same commit as REF'] : []),
  `- ${reps} run(s) of ${duration} s per row and build (1 s warm-up each), the builds' runs in turn; c=10 unless named`,
  '',
];
const head = ['| section | row | this req/s', ...against.flatMap((b) => [`${NAME[b]} req/s | this ÷ ${NAME[b]} (runs) | CPU µs/req this · ${NAME[b]} | ${NAME[b]} ÷ this CPU (runs)`]), ' |'];
const rowsOut = [head.join(' | ').replace(' |  |', ' | |'), `| --- | --- | ---: |${against.map(() => ' ---: | ---: | ---: | ---: |').join('')} --- |`];
const ratiosOut = [`| section | measure | this |${against.map((b) => ` ${NAME[b]} |`).join('')}`, `| --- | --- | ---: |${against.map(() => ' ---: |').join('')}`];
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
 * The measures (`req/s`, `CPU`) on which row `m` (this and `build`'s results) is below
 * {@link REGRESSION_BELOW}, with both paired ratios (`cpu` undefined when a server's CPU was not read).
 */
function judge(m, build) {
  const ratio = pairedRatio(m.this, m[build]);
  // server CPU per request, the other build's ÷ this one's: above 1 this build does less work per request
  const cpu = m.this.cpuRuns && m[build].cpuRuns ? pairedRatio(m[build], m.this, 'cpuRuns') : undefined;
  const below = [ratio.value < REGRESSION_BELOW && 'req/s', cpu && cpu.value < REGRESSION_BELOW && 'CPU'].filter(Boolean);
  return { ratio, cpu, below };
}

/**
 * Measures a marked row again while its servers still run: {@link CONFIRM_REPS} more runs of this
 * build and `build`, in turn. A row stays a regression only when the second measurement is below
 * {@link REGRESSION_BELOW} on a measure the first one was (one run landing on a busy moment of a
 * shared VM is not a regression). Returns the second judgement.
 */
async function confirm(m, build, first) {
  const spec = measuredFrom.get(m);
  const again = await measureVariants({ row: { this: spec.this, [build]: spec[build] } }, { reps: CONFIRM_REPS, duration, interleave: true });
  const second = judge(again.row, build);
  return { ...second, below: second.below.filter((x) => first.below.includes(x)) };
}

/** One build's cells of a row (req/s, ratio, CPU, CPU ratio) and its notes; counts a regression. */
async function cellsAgainst(m, build) {
  const first = judge(m, build);
  const { ratio, cpu } = first;
  const failures = (r) => r.errors + r.non2xx;
  // a request the other build does not answer (a route it does not have) is no figure to compare with
  const comparable = failures(m[build]) * 2 < m[build].n;
  const second = comparable && first.below.length > 0 && opts.confirm ? await confirm(m, build, first) : undefined;
  const below = second ? second.below : first.below;
  const regression = comparable && below.length > 0;
  if (regression) regressions++;
  const who = NAME[build];
  const rerun = second && `${who} measured again: ${second.ratio.text} req/s${second.cpu ? `, ${second.cpu.text} CPU` : ''}`;
  const mark = regression ? `**REGRESSION** against ${who} (${below.join(', ')})`
    : !comparable ? `not comparable: ${who} fails it`
    : second ? `not confirmed against ${who} (${first.below.join(', ')} below ${REGRESSION_BELOW}× once)`
    : '';
  const notes = [mark, rerun, failures(m[build]) > 0 && `${who}: ${failures(m[build])} errors`].filter(Boolean);
  const cpuCells = cpu ? `${m.this.cpuUs.toFixed(0)} · ${m[build].cpuUs.toFixed(0)} | ${cpu.text}` : ' | ';
  return { cells: `${Math.round(m[build].rps)} | ${ratio.text} | ${cpuCells}`, notes };
}

for (const name of wanted) {
  const scope = new Scope();
  const t0 = Date.now();
  try {
    const { rows, ratios } = await SECTIONS[name](scope, roots, run);
    for (const [label, m] of rows) {
      const parts = [];
      for (const build of against) parts.push(await cellsAgainst(m, build));
      const notes = [...parts.flatMap((p) => p.notes), m.this.errors + m.this.non2xx > 0 && `this: ${m.this.errors + m.this.non2xx} errors`].filter(Boolean);
      rowsOut.push(`| ${name} | ${label} | ${Math.round(m.this.rps)} | ${parts.map((p) => p.cells).join(' | ')} | ${notes.join('; ')} |`);
    }
    for (const r of ratios) ratiosOut.push(`| ${name} | ${r.label} | ${r.this.text} |${against.map((b) => ` ${r[b].text} |`).join('')}`);
  } catch (e) {
    failed = true;
    rowsOut.push(`| ${name} | **section failed**: ${String(e.message ?? e).split('\n')[0]} | |${against.map(() => ' | | | |').join('')} |`);
    console.error(e);
  } finally {
    await scope.close();
  }
  console.log(`${name}: ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}
out.push(...rowsOut, '', 'Ratios within each build (paired runs of one build):', '', ...ratiosOut, '');
const verdict = against.map((b) => NAME[b]).join(' or ');
out.push(`${regressions ? `**${regressions} row mark(s) below ${REGRESSION_BELOW}× ${verdict}**` : `no row below ${REGRESSION_BELOW}× ${verdict}`} · total ${((Date.now() - started) / 1000).toFixed(0)} s`, '');
const text = out.join('\n');
console.log(`\n${text}`);
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/compare.md', text);
process.exit(failed ? 2 : regressions ? 1 : 0);
