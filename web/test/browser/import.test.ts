import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ARTIFACTS, browser, hasChromium, newPage, PASSWORD, seriousViolations, server, useBrowserSuite, watchErrors } from './harness.js';
import { ROOT, userToken } from './server.js';

/**
 * The Import page in Debian's Chromium against the built all-in-one: a Trello export (the boards
 * service's test fixture) is checked first (the dry run's summary and its problem, the Import
 * button withheld while a card cannot be imported), then a clean export is imported and the new
 * board opened with its cards in their lists' columns. Screenshot `import-1440.png`.
 */
useBrowserSuite();

const fixture = JSON.parse(readFileSync(join(ROOT, 'services/boards/test/fixtures/trello-board.json'), 'utf8')) as { cards: Array<{ id: string }> };
const clean = { ...fixture, cards: fixture.cards.filter((c) => c.id !== 'card-noname') };

describe.skipIf(!hasChromium)('the Import page', () => {
  it('shows the dry run before importing, then imports and opens the board', async () => {
    await userToken(server.base, 'ivy', PASSWORD);
    const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 }, bypassCSP: true });
    const page = await newPage(ctx);
    const errors = watchErrors(page);
    await page.goto(server.base + '/login');
    await page.getByLabel('Username').fill('ivy');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Your boards' }).waitFor();
    await page.getByRole('link', { name: 'Import' }).click();
    await page.getByRole('heading', { name: 'Import a board' }).waitFor();

    await page.getByLabel('File').setInputFiles({ name: 'trello.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(fixture)) });
    await page.getByRole('button', { name: 'Check the file' }).click();
    await page.getByRole('heading', { name: 'What the import would do' }).waitFor();
    expect(await page.getByText(/Create the board Website relaunch with 3 columns/).textContent()).toMatch(/4 new cards, 0 updated, 2 notes/);
    const problems = page.getByRole('table', { name: 'Problems' });
    expect(await problems.getByRole('row').filter({ hasText: 'card card-noname' }).textContent()).toMatch(/error.*name.*the card has no name/);
    expect(await page.getByRole('button', { name: 'Import', exact: true }).count()).toBe(0);
    await page.getByRole('status').filter({ hasText: 'cannot be imported' }).waitFor();

    await page.getByLabel('File').setInputFiles({ name: 'trello.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(clean)) });
    await page.getByRole('button', { name: 'Check the file' }).click();
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.getByRole('link', { name: 'Open the board' }).waitFor();
    expect(await page.getByRole('status').filter({ hasText: 'Imported' }).textContent()).toMatch(/Imported: 4 cards created/);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, 'import-1440.png'), fullPage: true });
    await page.getByRole('link', { name: 'Open the board' }).click();
    await page.getByText('Design the hero section').waitFor();
    expect(errors).toEqual([]);
    await ctx.close();
  });
});
