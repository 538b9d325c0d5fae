import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ARTIFACTS, browser, cardIn, hasChromium, lane, newPage, PASSWORD, poll, seriousViolations, server, useBrowserSuite, watchErrors } from './harness.js';
import { apiAs, userToken } from './server.js';

/**
 * Flow on the web board, in Debian's Chromium against the built all-in-one server: a WIP limit of
 * policy `block` set in the column editor, shown as `count / limit` in the lane header, and a drop
 * into the full lane refused, rolled back and explained; then the Flow view (linked from the
 * board's toolbar): the cumulative flow with today's row, the cycle-time table of the finished
 * cards, throughput per week, the range picker, the empty states, axe, and screenshots at 1440 px
 * and 390 px (`flow-1440.png`, `flow-390.png` in web/test-artifacts/).
 */
useBrowserSuite();

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

describe.skipIf(!hasChromium)('flow on the web board', () => {
  it('refuses a drop into a full blocking lane with a sentence naming it, then charts the cumulative flow, cycle time and throughput', async () => {
    const { token } = await userToken(server.base, 'flora', PASSWORD);
    const api = apiAs(server.base, token);
    // bypassCSP only so that axe-core can be injected as a script tag.
    const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 }, bypassCSP: true });
    await ctx.addInitScript(`localStorage.setItem("board.pollMs", "600000")`);
    const page = await newPage(ctx);
    const errors = watchErrors(page);
    await page.goto(server.base + '/login');
    await page.getByLabel('Username').fill('flora');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Your boards' }).waitFor();

    const board = (await api('POST', '/api/v1/boards', { name: 'Flow board', board_type: 'shared' })).body;
    const [todoId, doingId, doneId] = board.columns.map((c: { id: string }) => c.id) as [string, string, string];

    // An empty board's Flow view says there is nothing yet, for each chart.
    await page.goto(`${server.base}/boards/${board.id}/flow`);
    await page.getByText('No card on this board yet').waitFor();
    expect(await page.getByText(/^No card finished between/).count()).toBe(2);

    const ids: Record<string, string> = {};
    for (const title of ['Alpha', 'Beta', 'Gamma']) ids[title] = (await api('POST', `/api/v1/boards/${board.id}/tasks`, { title, column_id: todoId })).body.id;
    expect((await api('POST', `/api/v1/boards/${board.id}/tasks/${ids.Alpha}/move`, { from_column_id: todoId, to_column_id: doingId })).status).toBe(200);

    // The column editor sets Doing's limit to 1 and its policy to block.
    await page.goto(`${server.base}/boards/${board.id}`);
    await page.getByRole('button', { name: 'Edit columns' }).click();
    const editor = page.getByRole('dialog', { name: 'Edit columns' });
    const doingRow = editor.getByRole('listitem', { name: 'Column 2: Doing' });
    await doingRow.getByLabel('WIP limit').fill('1');
    await doingRow.getByLabel('When full').selectOption('block');
    await editor.getByRole('button', { name: 'Save columns' }).click();
    await editor.waitFor({ state: 'detached' });
    expect((await api('GET', `/api/v1/boards/${board.id}`)).body.columns[1]).toMatchObject({ id: doingId, wip_limit: 1, wip_policy: 'block' });
    const doing = lane(page, 'Doing');
    await doing.getByTestId('lane-limit').filter({ hasText: '/ 1' }).waitFor();
    expect(await doing.getByTestId('lane-count').textContent()).toBe('1');
    await doing.getByTestId('lane-wip').filter({ hasText: 'full' }).waitFor();

    // A keyboard drop of Beta into the full Doing lane: previewed as refused, refused, rolled back, explained.
    const todo = lane(page, 'To Do');
    const handle = cardIn(todo, 'Beta').getByRole('button', { name: /^Drag/ });
    await handle.focus();
    await page.keyboard.press('Space');
    await poll(() => handle.getAttribute('aria-pressed')).toBe('true');
    await page.waitForTimeout(100); // dnd-kit listens for the arrow keys from the next task on
    await page.keyboard.press('ArrowRight');
    await doing.getByRole('status').filter({ hasText: 'Cannot move to Doing: it is full (1 card, WIP limit 1).' }).waitFor();
    await page.keyboard.press('Space');
    const alert = page.getByRole('alert').filter({ hasText: '“Beta” was not moved' });
    await alert.waitFor();
    expect(await alert.textContent()).toContain('“Beta” was not moved: Doing already holds 1 card, its WIP limit of 1.');
    await cardIn(todo, 'Beta').waitFor();
    expect(await cardIn(doing, 'Beta').count()).toBe(0);
    expect(await doing.getByTestId('lane-count').textContent()).toBe('1');
    expect((await api('GET', `/api/v1/tasks/${ids.Beta}`)).body.status).toBe('todo');

    // Every card to Done; once the moves are recorded, the Flow view charts them.
    expect((await api('POST', `/api/v1/boards/${board.id}/tasks/${ids.Alpha}/move`, { from_column_id: doingId, to_column_id: doneId })).status).toBe(200);
    for (const t of ['Beta', 'Gamma']) expect((await api('POST', `/api/v1/boards/${board.id}/tasks/${ids[t]}/move`, { from_column_id: todoId, to_column_id: doneId })).status).toBe(200);
    await poll(async () => (await api('GET', `/api/v1/boards/${board.id}/cycle-time`)).body.cards.length).toBe(3);

    await page.getByRole('link', { name: 'Flow', exact: true }).click();
    await page.getByRole('heading', { name: 'Flow of “Flow board”' }).waitFor();
    expect(page.url()).toBe(`${server.base}/boards/${board.id}/flow`);
    const cfd = page.getByTestId('cfd-table');
    const today = cfd.locator('tbody tr').filter({ hasText: `${day(0)} (today)` });
    await today.waitFor();
    expect(await cfd.locator('thead th').allTextContents()).toEqual(['Day', 'To Do', 'Doing', 'Done']);
    expect(await today.locator('td').allTextContents()).toEqual(['0', '0', '3']);
    expect(await page.getByTestId('cfd-chart').getAttribute('data-axis-titles')).toBe('day (UTC) | cards');
    await page.getByTestId('cfd-chart').locator('canvas').waitFor();

    const cycle = page.getByTestId('cycle-table');
    await poll(async () => (await cycle.locator('tbody th').allTextContents()).sort()).toEqual(['Alpha', 'Beta', 'Gamma']);
    expect(await page.getByTestId('cycle-percentiles').textContent()).toMatch(/^Cycle time: p50 [\d.]+ h, p85 [\d.]+ h, p95 [\d.]+ h/);
    expect(await page.getByTestId('cycle-chart').getAttribute('data-axis-titles')).toBe('finished (UTC day) | cycle time (hours)');
    const weeks = page.getByTestId('throughput-table').locator('tbody tr');
    expect((await weeks.locator('td').allTextContents()).map(Number).reduce((a, b) => a + b, 0)).toBe(3);
    expect(await page.getByTestId('throughput-chart').getAttribute('data-axis-titles')).toBe('week (UTC, from Monday) | cards finished');

    // The range picker: the last 90 days.
    await page.getByLabel('Range').selectOption('90');
    await page.getByText(`${day(-89)} to ${day(0)} (UTC days)`).waitFor();
    await poll(() => page.getByTestId('throughput-table').locator('tbody tr').count()).toBeGreaterThanOrEqual(13);
    await cycle.locator('tbody th').filter({ hasText: 'Gamma' }).waitFor();

    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, 'flow-1440.png'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await poll(async () => (await page.evaluate('document.documentElement.scrollWidth')) as number).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(ARTIFACTS, 'flow-390.png'), fullPage: true });
    expect(errors).toEqual([]);
    await ctx.close();
  });
});
