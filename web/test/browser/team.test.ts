import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { ARTIFACTS, browser, cardIn, hasChromium, lane, newPage, PASSWORD, poll, seriousViolations, server, useBrowserSuite, watchErrors } from './harness.js';
import { apiAs, userToken } from './server.js';

/**
 * The web board as a team uses it, in Debian's Chromium against the built all-in-one server:
 * the sprint header that follows a teammate's sprint live, the confirmation before a sprint is
 * started over a running one, the burndown from kickoff to deadline, the sprint report's lists,
 * loading and empty states, error messages a person reads, and the small wording points.
 * Screenshots of the board, planning and sprint view at 1440 px and 390 px go to web/test-artifacts/.
 */
const DAY = 86_400_000;
useBrowserSuite();

const day = (offset: number) => new Date(Date.now() + offset * DAY).toISOString().slice(0, 10);

/** A logged-in page of `username` (registered through the API) in a new context of `width` px. */
async function pageOf(username: string, width: number, pollMs = 1000): Promise<{ ctx: BrowserContext; page: Page; errors: string[]; token: string; userId: string }> {
  const { token, userId } = await userToken(server.base, username, PASSWORD);
  const ctx = await browser.newContext({ viewport: { width, height: 900 }, bypassCSP: true });
  await ctx.addInitScript(`localStorage.setItem("board.pollMs", "${pollMs}")`);
  const page = await newPage(ctx);
  const errors = watchErrors(page);
  await page.goto(server.base + '/login');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Your boards' }).waitFor();
  return { ctx, page, errors, token, userId };
}

/** Screenshots of the page as it is at 1440 px and 390 px wide (the page never scrolls sideways at 390 px). */
async function shoot(page: Page, name: string) {
  const before = page.viewportSize()!;
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.screenshot({ path: join(ARTIFACTS, `${name}-1440.png`), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await poll(async () => (await page.evaluate('document.documentElement.scrollWidth')) as number).toBeLessThanOrEqual(390);
  await page.screenshot({ path: join(ARTIFACTS, `${name}-390.png`), fullPage: true });
  await page.setViewportSize(before);
}

/** A board of `owner` shared read-write with `members` through a group, with cards `points` (title → points) in To Do. */
async function teamBoard(ownerToken: string, name: string, memberIds: string[], points: Record<string, number>) {
  const api = apiAs(server.base, ownerToken);
  const board = (await api('POST', '/api/v1/boards', { name, board_type: 'shared' })).body;
  const group = (await api('POST', '/api/v1/groups', { name: `${name} team` })).body;
  for (const id of memberIds) expect((await api('POST', `/api/v1/groups/${group.id}/members`, { user_id: id })).status).toBe(200);
  expect((await api('POST', `/api/v1/boards/${board.id}/share`, { group_id: group.id, permission: 'rw' })).status).toBe(200);
  const ids: Record<string, string> = {};
  for (const [title, pts] of Object.entries(points)) {
    ids[title] = (await api('POST', `/api/v1/boards/${board.id}/tasks`, { title, column_id: board.columns[0].id })).body.id;
    await api('PATCH', `/api/v1/tasks/${ids[title]}/metadata`, { key: 'app.points', value: pts });
  }
  return { api, board, ids };
}

/** A sprint on `boardId` with `cards` in it, started when `start`. */
async function sprintWith(api: ReturnType<typeof apiAs>, boardId: string, body: Record<string, unknown>, cards: string[], start: boolean) {
  const sprint = (await api('POST', `/api/v1/boards/${boardId}/sprints`, body)).body;
  for (const id of cards) expect((await api('PATCH', `/api/v1/tasks/${id}/metadata`, { key: 'app.sprint', value: sprint.id })).status).toBe(200);
  if (start) expect((await api('POST', `/api/v1/tasks/${sprint.id}/start-sprint`, {})).status).toBe(200);
  return sprint as { id: string; title: string };
}

describe.skipIf(!hasChromium)('the web board for a team', () => {
  it("follows a teammate's sprint live in the sprint header: goal, days left, progress, links; start and close elsewhere", async () => {
    const bob = await pageOf('bob', 1440);
    const alice = await userToken(server.base, 'alice', PASSWORD);
    const { api, board, ids } = await teamBoard(alice.token, 'Team board', [bob.userId], { Login: 3, Signup: 2, Docs: 1 });
    await bob.page.goto(`${server.base}/boards/${board.id}`);
    const header = bob.page.getByRole('region', { name: 'Sprint', exact: true });
    await header.getByText('No sprint running.').waitFor();

    // Alice starts a sprint through the API: Bob's open board shows it without a reload.
    const sprint = await sprintWith(api, board.id, { title: 'Sprint 7', goal: 'Sign-up works end to end', kickoff: day(0), deadline: day(5) }, [ids.Login!, ids.Signup!], true);
    await header.getByRole('heading', { name: 'Sprint 7' }).waitFor();
    expect(await header.getByText('Sign-up works end to end').count()).toBe(1);
    expect(await header.getByTestId('days-left').textContent()).toBe('5 days left');
    expect(await header.getByTestId('sprint-progress').textContent()).toContain('0 of 5 points done');
    expect(await header.getByRole('link', { name: 'Sprint view' }).getAttribute('href')).toBe(`/boards/${board.id}/sprints/${sprint.id}`);
    await header.getByRole('link', { name: 'Backlog and planning' }).waitFor();
    await poll(() => bob.page.getByRole('combobox', { name: 'Sprint' }).locator('option').first().textContent()).toBe('Active sprint (Sprint 7)');
    await cardIn(lane(bob.page, 'To Do'), 'Login').waitFor();
    expect(await cardIn(lane(bob.page, 'To Do'), 'Docs').count()).toBe(0); // not in the sprint

    // Progress follows a move made elsewhere.
    const done = board.columns.find((c: { name: string }) => c.name === 'Done').id as string;
    expect((await api('POST', `/api/v1/boards/${board.id}/tasks/${ids.Login}/move`, { from_column_id: board.columns[0].id, to_column_id: done })).status).toBe(200);
    await header.getByTestId('sprint-progress').filter({ hasText: '3 of 5 points done' }).waitFor();
    await bob.page.getByRole('button', { name: 'Close sprint…' }).waitFor();
    expect(await seriousViolations(bob.page)).toEqual([]);
    await shoot(bob.page, 'board');
    // On a phone the lanes start near the top: the filter inputs fold behind one button.
    await bob.page.setViewportSize({ width: 390, height: 844 });
    await poll(async () => (await lane(bob.page, 'To Do').boundingBox())!.y).toBeLessThan(300);
    expect(await bob.page.getByLabel('Search', { exact: true }).isVisible()).toBe(false);
    await bob.page.getByRole('button', { name: 'Filter and search' }).click();
    await bob.page.getByLabel('Search', { exact: true }).waitFor();
    await bob.page.setViewportSize({ width: 1440, height: 900 });

    // Alice closes it: Bob's header says no sprint runs.
    expect((await api('POST', `/api/v1/tasks/${sprint.id}/close-sprint`, { rollover: 'backlog' })).status).toBe(200);
    await header.getByText('No sprint running.').waitFor();
    expect(await bob.page.getByRole('button', { name: 'Close sprint…' }).count()).toBe(0);
    expect(bob.errors).toEqual([]);
    await bob.ctx.close();
  });

  it('asks before starting a sprint while another runs, naming it and its open cards, and can close it first', async () => {
    const pia = await pageOf('pia', 1440, 600_000);
    const { api, board, ids } = await teamBoard(pia.token, 'Guard board', [], { Alpha: 3, Beta: 2, Gamma: 5 });
    const running = await sprintWith(api, board.id, { title: 'Sprint 1' }, [ids.Alpha!, ids.Beta!], true);
    await sprintWith(api, board.id, { title: 'Sprint 2' }, [ids.Gamma!], false);
    const page = pia.page;
    await page.goto(`${server.base}/boards/${board.id}/plan`);
    const next = page.getByRole('region', { name: 'Sprint “Sprint 2”' });

    // Cancel: nothing changes.
    await next.getByRole('button', { name: 'Start “Sprint 2”' }).click();
    let dialog = page.getByRole('dialog', { name: 'Start “Sprint 2” while “Sprint 1” runs?' });
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain('“Sprint 1” is the board\'s running sprint, with 2 open cards.');
    expect(await dialog.getByRole('list', { name: 'Open cards of “Sprint 1”' }).getByRole('listitem').allTextContents()).toEqual(['Alpha', 'Beta']);
    expect(await seriousViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect((await api('GET', `/api/v1/boards/${board.id}`)).body.activeSprintId).toBe(running.id);

    // Close the running one first (its open cards to the backlog), then the new one starts.
    await next.getByRole('button', { name: 'Start “Sprint 2”' }).click();
    dialog = page.getByRole('dialog', { name: 'Start “Sprint 2” while “Sprint 1” runs?' });
    await dialog.getByRole('button', { name: 'Close “Sprint 1” first…' }).click();
    const close = page.getByRole('dialog', { name: 'Close sprint “Sprint 1”' });
    await close.getByText('Unfinished cards (2)').waitFor();
    // The rollover choices name a sprint once ("Sprint 2", not "Sprint Sprint 2").
    expect(await close.getByLabel('Roll unfinished cards over to').locator('option').allTextContents()).toEqual(['The backlog', 'Sprint 2']);
    await close.getByRole('button', { name: 'Close sprint' }).click();
    await close.getByTestId('velocity').waitFor();
    await close.getByRole('button', { name: 'Done', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Sprint “Sprint 2” started.' }).waitFor();
    const b = (await api('GET', `/api/v1/boards/${board.id}`)).body;
    expect(b.activeSprintId).not.toBe(running.id);
    expect((await api('GET', `/api/v1/tasks/${running.id}`)).body.status).toBe('done');
    await shoot(page, 'planning');
    expect(pia.errors).toEqual([]);
    await pia.ctx.close();
  });

  it('charts the burndown from kickoff to deadline in days with the ideal line to 0 and today marked; the report lists the cards', async () => {
    const kim = await pageOf('kim', 1440, 600_000);
    const { api, board, ids } = await teamBoard(kim.token, 'Burn board', [], { One: 3, Two: 2, Three: 5 });
    const sprint = await sprintWith(api, board.id, { title: 'Sprint 3', kickoff: day(-2), deadline: day(4) }, [ids.One!, ids.Two!, ids.Three!], true);
    const done = board.columns.find((c: { name: string }) => c.name === 'Done').id as string;
    await api('POST', `/api/v1/boards/${board.id}/tasks/${ids.One}/move`, { from_column_id: board.columns[0].id, to_column_id: done });
    const page = kim.page;
    await page.goto(`${server.base}/boards/${board.id}/sprints/${sprint.id}`);
    const table = page.getByTestId('burndown-table');
    await table.waitFor();
    const rows = await table.locator('tbody tr').allTextContents();
    // Seven days, kickoff (2 days ago) to deadline (in 4 days); actuals only today; ideal 10 → 0.
    expect(rows).toHaveLength(7);
    expect(rows[0]).toBe(`${day(-2)}—10—`);
    expect(rows[2]).toBe(`${day(0)} (today)7${Math.round((10 * 4) / 6 * 100) / 100}10`);
    expect(rows[6]).toBe(`${day(4)}—0—`);
    expect(await table.locator('tr[aria-current="date"]').count()).toBe(1);
    // Axis titles with units; the legend names the series without empty "--" readings.
    const chart = page.getByTestId('burndown-chart');
    await chart.locator('canvas').waitFor();
    expect(await chart.getAttribute('data-axis-titles')).toBe('day (UTC) | points remaining');
    expect(await chart.locator('.u-legend').textContent()).not.toContain('--');

    // The report a team reads: what was finished and what not, with points.
    const completed = page.getByRole('region', { name: 'Completed (1)', exact: true });
    expect(await completed.getByRole('listitem').allTextContents()).toEqual(['One 3 pts']);
    const open = page.getByRole('region', { name: 'Not completed (2)' });
    expect(await open.getByRole('listitem').allTextContents()).toEqual(expect.arrayContaining([expect.stringMatching(/^Two 2 pts/), expect.stringMatching(/^Three 5 pts/)]));
    expect(await seriousViolations(page)).toEqual([]);
    // The sprint view uses the width at 1440 px: the burndown and the report side by side, filling it.
    const chartBox = (await page.getByRole('region', { name: 'Burndown', exact: true }).boundingBox())!;
    const reportBox = (await page.getByRole('region', { name: 'Report', exact: true }).boundingBox())!;
    expect(chartBox.width + reportBox.width).toBeGreaterThan(1440 * 0.85);
    await shoot(page, 'sprint');

    // A planned sprint offers no "Close sprint…".
    const planned = await sprintWith(api, board.id, { title: 'Sprint 4' }, [], false);
    await page.goto(`${server.base}/boards/${board.id}/sprints/${planned.id}`);
    await page.getByRole('heading', { name: 'Sprint “Sprint 4”' }).waitFor();
    await page.getByTestId('report').waitFor();
    expect(await page.getByRole('button', { name: 'Close sprint…' }).count()).toBe(0);
    expect(kim.errors).toEqual([]);
    await kim.ctx.close();
  });

  it('shows skeletons while loading, an empty state for a filter that matches nothing, and errors a person reads', async () => {
    // Errors in one sentence naming the field once.
    const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const anon = await newPage(ctx);
    await anon.goto(server.base + '/login');
    await anon.getByLabel('Username').fill('shorty');
    await anon.getByLabel('Password').fill('short');
    await anon.getByRole('button', { name: 'Register' }).click();
    expect(await anon.getByRole('alert').textContent()).toBe('Password must have at least 8 characters.');
    await ctx.close();

    const lea = await pageOf('lea', 1440, 600_000);
    const { api, board, ids } = await teamBoard(lea.token, 'States board', [], { Alpha: 3, Beta: 2 });
    await sprintWith(api, board.id, { title: 'Sprint 5' }, [ids.Alpha!, ids.Beta!], true);
    const page = lea.page;

    // Loading: skeleton cards and no "0" count while the columns are read.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    await page.route('**/columns/*/query', async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(`${server.base}/boards/${board.id}`);
    const todo = lane(page, 'To Do');
    await todo.getByTestId('card-skeleton').waitFor();
    expect(await todo.getByTestId('lane-count').count()).toBe(0);
    expect(await todo.getByTestId('lane-count-loading').textContent()).toBe('…');
    release();
    await cardIn(todo, 'Alpha').waitFor();
    await page.unroute('**/columns/*/query');
    expect(await todo.getByTestId('card-skeleton').count()).toBe(0);
    expect(await todo.getByTestId('lane-count').textContent()).toBe('2');

    // Card detail in words: the sprint by its title, points, no internal keys.
    await cardIn(todo, 'Alpha').getByRole('button', { name: 'Alpha', exact: true }).click();
    const detail = page.getByRole('dialog', { name: 'Alpha' });
    const meta = await detail.getByTestId('detail-metadata').getByRole('listitem').allTextContents();
    expect(meta).toEqual(expect.arrayContaining(['Sprint: Sprint 5', 'Points: 3']));
    expect(meta.join(' ')).not.toMatch(/app\.|cf\./);
    await detail.getByRole('button', { name: 'Edit' }).click();
    await detail.getByLabel('Points', { exact: true }).waitFor();
    expect(await detail.getByText('(app.points)').count()).toBe(0);
    await detail.getByRole('button', { name: 'Close dialog' }).click();

    // A filter error does not move the toolbar.
    const searchBox = page.getByLabel('Search', { exact: true });
    const before = (await searchBox.boundingBox())!;
    await page.getByLabel('Filter', { exact: true }).fill('stauts = 1');
    await page.getByRole('button', { name: 'Apply' }).click();
    const filterError = page.locator('#filter-error');
    await filterError.waitFor();
    expect(await filterError.locator('p').textContent()).not.toContain('Filter:');
    const after = (await searchBox.boundingBox())!;
    expect([after.x, after.y]).toEqual([before.x, before.y]);
    await page.getByRole('button', { name: 'Clear' }).click();
    await filterError.waitFor({ state: 'detached' });

    // A search that matches nothing says so and offers the way back.
    await searchBox.fill('zebra');
    await searchBox.press('Enter');
    const empty = page.getByTestId('empty-filter');
    await empty.waitFor();
    expect(await empty.textContent()).toContain('No card on this board matches the filter.');
    await empty.getByRole('button', { name: 'Show all cards' }).click();
    await cardIn(todo, 'Alpha').waitFor();
    expect(await page.getByLabel('Search', { exact: true }).inputValue()).toBe('');
    await empty.waitFor({ state: 'detached' });

    // The drop preview stays in sight while a card is dragged over a lane: it follows the card.
    const handle = cardIn(todo, 'Beta').getByRole('button', { name: 'Drag “Beta”' });
    const hb = (await handle.boundingBox())!;
    const tb = (await lane(page, 'Done').boundingBox())!;
    await page.mouse.move(hb.x + hb.width / 2, hb.y + hb.height / 2);
    await page.mouse.down();
    await page.mouse.move(hb.x + 20, hb.y + 10, { steps: 4 });
    await page.mouse.move(tb.x + tb.width / 2, tb.y + 40, { steps: 10 });
    const overlayPreview = page.getByTestId('overlay-preview');
    await overlayPreview.filter({ hasText: 'Moving to Done sets status to “done”' }).waitFor();
    await page.mouse.up();
    await cardIn(lane(page, 'Done'), 'Beta').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    expect(lea.errors).toEqual([]);
    await lea.ctx.close();
  });

  it('lets the owner invite a teammate by name in the members panel as viewer, make them an editor and remove them; the teammate sees it', async () => {
    const olga = await pageOf('olga', 1440, 600_000);
    const tom = await pageOf('tom', 1440, 600_000);
    const api = apiAs(server.base, olga.token);
    const board = (await api('POST', '/api/v1/boards', { name: 'Olga board', board_type: 'private' })).body;
    await api('POST', `/api/v1/boards/${board.id}/tasks`, { title: 'Plan', column_id: board.columns[0].id });
    await olga.page.goto(`${server.base}/boards/${board.id}`);
    await olga.page.getByRole('button', { name: 'Members…' }).click();
    const panel = olga.page.getByRole('dialog', { name: 'Members of Olga board' });
    await panel.getByRole('listitem', { name: 'olga' }).getByText('owner').waitFor();
    await panel.getByLabel('User name').fill('nobody-here');
    await panel.getByRole('button', { name: 'Invite' }).click();
    expect(await panel.getByRole('alert').textContent()).toBe('No user is called “nobody-here”');
    await panel.getByLabel('User name').fill('tom');
    await panel.getByRole('form', { name: 'Invite a member' }).getByRole('combobox', { name: /^Permission/ }).selectOption('r');
    await panel.getByRole('button', { name: 'Invite' }).click();
    const tomRow = panel.getByRole('listitem', { name: 'tom' });
    await poll(() => tomRow.getByLabel('Permission of tom').inputValue()).toBe('r');
    expect((await api('GET', `/api/v1/boards/${board.id}/members`)).body.map((m: { username: string; permission: string }) => `${m.username}:${m.permission}`)).toEqual(['olga:owner', 'tom:r']);
    expect(await seriousViolations(olga.page)).toEqual([]);

    // tom sees the board among those shared with him, read only.
    await tom.page.reload();
    await tom.page.getByRole('link', { name: 'Olga board' }).click();
    await cardIn(lane(tom.page, 'To Do'), 'Plan').waitFor();
    expect(await tom.page.getByRole('button', { name: 'Drag “Plan”' }).count()).toBe(0);
    expect(await tom.page.getByRole('button', { name: 'Members…' }).count()).toBe(0);

    // An editor now: after a reload he gets the drag handle.
    await tomRow.getByLabel('Permission of tom').selectOption('rw');
    await poll(async () => (await api('GET', `/api/v1/boards/${board.id}/members`)).body[1].permission).toBe('rw');
    await tom.page.reload();
    await tom.page.getByRole('button', { name: 'Drag “Plan”' }).waitFor();

    // Removed: the board is gone for him.
    await tomRow.getByRole('button', { name: 'Remove tom' }).click();
    await tomRow.waitFor({ state: 'detached' });
    expect((await apiAs(server.base, tom.token)('GET', `/api/v1/boards/${board.id}`)).status).toBe(404);
    expect(olga.errors).toEqual([]);
    expect(tom.errors).toEqual([]);
    await olga.ctx.close();
    await tom.ctx.close();
  });
});
