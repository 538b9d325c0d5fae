import { describe, expect, it } from 'vitest';
import { browser, cardIn, hasChromium, lane, newPage, PASSWORD, poll, server, useBrowserSuite, watchErrors } from './harness.js';
import { apiAs, userToken } from './server.js';

/**
 * Boards and sprints as a team reads them, in Debian's Chromium against the built all-in-one
 * server: "New board" makes a board of its own cards (a default tag of its own, shown and
 * explained in the board settings) or, chosen explicitly, a view board; the board list says which;
 * and closing a sprint into a planned one says before the close that it will start, then the
 * frozen report names the rollover target by its title.
 */
useBrowserSuite();

describe.skipIf(!hasChromium)('board kinds and sprint rollover in the web app', () => {
  it('creates a board of its own cards or a view board, says which, and shows the board tag in the settings', async () => {
    const { token } = await userToken(server.base, 'kim', PASSWORD);
    const api = apiAs(server.base, token);
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await ctx.addInitScript(`localStorage.setItem("board.pollMs", "600000")`);
    const page = await newPage(ctx);
    const errors = watchErrors(page);
    await page.goto(server.base + '/login');
    await page.getByLabel('Username').fill('kim');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Your boards' }).waitFor();

    const create = async (name: string, kind?: RegExp) => {
      await page.goto(server.base + '/');
      await page.getByRole('heading', { name: 'Your boards' }).waitFor();
      await page.getByLabel('Name').fill(name);
      if (kind) await page.getByRole('radio', { name: kind }).check();
      await page.getByRole('button', { name: 'Create board' }).click();
      await page.waitForURL(/\/boards\/[^/]+$/);
      return decodeURIComponent(new URL(page.url()).pathname.split('/').at(-1)!);
    };
    const alpha = await create('Alpha');
    const beta = await create('Beta');
    const view = await create('Everything', /A view/);

    const boards = (await api('GET', '/api/v1/boards')).body.owned_boards as Array<{ id: string; default_tags: string[] }>;
    expect(Object.fromEntries(boards.map((b) => [b.id, b.default_tags]))).toEqual({ [alpha]: ['board-alpha'], [beta]: ['board-beta'], [view]: [] });
    // a card created on Alpha carries its tag, so Beta does not show it; the view board does
    const card = await api('POST', `/api/v1/boards/${alpha}/tasks`, { title: 'Alpha card', status: 'todo' });
    expect(card.body.tags).toEqual(['board-alpha']);
    await page.goto(`${server.base}/boards/${beta}`);
    await lane(page, 'To Do').waitFor();
    expect(await cardIn(lane(page, 'To Do'), 'Alpha card').count()).toBe(0);
    await page.goto(`${server.base}/boards/${view}`);
    await cardIn(lane(page, 'To Do'), 'Alpha card').waitFor();

    await page.goto(server.base + '/');
    const kinds = page.getByTestId('board-kind');
    await poll(() => kinds.allTextContents()).toEqual(['own cards (tag board-alpha)', 'own cards (tag board-beta)', 'view of all tasks matching its columns']);

    await page.goto(`${server.base}/boards/${alpha}`);
    await page.getByRole('button', { name: /Edit columns/ }).click();
    await expect.poll(() => page.getByLabel('Board tags').inputValue()).toBe('board-alpha');
    expect(await page.getByTestId('board-tags-help').textContent()).toContain('Cards on this board carry the tag “board-alpha”');
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('says the planned sprint will start before the close, and the frozen report names the rollover target by title', async () => {
    const { token } = await userToken(server.base, 'lee', PASSWORD);
    const api = apiAs(server.base, token);
    const board = (await api('POST', '/api/v1/boards', { name: 'Team', board_type: 'private' })).body;
    const s1 = (await api('POST', `/api/v1/boards/${board.id}/sprints`, { title: 'Sprint 1', start: true })).body.id as string;
    await api('POST', `/api/v1/boards/${board.id}/sprints`, { title: 'Sprint 2' });
    await api('POST', `/api/v1/boards/${board.id}/tasks`, { title: 'Unfinished', column_id: 'col-to-do', metadata: { 'app.points': 3 } });

    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await newPage(ctx);
    const errors = watchErrors(page);
    await page.goto(server.base + '/login');
    await page.getByLabel('Username').fill('lee');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Your boards' }).waitFor();
    await page.goto(`${server.base}/boards/${board.id}/sprints/${s1}`);
    await page.getByRole('button', { name: 'Close sprint…' }).click();
    await page.getByLabel('Roll unfinished cards over to').selectOption({ label: 'Sprint 2' });
    await poll(() => page.getByTestId('will-start').textContent()).toContain('“Sprint 2” has not started: closing starts it now with 1 cards');
    await page.getByRole('button', { name: 'Close sprint', exact: true }).click();
    await poll(() => page.getByTestId('started-sprint').textContent()).toContain('“Sprint 2” has started');
    await page.getByRole('button', { name: 'Done' }).click();
    await poll(() => page.getByTestId('report-kind').textContent()).toContain('Frozen at the close');
    await poll(() => page.locator('.report-list').filter({ hasText: 'Not completed (rolled over)' }).textContent()).toContain('to “Sprint 2”');
    expect(errors).toEqual([]);
    await ctx.close();
  });
});
