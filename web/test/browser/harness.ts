import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { ROOT, startServer, type RunningServer } from './server.js';

/**
 * What every browser test file shares: Debian's Chromium (never a downloaded browser) with its
 * flags, the built all-in-one server of the file, the artifacts folder (web/test-artifacts/,
 * gitignored), and the page helpers (errors the page reports, polls bounded by one UI step,
 * lanes and cards by their accessible names, axe-core's serious and critical violations).
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const ARGS = ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
export const ARTIFACTS = join(ROOT, 'web/test-artifacts');
export const PASSWORD = 'correct horse battery';
/** Upper bound of one UI step (milliseconds). */
export const STEP = 15_000;

// Without Chromium the browser tests are skipped on a developer's machine, but never under CI
// (`CI=true`, set by .ci/run, which installs Debian's chromium): there a skip is an error.
export const hasChromium = existsSync(CHROMIUM);
const underCi = /^(1|true)$/i.test(process.env.CI ?? '');
if (!hasChromium && underCi) throw new Error(`no Chromium at ${CHROMIUM}: under CI the browser tests must run (.ci/run installs Debian's chromium)`);
if (!hasChromium) console.warn(`browser tests skipped: no Chromium at ${CHROMIUM} (.ci/run installs Debian's chromium; under CI this is an error)`);

/** The file's server and browser, set by {@link useBrowserSuite}'s `beforeAll`. */
export let server: RunningServer;
export let browser: Browser;

/** Starts the built server (temp data dir) and Chromium before the file's tests, and stops both after. */
export function useBrowserSuite(): void {
  beforeAll(async () => {
    if (!hasChromium) return;
    mkdirSync(ARTIFACTS, { recursive: true });
    server = await startServer();
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS, timeout: 60_000 });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });
}

/** Errors the page reports: uncaught exceptions and console.error (network status lines excluded, see docs/web.md). */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(`console: ${m.text()}`);
  });
  return errors;
}

/** A new page of `ctx` whose steps wait at most {@link STEP}. */
export async function newPage(ctx: BrowserContext): Promise<Page> {
  const page = await ctx.newPage();
  page.setDefaultTimeout(STEP);
  return page;
}

/** `expect.poll` with the step bound (vitest's default of 1 s is too short on a loaded CI machine). */
export const poll = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: STEP, interval: 100 });

/** A lane of the board by its name. */
export const lane = (page: Page, name: string) => page.getByRole('listitem', { name, exact: true });
/** A card of a lane (or of a planning group) by its title. */
export const cardIn = (l: Locator, title: string) => l.getByRole('listitem', { name: title, exact: true });

/** axe-core's violations of impact serious or critical on the page as it is (axe injected from node_modules). */
export async function seriousViolations(page: Page): Promise<Array<{ id: string; impact: string; nodes: string[] }>> {
  await page.addScriptTag({ path: join(ROOT, 'node_modules/axe-core/axe.min.js') });
  const found = (await page.evaluate(
    `axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) })))`,
  )) as Array<{ id: string; impact: string; nodes: string[] }>;
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
