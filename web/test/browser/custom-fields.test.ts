import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ARTIFACTS, browser, cardIn, hasChromium, lane, newPage, PASSWORD, poll, server, useBrowserSuite, watchErrors } from './harness.js';
import { apiAs, userToken } from './server.js';

/**
 * Custom fields in the web board (docs/web.md "Custom fields"), in Debian's Chromium against the
 * built all-in-one server: defined in the board's settings, set with their widgets in the card
 * detail, shown as colored badges by name, filtered by name, and a column sorted by a select field
 * in its options' order.
 */
useBrowserSuite();

describe('custom fields in the web board', () => {
  it.skipIf(!hasChromium)('defines Priority and Estimate, sets them in the card detail, shows badges, filters Priority = P1 by name and sorts a column by Priority', async () => {
    const { token } = await userToken(server.base, 'cora', PASSWORD);
    const api = apiAs(server.base, token);
    const board = await api('POST', '/api/v1/boards', { name: 'Fields board', board_type: 'private' });
    expect(board.status).toBe(201);
    const boardId = board.body.id as string;
    for (const title of ['Alpha', 'Beta', 'Gamma']) {
      expect((await api('POST', `/api/v1/boards/${boardId}/tasks`, { title, column_id: 'col-to-do' })).status).toBe(201);
    }

    const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    await ctx.addInitScript('localStorage.setItem("board.pollMs", "600000")');
    const page = await newPage(ctx);
    const errors = watchErrors(page);
    await page.goto(server.base + '/login');
    await page.getByLabel('Username').fill('cora');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Your boards' }).waitFor();
    await page.goto(`${server.base}/boards/${boardId}`);
    const todo = lane(page, 'To Do');
    await cardIn(todo, 'Gamma').waitFor();

    // Board settings: Priority, a select P0–P3 with colors, and Estimate, a number.
    await page.getByRole('button', { name: 'Fields…' }).click();
    const settings = page.getByRole('dialog', { name: 'Custom fields' });
    const add = settings.getByRole('form', { name: 'Add a field' });
    await add.getByLabel('Field name').fill('Priority');
    await add.getByLabel('Type').selectOption('select');
    const colors = ['#d73a4a', '#fbca04', '#1d76db', '#0e8a16'];
    for (const [i, label] of ['P0', 'P1', 'P2', 'P3'].entries()) {
      await add.getByRole('button', { name: 'Add an option' }).click();
      await add.getByLabel(`Option ${i + 1} label`).fill(label);
      await add.getByLabel(`Option ${i + 1} color`).fill(colors[i]!);
    }
    await add.getByRole('button', { name: 'Add field' }).click();
    await settings.getByRole('listitem', { name: 'Field Priority' }).waitFor();
    await add.getByLabel('Field name').fill('Estimate');
    await add.getByLabel('Type').selectOption('number');
    await add.getByRole('button', { name: 'Add field' }).click();
    await settings.getByRole('listitem', { name: 'Field Estimate' }).waitFor();
    const defs = (await api('GET', `/api/v1/custom-fields?board_id=${boardId}`)).body.data;
    expect(defs.map((d: { key: string; type: string }) => [d.key, d.type])).toEqual([['cf.priority', 'select'], ['cf.estimate', 'number']]);
    expect(defs[0].options.map((o: { id: string; label: string; color: string }) => [o.id, o.label, o.color])).toEqual([
      ['p0', 'P0', '#d73a4a'], ['p1', 'P1', '#fbca04'], ['p2', 'P2', '#1d76db'], ['p3', 'P3', '#0e8a16'],
    ]);
    await page.screenshot({ path: join(ARTIFACTS, 'custom-fields-settings.png') });
    await settings.getByRole('button', { name: 'Close dialog' }).click();

    // Card detail: the Priority select and the Estimate number input.
    const setFields = async (title: string, priority: string, estimate: string) => {
      await cardIn(todo, title).getByRole('button', { name: title, exact: true }).click();
      const detail = page.getByRole('dialog', { name: title });
      await detail.getByRole('button', { name: 'Edit' }).click();
      await detail.getByLabel('Priority').selectOption({ label: priority });
      await detail.getByLabel('Estimate').fill(estimate);
      await detail.getByRole('button', { name: 'Save' }).click();
      await detail.getByTestId('detail-metadata').filter({ hasText: `Priority: ${priority}` }).waitFor();
      await detail.getByRole('button', { name: 'Close dialog' }).click();
    };
    await setFields('Alpha', 'P2', '5');
    await setFields('Beta', 'P1', '3');
    await setFields('Gamma', 'P0', '8');
    const tasks = (await api('POST', '/api/v1/tasks/query', { query: 'ORDER BY title ASC' })).body.data;
    expect(tasks.map((t: { metadata: Record<string, unknown> }) => [t.metadata['cf.priority'], t.metadata['cf.estimate']])).toEqual([['p2', 5], ['p1', 3], ['p0', 8]]);

    // Badges by option label, in the option's color.
    const betaBadge = cardIn(todo, 'Beta').getByTestId('field-badge').filter({ hasText: 'P1' });
    await betaBadge.waitFor();
    expect(await betaBadge.getAttribute('title')).toBe('Priority: P1');
    expect(await betaBadge.evaluate((el) => (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(el).backgroundColor)).toBe('rgb(251, 202, 4)');
    await cardIn(todo, 'Gamma').getByTestId('field-badge').filter({ hasText: 'P0' }).waitFor();

    // The filter bar offers the fields by name, and `Priority = P1` filters by name.
    expect(await page.getByLabel('Insert a field').locator('option').allTextContents()).toEqual([
      'Fields…', 'Priority (select: = != IN IS NULL)', 'Estimate (number: = != < <= > >= IN BETWEEN IS NULL)',
    ]);
    await page.getByLabel('Filter', { exact: true }).fill('Priority = P1');
    await page.getByRole('button', { name: 'Apply' }).click();
    await cardIn(todo, 'Alpha').waitFor({ state: 'detached' });
    await poll(async () => (await todo.getByRole('listitem').allTextContents()).length).toBe(1);
    await cardIn(todo, 'Beta').waitFor();
    await page.getByRole('button', { name: 'Clear' }).click();
    await cardIn(todo, 'Alpha').waitFor();

    // A column sorted by Priority follows the options (P0, P1, P2), not the titles.
    await page.getByRole('button', { name: 'Edit columns' }).click();
    const editor = page.getByRole('dialog', { name: 'Edit columns' });
    const todoRow = editor.getByRole('listitem', { name: 'Column 1: To Do' });
    await todoRow.getByLabel('Query').fill("status = 'todo' ORDER BY cf.priority ASC");
    await editor.getByRole('button', { name: 'Save columns' }).click();
    await editor.waitFor({ state: 'detached' });
    await poll(async () => todo.locator('.card-title').allTextContents()).toEqual(['Gamma', 'Beta', 'Alpha']);
    await page.screenshot({ path: join(ARTIFACTS, 'custom-fields-board.png') });
    expect(errors).toEqual([]);
    await ctx.close();
  });
});
