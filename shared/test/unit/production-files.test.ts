import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Production files against the workspace list: the Dockerfile's build stage must copy
 * every workspace's package.json before `npm ci`, or the image's install silently misses a
 * workspace (its dependencies, its `bin` links). The workspace list is read from the root
 * package.json at test time, so a workspace added later is checked too. docker-compose.yml itself
 * is validated by `.ci/run` with Debian's docker-compose parser.
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * The workspace folders of `package.json` `workspaces` entries, relative to `root`: a plain path,
 * or `<dir>/*` (every sub-folder with a package.json). Other glob forms throw, so a new form is
 * noticed here rather than silently unchecked.
 */
function workspaceDirs(root: string, patterns: readonly string[]): string[] {
  return patterns.flatMap((p) => {
    const pattern = p.replace(/\/+$/, '');
    if (!/[*?[{]/.test(pattern)) return [pattern];
    const star = /^([^*?[{]+)\/\*$/.exec(pattern);
    if (!star) throw new Error(`workspace pattern "${p}" is not a path or <dir>/*: extend workspaceDirs()`);
    const dir = star[1]!;
    return readdirSync(join(root, dir), { withFileTypes: true })
      .filter((e) => e.isDirectory() && existsSync(join(root, dir, e.name, 'package.json')))
      .map((e) => `${dir}/${e.name}`)
      .sort();
  });
}

/**
 * The workspaces whose package.json the Dockerfile's first stage does not COPY (to the same
 * folder) before its first `RUN npm ci`; also names `package.json` / `package-lock.json` of the
 * root when they are missing. Continuation lines (`\`) are joined; `COPY --flags` are ignored.
 */
function missingCopies(dockerfile: string, workspaces: readonly string[]): string[] {
  const lines = dockerfile.replace(/\\\r?\n/g, ' ').split(/\r?\n/).map((l) => l.trim());
  const ci = lines.findIndex((l) => /^RUN\s+(.*\s)?npm\s+ci\b/.test(l));
  if (ci < 0) return ['RUN npm ci'];
  const copied = new Set<string>();
  for (const line of lines.slice(0, ci)) {
    const m = /^COPY\s+(.*)$/i.exec(line);
    if (!m) continue;
    const args = m[1]!.split(/\s+/).filter((a) => !a.startsWith('--'));
    const rawDest = args.pop()!;
    const dest = rawDest === '.' || rawDest === './' ? '' : rawDest.replace(/^\.\//, '');
    for (const src of args) {
      const file = src.replace(/^\.\//, '');
      const base = file.split('/').pop()!;
      // `COPY a/package.json a/` or `COPY a/package.json a/package.json`; root files to `./`
      const target = dest === '' || dest.endsWith('/') ? `${dest}${base}` : dest;
      if (target === file) copied.add(file);
    }
  }
  const needed = ['package.json', 'package-lock.json', ...workspaces.map((w) => `${w}/package.json`)];
  return needed.filter((f) => !copied.has(f));
}

const rootPackage = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[] };
const workspaces = workspaceDirs(ROOT, rootPackage.workspaces);
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

describe('Dockerfile against the workspace list', () => {
  it('reads the workspaces from the root package.json', () => {
    expect(workspaces).toContain('shared');
    expect(workspaces).toContain('services/gateway');
    for (const w of workspaces) expect(existsSync(join(ROOT, w, 'package.json')), w).toBe(true);
  });

  it('copies every workspace package.json (and the root manifest and lock file) before npm ci', () => {
    expect(missingCopies(dockerfile, workspaces)).toEqual([]);
  });

  it('would name a workspace whose COPY is missing or comes after npm ci', () => {
    const without = dockerfile.replace(/^COPY services\/query\/package\.json services\/query\/\n/m, '');
    expect(without).not.toBe(dockerfile);
    expect(missingCopies(without, workspaces)).toEqual(['services/query/package.json']);
    const late = `${without}\nCOPY services/query/package.json services/query/\n`;
    expect(missingCopies(late, workspaces)).toEqual(['services/query/package.json']);
    expect(missingCopies(dockerfile, [...workspaces, 'services/next'])).toEqual(['services/next/package.json']);
  });
});

/**
 * The node flags of `npm start` (the root package.json's `start` script: `node <flags> <script>`);
 * the Dockerfile's runtime stage sets the same ones in NODE_OPTIONS, and the bench spawns its
 * servers with them (bench/lib.mjs `NODE_FLAGS`), so all three run one runtime configuration.
 */
function startFlags(start: string): string[] {
  const args = start.split(/\s+/).slice(1);
  return args.slice(0, args.findIndex((a) => !a.startsWith('--')));
}

/** The flags of the Dockerfile's last `ENV NODE_OPTIONS=…` (empty when there is none). */
function dockerNodeOptions(file: string): string[] {
  const m = [...file.matchAll(/^ENV\s+NODE_OPTIONS=("?)([^"\n]*)\1\s*$/gm)].pop();
  return m ? m[2]!.trim().split(/\s+/) : [];
}

describe('node flags of the service (docs/store.md "Memory and garbage collection")', () => {
  const start = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;

  it('npm start and the image run node with the same flags, a larger young generation among them', () => {
    expect(startFlags(start)).toContain('--max-semi-space-size=32');
    expect(dockerNodeOptions(dockerfile)).toEqual(startFlags(start));
  });

  it('would notice an image without them', () => {
    expect(dockerNodeOptions(dockerfile.replace(/^ENV NODE_OPTIONS=.*\n/m, ''))).toEqual([]);
    expect(startFlags('node services/gateway/dist/main.js --all')).toEqual([]);
  });
});
