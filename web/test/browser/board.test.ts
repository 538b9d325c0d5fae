import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { ARTIFACTS, browser, cardIn, hasChromium, lane, newPage, PASSWORD, poll, seriousViolations, server, STEP, useBrowserSuite, watchErrors } from './harness.js';
import { apiAs, userToken, WEB_DIST } from './server.js';

/**
 * The web board in a real browser: Debian's Chromium driven by playwright-core against
 * the built all-in-one server on a free port with a temp data dir. Screenshots and the render
 * figures go to web/test-artifacts/ (gitignored).
 */
useBrowserSuite();

const session = async (page: Page) => JSON.parse((await page.evaluate('localStorage.getItem("board.session")')) as string) as { accessToken: string };

async function login(page: Page, username: string, register: boolean) {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: register ? 'Register' : 'Log in' }).click();
  await page.getByRole('heading', { name: 'Your boards' }).waitFor();
}

async function addCard(page: Page, laneName: string, title: string) {
  const l = lane(page, laneName);
  const input = l.getByRole('textbox', { name: /Title of a new card/ });
  if (!(await input.isVisible())) await l.getByRole('button', { name: '+ Add a card' }).click();
  await input.fill(title);
  await input.press('Enter');
  await cardIn(l, title).waitFor();
}

/** Drags `card` by its handle with the mouse onto `target`, checking the dry-run preview before dropping. */
async function dragCard(page: Page, card: Locator, target: Locator, expectPreview: RegExp) {
  const hb = (await card.getByRole('button', { name: /^Drag/ }).boundingBox())!;
  const tb = (await target.boundingBox())!;
  await page.mouse.move(hb.x + hb.width / 2, hb.y + hb.height / 2);
  await page.mouse.down();
  await page.mouse.move(hb.x + hb.width / 2 + 12, hb.y + hb.height / 2 + 4, { steps: 4 });
  await page.mouse.move(tb.x + tb.width / 2, tb.y + Math.min(120, tb.height / 2), { steps: 12 });
  await target.getByRole('status').filter({ hasText: expectPreview }).waitFor();
  // Mid-drag the card stays visible: its copy in the drag overlay is under the pointer, on top
  // (no lane clips it).
  const px = tb.x + tb.width / 2;
  const py = tb.y + Math.min(120, tb.height / 2);
  const ob = (await page.getByTestId('drag-overlay').boundingBox())!;
  expect(px).toBeGreaterThanOrEqual(ob.x);
  expect(px).toBeLessThanOrEqual(ob.x + ob.width);
  expect(py).toBeGreaterThanOrEqual(ob.y);
  expect(py).toBeLessThanOrEqual(ob.y + ob.height);
  expect(await page.evaluate(([x, y]) => !!(globalThis as unknown as { document: Document }).document.elementFromPoint(x!, y!)?.closest('[data-testid="drag-overlay"]'), [px, py])).toBe(true);
  await page.mouse.up();
}

/** The DOM's document inside `page.evaluate` callbacks (the tests are type-checked without the DOM lib). */
type Document = { elementFromPoint(x: number, y: number): { closest(s: string): { textContent: string | null } | null } | null };

/**
 * Drags by `handle` with the mouse onto `target` (a point in its upper part), checking mid-drag
 * that the dragged card's copy in the drag overlay is under the pointer, then drops.
 */
async function dragOnto(page: Page, handle: Locator, target: Locator) {
  const hb = (await handle.boundingBox())!;
  const tb = (await target.boundingBox())!;
  await page.mouse.move(hb.x + hb.width / 2, hb.y + hb.height / 2);
  await page.mouse.down();
  await page.mouse.move(hb.x + hb.width / 2 + 12, hb.y + hb.height / 2 + 4, { steps: 4 });
  const px = tb.x + tb.width / 2;
  const py = tb.y + Math.min(60, tb.height / 2);
  await page.mouse.move(px, py, { steps: 10 });
  const ob = (await page.getByTestId('drag-overlay').boundingBox())!;
  expect(px >= ob.x && px <= ob.x + ob.width && py >= ob.y && py <= ob.y + ob.height).toBe(true);
  await page.mouse.up();
}

/** Every item of `menu` is visible where it is drawn: inside the viewport and not covered or clipped. */
async function expectMenuInView(page: Page, menu: Locator) {
  const view = page.viewportSize()!;
  for (const item of await menu.getByRole('menuitem').all()) {
    const b = (await item.boundingBox())!;
    expect(b.y).toBeGreaterThanOrEqual(0);
    expect(b.y + b.height).toBeLessThanOrEqual(view.height);
    expect(b.x).toBeGreaterThanOrEqual(0);
    expect(b.x + b.width).toBeLessThanOrEqual(view.width);
    const hit = await page.evaluate(([x, y]) => (globalThis as unknown as { document: Document }).document.elementFromPoint(x!, y!)?.closest('[role="menuitem"]')?.textContent ?? null, [
      b.x + b.width / 2,
      b.y + b.height / 2,
    ]);
    expect(hit).toBe(await item.textContent());
  }
}

describe.skipIf(!hasChromium)('web board in Chromium', () => {
  it('walks a board from register to close: cards, drag, keyboard, 409, filter, close sprint, read-only viewer', async () => {
    const ctxA = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    // The owner's page refreshes only on its own actions (no periodic refresh, no event stream even
    // where the gateway has one), so the 409 below is deterministic. The reader's page is live.
    await ctxA.addInitScript('localStorage.setItem("board.pollMs", "600000")');
    await ctxA.route('**/api/v1/events/stream**', (route) =>
      route.fulfill({ status: 404, contentType: 'application/json', body: '{"code":"NOT_FOUND","message":"no stream for this page"}' }),
    );
    const page = await newPage(ctxA);
    const errors = watchErrors(page);

    // Register (the login page is what an anonymous visitor sees at /).
    await page.goto(server.base + '/');
    await page.getByRole('heading', { name: 'Log in or register' }).waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'login.png') });
    await login(page, 'ada', true);
    const api = apiAs(server.base, (await session(page)).accessToken);

    // Create a shared board; it opens with the default columns.
    await page.getByLabel('Name').fill('Release board');
    await page.getByLabel('Visibility').selectOption('shared');
    await page.getByRole('button', { name: 'Create board' }).click();
    await page.getByRole('heading', { name: 'Release board', level: 1 }).waitFor();
    const boardId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    for (const name of ['To Do', 'Doing', 'Done']) await lane(page, name).waitFor();

    // Start a sprint, then create cards in To Do (they join the sprint through the Draft column_id).
    await page.getByLabel('New sprint').fill('Sprint 1');
    await page.getByRole('button', { name: 'Start sprint' }).click();
    await page.getByRole('button', { name: 'Close sprint…' }).waitFor();
    for (const t of ['Write docs', 'Fix login bug', 'Ship it', 'Polish UI']) await addCard(page, 'To Do', t);
    expect(await lane(page, 'To Do').getByTestId('lane-count').textContent()).toBe('4');
    const todo = lane(page, 'To Do');
    const ids: Record<string, string> = {};
    for (const t of ['Write docs', 'Fix login bug', 'Ship it', 'Polish UI']) ids[t] = (await cardIn(todo, t).getAttribute('data-card-id'))!;
    const sprintTask = await api('POST', '/api/v1/tasks/query', { query: "app.type = 'sprint'" });
    const sprintId = sprintTask.body.data[0].id as string;
    expect((await api('GET', `/api/v1/tasks/${ids['Write docs']}`)).body.metadata['app.sprint']).toBe(sprintId);

    // Drag and drop with the mouse, with the dry-run preview on hover; the API then shows the new status.
    await dragCard(page, cardIn(todo, 'Write docs'), lane(page, 'Doing'), /sets status to “doing”/);
    await cardIn(lane(page, 'Doing'), 'Write docs').waitFor();
    await poll(async () => (await api('GET', `/api/v1/tasks/${ids['Write docs']}`)).body.status).toBe('doing');
    await page.getByRole('status').filter({ hasText: 'Moved “Write docs” from To Do to Doing' }).first().waitFor();
    await page.locator('.lanes[aria-busy="false"]').waitFor();

    // Keyboard move, dnd-kit style: focus the handle, space, arrow right twice (Done), space.
    await cardIn(todo, 'Fix login bug').getByRole('button', { name: /^Drag/ }).focus();
    const handle = cardIn(todo, 'Fix login bug').getByRole('button', { name: /^Drag/ });
    await page.keyboard.press('Space');
    await poll(() => handle.getAttribute('aria-pressed')).toBe('true'); // picked up
    await page.waitForTimeout(100); // dnd-kit listens for the arrow keys from the next task on
    await page.keyboard.press('ArrowRight');
    await lane(page, 'Doing').getByRole('status').filter({ hasText: /Moving to Doing sets status to “doing”/ }).waitFor();
    await page.keyboard.press('ArrowRight');
    await lane(page, 'Done').getByRole('status').filter({ hasText: /Moving to Done sets status to “done”/ }).waitFor();
    await page.keyboard.press('Space');
    await cardIn(lane(page, 'Done'), 'Fix login bug').waitFor();
    await poll(async () => (await api('GET', `/api/v1/tasks/${ids['Fix login bug']}`)).body.status).toBe('done');
    await page.getByRole('status').filter({ hasText: 'Moved “Fix login bug” from To Do to Done' }).first().waitFor();
    await page.locator('.lanes[aria-busy="false"]').waitFor();

    // Keyboard move through the menu: focus the card, M, the first item previews (dry run), Enter moves.
    await cardIn(todo, 'Polish UI').getByRole('button', { name: 'Polish UI', exact: true }).focus();
    await page.keyboard.press('m');
    const menu = page.getByRole('menu', { name: 'Move “Polish UI” to' });
    await menu.getByRole('status').filter({ hasText: /Moving to Doing sets status to “doing”/ }).waitFor();
    await page.keyboard.press('ArrowDown'); // Done
    await menu.getByRole('status').filter({ hasText: /Moving to Done sets status to “done”/ }).waitFor();
    await page.keyboard.press('Enter');
    await cardIn(lane(page, 'Done'), 'Polish UI').waitFor();
    await poll(async () => (await api('GET', `/api/v1/tasks/${ids['Polish UI']}`)).body.status).toBe('done');

    // 409: the card changes behind the page's back; the move is rolled back, the page says why and reloads.
    await page.getByRole('status').filter({ hasText: 'Moved “Polish UI” from To Do to Done' }).first().waitFor();
    await page.locator('.lanes[aria-busy="false"]').waitFor(); // the page's own reload after that move is over
    expect((await api('PATCH', `/api/v1/tasks/${ids['Ship it']}`, { status: 'doing' })).status).toBe(200);
    await cardIn(todo, 'Ship it').waitFor(); // the page still shows the stale card in To Do
    await cardIn(todo, 'Ship it').getByRole('button', { name: 'Move “Ship it” (M)' }).click();
    await expectMenuInView(page, page.getByRole('menu', { name: 'Move “Ship it” to' })); // the last card of a short lane
    await page.getByRole('menu', { name: 'Move “Ship it” to' }).getByRole('menuitem', { name: 'Done' }).click();
    const alert = page.getByRole('alert').filter({ hasText: '“Ship it” was not moved' });
    await alert.waitFor();
    expect(await alert.textContent()).toContain('status is now “doing”');
    await cardIn(lane(page, 'Doing'), 'Ship it').waitFor(); // reloaded: where the card really is
    expect(await cardIn(lane(page, 'Done'), 'Ship it').count()).toBe(0);
    expect((await api('GET', `/api/v1/tasks/${ids['Ship it']}`)).body.status).toBe('doing');

    // A bad filter shows the server's message at its position; the cards stay.
    const bad = "status = 'doing' AND";
    const server400 = await api('POST', `/api/v1/boards/${boardId}/columns/col-to-do/query`, { filter: bad });
    expect(server400.status).toBe(400);
    await page.getByLabel('Filter', { exact: true }).fill(bad);
    await page.getByRole('button', { name: 'Apply' }).click();
    const filterAlert = page.locator('#filter-error');
    await filterAlert.waitFor();
    // One sentence: the position said once (the caret shows it too), no part label ("Filter: ").
    const alertText = (await filterAlert.locator('p').textContent())!;
    expect(alertText.startsWith(`At position ${server400.body.details.position}: `)).toBe(true);
    expect(alertText).not.toContain('Filter:');
    expect(alertText.match(/position/g)).toHaveLength(1);
    expect(await page.getByTestId('filter-caret').textContent()).toBe(`${bad}\n${' '.repeat(server400.body.details.position)}^`);
    expect(await page.getByLabel('Filter', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await page.getByRole('button', { name: 'Clear' }).click();
    await filterAlert.waitFor({ state: 'detached' });

    // While typing, the filter is checked (debounced) and the fault underlined with the nearest name.
    const typed = 'app.sprint = currentSprint()';
    await page.getByLabel('Filter', { exact: true }).fill(typed);
    await poll(() => page.locator('.query-fault').textContent()).toBe('currentSprint');
    expect(await page.locator('#filter-check').textContent()).toContain('did you mean activeSprint()');
    expect(await page.getByLabel('Filter', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    // a valid text clears it and may be saved as a view (shared with the board's readers)
    await page.getByLabel('Filter', { exact: true }).fill('app.sprint = activeSprint() AND assignee = me()');
    await page.locator('#filter-check').waitFor({ state: 'detached' });
    const answer = (d: { type(): string; accept(text?: string): Promise<void> }) => void d.accept(d.type() === 'prompt' ? 'Sprint, mine' : undefined);
    page.on('dialog', answer); // the name, then "share it?"
    const saved = page.waitForResponse((r) => r.url().endsWith('/api/v1/views') && r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Save view' }).click();
    expect((await saved).status()).toBe(201);
    page.off('dialog', answer);
    await page.getByRole('status').filter({ hasText: 'Saved "Sprint, mine"' }).waitFor();
    const views = await api('GET', '/api/v1/views');
    expect(views.body.data).toMatchObject([{ name: 'Sprint, mine', query: 'app.sprint = activeSprint() AND assignee = me()', board_id: boardId, shared: true }]);
    await page.getByRole('combobox', { name: 'Saved views' }).waitFor();
    await page.getByLabel('Filter', { exact: true }).fill('');

    // The sprint switcher: a card outside the sprint shows only with "All cards (no sprint filter)".
    expect((await api('POST', `/api/v1/boards/${boardId}/tasks`, { title: 'Backlog idea', status: 'todo' })).status).toBe(201);
    const sprintSelect = page.getByRole('combobox', { name: 'Sprint' });
    await sprintSelect.selectOption('none');
    await cardIn(todo, 'Backlog idea').waitFor();
    // The sprint task is a task of the board's scope in To Do, but never a card.
    expect(await page.locator(`[data-card-id="${sprintId}"]`).count()).toBe(0);
    expect(await cardIn(todo, 'Sprint 1').count()).toBe(0);
    await sprintSelect.selectOption('active');
    await cardIn(todo, 'Backlog idea').waitFor({ state: 'detached' });
    await sprintSelect.selectOption(sprintId); // the sprint by id: the same cards as "active"
    await cardIn(lane(page, 'Doing'), 'Ship it').waitFor();
    expect(await cardIn(todo, 'Backlog idea').count()).toBe(0);
    await sprintSelect.selectOption('active');

    // Card detail: delete takes two steps; the card is gone from the page and from the API.
    await sprintSelect.selectOption('none');
    const doomedId = (await cardIn(todo, 'Backlog idea').getAttribute('data-card-id'))!;
    await cardIn(todo, 'Backlog idea').getByRole('button', { name: 'Backlog idea', exact: true }).click();
    const doomed = page.getByRole('dialog', { name: 'Backlog idea' });
    await doomed.getByRole('button', { name: 'Delete' }).click();
    await doomed.getByRole('button', { name: 'Confirm delete' }).click();
    await doomed.waitFor({ state: 'detached' });
    await cardIn(todo, 'Backlog idea').waitFor({ state: 'detached' });
    expect((await api('GET', `/api/v1/tasks/${doomedId}`)).status).toBe(404);
    await sprintSelect.selectOption('active');
    await page.locator('.lanes[aria-busy="false"]').waitFor();

    // Card detail: markdown is rendered and sanitized (no script from a card runs); points, kickoff
    // and deadline via edit; linked items listed with their status.
    expect((await api('PATCH', `/api/v1/tasks/${ids['Polish UI']}`, { derivedFromId: ids['Write docs'] })).status).toBe(200);
    await cardIn(lane(page, 'Done'), 'Polish UI').getByRole('button', { name: 'Polish UI', exact: true }).click();
    const detail = page.getByRole('dialog', { name: 'Polish UI' });
    await detail.getByRole('button', { name: 'Edit' }).click();
    await detail
      .getByLabel('Description (markdown)')
      .fill('**Bold** move <img src="x" onerror="window.__xss=1"><script>window.__xss=2</script> [click](javascript:window.__xss=3)');
    await detail.getByLabel('Points', { exact: true }).fill('3');
    await detail.getByLabel('Kickoff').fill('2026-11-23');
    await detail.getByLabel('Deadline').fill('2026-12-04');
    // Status is chosen from the values the board's columns set.
    expect(await detail.getByLabel('Status').locator('option').allTextContents()).toEqual(['todo', 'doing', 'done']);
    await detail.getByRole('button', { name: 'Save' }).click();
    const description = detail.getByTestId('description');
    await description.waitFor();
    expect(await detail.getByTestId('detail-deadline').textContent()).toBe('2026-12-04');
    expect(await detail.getByTestId('detail-kickoff').textContent()).toBe('2026-11-23');
    expect((await api('GET', `/api/v1/tasks/${ids['Polish UI']}`)).body.deadline).toBe('2026-12-04T00:00:00.000Z');
    expect(await detail.getByTestId('linked-items').textContent()).toBe('derived from Write docs doing');
    expect(await description.locator('strong').textContent()).toBe('Bold');
    expect(await description.locator('script').count()).toBe(0);
    expect(await description.locator('img').count()).toBe(0);
    expect(await description.textContent()).toContain('<img src="x" onerror="window.__xss=1">'); // raw HTML is shown as text
    expect(await description.locator('a[href^="javascript"]').count()).toBe(0);
    await detail.getByLabel('Add a note (markdown)').fill('Checked by _QA_');
    await detail.getByRole('button', { name: 'Add note' }).click();
    await detail.getByText('Notes (1)').waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'card-detail.png') });
    expect(await page.evaluate('window.__xss')).toBeUndefined();
    await detail.getByRole('button', { name: 'Close dialog' }).click();
    await cardIn(lane(page, 'Done'), 'Polish UI').getByText('3 pts').waitFor();

    // The column editor: a WIP limit on Doing, with the preview of the actions of its query; saved by PUT.
    await page.getByRole('button', { name: 'Edit columns' }).click();
    const editor = page.getByRole('dialog', { name: 'Edit columns' });
    const doingRow = editor.getByRole('listitem', { name: 'Column 2: Doing' });
    await doingRow.getByLabel('WIP limit').fill('1');
    await doingRow.getByRole('button', { name: 'Preview actions' }).click();
    await doingRow.getByRole('status').filter({ hasText: 'enter: set status "doing"' }).waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'column-editor.png') });
    await editor.getByRole('button', { name: 'Save columns' }).click();
    await editor.waitFor({ state: 'detached' });
    await lane(page, 'Doing').getByTestId('lane-wip').filter({ hasText: 'over WIP limit 1' }).waitFor();
    expect((await api('GET', `/api/v1/boards/${boardId}`)).body.columns[1]).toMatchObject({ id: 'col-doing', wip_limit: 1 });

    // Share the board read-only with a second user (set-up through the API, as an admin would).
    const bob = await userToken(server.base, 'bob', PASSWORD);
    const group = await api('POST', '/api/v1/groups', { name: 'Readers' });
    expect((await api('POST', `/api/v1/groups/${group.body.id}/members`, { user_id: bob.userId })).status).toBe(200);
    expect((await api('POST', `/api/v1/boards/${boardId}/share`, { group_id: group.body.id, permission: 'r' })).status).toBe(200);

    const ctxB = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const pageB = await newPage(ctxB);
    const errorsB = watchErrors(pageB);
    await pageB.goto(server.base + '/');
    await login(pageB, 'bob', false);
    await pageB.getByRole('link', { name: 'Release board' }).waitFor();
    await pageB.screenshot({ path: join(ARTIFACTS, 'boards-reader.png') });
    await pageB.getByRole('link', { name: 'Release board' }).click();
    await cardIn(lane(pageB, 'Doing'), 'Write docs').waitFor();
    await pageB.getByText('read only').first().waitFor();
    // A reader has no drag handle, no move menu and no card form; M explains why.
    expect(await pageB.getByRole('button', { name: /^Drag/ }).count()).toBe(0);
    expect(await pageB.getByRole('button', { name: /^Move “/ }).count()).toBe(0);
    expect(await pageB.getByRole('button', { name: '+ Add a card' }).count()).toBe(0);
    await cardIn(lane(pageB, 'Doing'), 'Write docs').getByRole('button', { name: 'Write docs', exact: true }).focus();
    await pageB.keyboard.press('m');
    await pageB.getByRole('alert').filter({ hasText: 'read-only' }).waitFor();
    // The server agrees: a move by the reader is 403.
    const bobApi = apiAs(server.base, bob.token);
    expect((await bobApi('POST', `/api/v1/boards/${boardId}/tasks/${ids['Write docs']}/move`, { from_column_id: 'col-doing', to_column_id: 'col-done' })).status).toBe(403);

    // The owner moves a card; the reader's page shows it without a reload (periodic refresh or stream).
    await cardIn(lane(page, 'Doing'), 'Write docs').getByRole('button', { name: 'Move “Write docs” (M)' }).click();
    await page.getByRole('menu', { name: 'Move “Write docs” to' }).getByRole('menuitem', { name: 'Done' }).click();
    await cardIn(lane(page, 'Done'), 'Write docs').waitFor();
    await cardIn(lane(pageB, 'Done'), 'Write docs').waitFor({ timeout: 20_000 });

    // Pick an assignee by name: the editor lists the board's people (owner and group members);
    // the card then shows the assignee's initials.
    await cardIn(lane(page, 'Doing'), 'Ship it').getByRole('button', { name: 'Ship it', exact: true }).click();
    const shipDetail = page.getByRole('dialog', { name: 'Ship it' });
    await shipDetail.getByRole('button', { name: 'Edit' }).click();
    const assigneeSelect = shipDetail.getByLabel('Assignee');
    await assigneeSelect.locator('option', { hasText: 'bob' }).waitFor({ state: 'attached' });
    expect(await assigneeSelect.locator('option').allTextContents()).toEqual(['Nobody', 'ada', 'bob']);
    await assigneeSelect.selectOption({ label: 'bob' });
    await shipDetail.getByRole('button', { name: 'Save' }).click();
    await shipDetail.getByTestId('detail-assignee').filter({ hasText: 'bob' }).waitFor();
    expect((await api('GET', `/api/v1/tasks/${ids['Ship it']}`)).body.assignee).toBe(bob.userId);
    await shipDetail.getByRole('button', { name: 'Close dialog' }).click();
    expect(await cardIn(lane(page, 'Doing'), 'Ship it').getByLabel('Assigned to bob').textContent()).toBe('BO');
    // "Assigned to me", one click on bob's page: only bob's card is left.
    await cardIn(lane(pageB, 'Doing'), 'Ship it').getByLabel('Assigned to bob').waitFor({ timeout: 20_000 });
    await pageB.getByRole('button', { name: 'Assigned to me' }).click();
    await lane(pageB, 'Done').getByTestId('lane-count').filter({ hasText: /^0$/ }).waitFor();
    expect(await cardIn(lane(pageB, 'Doing'), 'Ship it').count()).toBe(1);
    expect(await pageB.getByRole('button', { name: 'Assigned to me' }).getAttribute('aria-pressed')).toBe('true');
    await pageB.getByRole('button', { name: 'Assigned to me' }).click();
    await cardIn(lane(pageB, 'Done'), 'Write docs').waitFor();

    // A worker claims a card under a lease: once the page reads the column again (here a reload;
    // on the event stream at once), the card shows a `claimed` badge with holder and expiry.
    const claimed = await api('POST', `/api/v1/boards/${boardId}/columns/col-doing/claim`, { query: "title = 'Ship it'", lease_seconds: 600 });
    expect([claimed.status, claimed.body.task.id]).toEqual([200, ids['Ship it']]);
    await page.reload();
    const badge = cardIn(lane(page, 'Doing'), 'Ship it').getByTestId('lease');
    await badge.waitFor();
    await poll(() => badge.getAttribute('aria-label')).toMatch(/^Claimed by ada, \d+ min left$/);
    expect(await cardIn(lane(page, 'Done'), 'Write docs').getByTestId('lease').count()).toBe(0);

    // Screenshots of the owner's board at 1440 px and 360 px (lanes scroll sideways at 360 px).
    await page.screenshot({ path: join(ARTIFACTS, 'walk-board-1440.png'), fullPage: true });
    await page.setViewportSize({ width: 360, height: 740 });
    await page.waitForTimeout(200);
    const overflow = (await page.evaluate(
      '(() => { const l = document.querySelector(".lanes"); return [l.scrollWidth, l.clientWidth, document.documentElement.scrollWidth]; })()',
    )) as number[];
    expect(overflow[0]).toBeGreaterThan(overflow[1]!); // lanes scroll horizontally
    expect(overflow[2]).toBeLessThanOrEqual(360); // the page itself does not
    await page.screenshot({ path: join(ARTIFACTS, 'walk-board-360.png'), fullPage: true });
    await page.setViewportSize({ width: 1440, height: 900 });

    // Close the sprint through the dialog: unfinished members listed, rolled to the backlog, velocity shown.
    await page.getByRole('button', { name: 'Close sprint…' }).click();
    const closeDialog = page.getByRole('dialog', { name: 'Close sprint “Sprint 1”' });
    await closeDialog.getByText('Unfinished cards (1)').waitFor();
    await closeDialog.getByText('Ship it').waitFor();
    await closeDialog.getByLabel('Roll unfinished cards over to').selectOption('backlog');
    await closeDialog.getByRole('button', { name: 'Close sprint' }).click();
    await closeDialog.getByTestId('velocity').waitFor();
    expect(await closeDialog.getByTestId('velocity').textContent()).toBe('3');
    expect(await closeDialog.getByTestId('rolled-over').textContent()).toBe('1');
    await page.screenshot({ path: join(ARTIFACTS, 'close-sprint.png') });
    await closeDialog.getByRole('button', { name: 'Done', exact: true }).click();
    // The notice that the sprint started ends with the sprint; the done sprint is no card either.
    expect(await page.getByText('Sprint “Sprint 1” started.').count()).toBe(0);
    await page.getByRole('combobox', { name: 'Sprint' }).selectOption('none');
    await cardIn(lane(page, 'Done'), 'Polish UI').waitFor();
    expect(await page.locator(`[data-card-id="${sprintId}"]`).count()).toBe(0);
    expect((await api('GET', `/api/v1/tasks/${sprintId}`)).body.status).toBe('done');
    expect((await api('GET', `/api/v1/boards/${boardId}`)).body.activeSprintId).toBeUndefined();
    expect((await api('GET', `/api/v1/tasks/${ids['Ship it']}`)).body.metadata['app.sprint']).toBeUndefined();

    // Log out: back to the login page, and the session is gone.
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('heading', { name: 'Log in or register' }).waitFor();
    expect(await page.evaluate('localStorage.getItem("board.session")')).toBeNull();

    expect(errors).toEqual([]);
    expect(errorsB).toEqual([]);
    await ctxA.close();
    await ctxB.close();
  });

  it('plans a sprint from the backlog (mouse and keyboard), starts it, burns it down, closes it and charts its velocity; no serious axe violation', async () => {
    // bypassCSP only so that axe-core can be injected as a script tag; the page itself runs under its CSP everywhere else.
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
    await ctx.addInitScript('localStorage.setItem("board.pollMs", "600000")');
    const page = await newPage(ctx);
    const errors = watchErrors(page);
    await page.goto(server.base + '/login');
    await login(page, 'pia', true);
    const api = apiAs(server.base, (await session(page)).accessToken);
    const board = (await api('POST', '/api/v1/boards', { name: 'Planning board', board_type: 'private' })).body;
    const ids: Record<string, string> = {};
    for (const t of ['Alpha', 'Beta', 'Gamma', 'Delta', 'Epsilon']) {
      ids[t] = (await api('POST', `/api/v1/boards/${board.id}/tasks`, { title: t, column_id: board.columns[0].id })).body.id;
    }

    // The planning view: every card in the backlog, no capacity hint yet.
    await page.goto(`${server.base}/boards/${board.id}`);
    await page.getByRole('link', { name: 'Backlog and planning' }).click();
    await page.getByRole('heading', { name: 'Planning: Planning board' }).waitFor();
    const backlog = page.getByRole('region', { name: 'Backlog' });
    await cardIn(backlog, 'Epsilon').waitFor();
    expect(await page.getByTestId('capacity').textContent()).toBe('Capacity hint: no closed sprint yet.');

    // Points edited inline (a conditional metadata write each).
    for (const [t, pts] of [['Alpha', 3], ['Beta', 2], ['Gamma', 5], ['Delta', 1]] as const) {
      await page.getByLabel(`Points of “${t}”`).fill(String(pts));
      await page.getByLabel(`Points of “${t}”`).press('Enter');
      await page.getByRole('status').filter({ hasText: `“${t}”: ${pts} points.` }).waitFor();
    }
    expect((await api('GET', `/api/v1/tasks/${ids.Gamma}`)).body.metadata['app.points']).toBe(5);

    // Create a sprint with goal, kickoff and deadline.
    const today = new Date().toISOString().slice(0, 10);
    const inAWeek = new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 10);
    await page.getByLabel('Sprint title').fill('Sprint A');
    await page.getByLabel('Goal').fill('Ship the planning view');
    await page.getByLabel('Kickoff').fill(today);
    await page.getByLabel('Deadline').fill(inAWeek);
    await page.getByRole('button', { name: 'Create sprint' }).click();
    const sprintA = page.getByRole('region', { name: 'Sprint “Sprint A”' });
    await sprintA.waitFor();
    const sprintId = (await sprintA.getAttribute('data-group-id'))!;
    const created = (await api('GET', `/api/v1/tasks/${sprintId}`)).body;
    expect(created.metadata).toMatchObject({ 'app.type': 'sprint', 'app.goal': 'Ship the planning view' });
    expect(created.deadline.slice(0, 10)).toBe(inAWeek);
    expect(await seriousViolations(page)).toEqual([]);

    // Plan three cards by mouse and one by keyboard; one more goes in and back out.
    for (const t of ['Alpha', 'Beta', 'Gamma']) {
      await dragOnto(page, cardIn(backlog, t).getByRole('button', { name: `Drag “${t}”` }), sprintA);
      await cardIn(sprintA, t).waitFor();
    }
    const deltaHandle = cardIn(backlog, 'Delta').getByRole('button', { name: 'Drag “Delta”' });
    await deltaHandle.focus();
    await page.keyboard.press('Space');
    await poll(() => deltaHandle.getAttribute('aria-pressed')).toBe('true');
    await page.waitForTimeout(100);
    await page.keyboard.press('ArrowDown');
    await page.locator(`.plan-group.over[data-group-id="${sprintId}"]`).waitFor(); // the sprint is the drop target now
    await page.keyboard.press('Space');
    await cardIn(sprintA, 'Delta').waitFor();
    await dragOnto(page, cardIn(backlog, 'Epsilon').getByRole('button', { name: 'Drag “Epsilon”' }), sprintA);
    await cardIn(sprintA, 'Epsilon').waitFor();
    await dragOnto(page, cardIn(sprintA, 'Epsilon').getByRole('button', { name: 'Drag “Epsilon”' }), backlog);
    await cardIn(backlog, 'Epsilon').waitFor();
    for (const t of ['Alpha', 'Beta', 'Gamma', 'Delta']) expect((await api('GET', `/api/v1/tasks/${ids[t]}`)).body.metadata['app.sprint']).toBe(sprintId);
    expect((await api('GET', `/api/v1/tasks/${ids.Epsilon}`)).body.metadata['app.sprint']).toBeUndefined();
    expect(await sprintA.getByTestId('committed').textContent()).toBe('11 points in 4 cards');

    // A change behind the page's back: the conditional write gets 412, the card is re-read and the page says so.
    expect((await api('PATCH', `/api/v1/tasks/${ids.Beta}/metadata`, { key: 'app.points', value: 8 })).status).toBe(200);
    await page.getByLabel('Points of “Beta”').fill('4');
    await page.getByLabel('Points of “Beta”').press('Enter');
    await page.getByRole('alert').filter({ hasText: '“Beta” changed elsewhere' }).waitFor();
    await poll(() => page.getByLabel('Points of “Beta”').inputValue()).toBe('8');
    expect((await api('GET', `/api/v1/tasks/${ids.Beta}`)).body.metadata['app.points']).toBe(8);
    expect(await sprintA.getByTestId('committed').textContent()).toBe('17 points in 4 cards');
    await page.screenshot({ path: join(ARTIFACTS, 'planning-1280.png'), fullPage: true });

    // Start it.
    await sprintA.getByRole('button', { name: 'Start “Sprint A”' }).click();
    await page.getByRole('status').filter({ hasText: 'Sprint “Sprint A” started.' }).waitFor();
    expect((await api('GET', `/api/v1/boards/${board.id}`)).body.activeSprintId).toBe(sprintId);

    // On the board: the sprint's cards, never the sprint itself; move one to Done.
    await page.getByRole('link', { name: 'Back to the board' }).click();
    const todo = lane(page, 'To Do');
    await cardIn(todo, 'Alpha').waitFor();
    expect(await page.locator(`[data-card-id="${sprintId}"]`).count()).toBe(0);
    expect(await todo.getByTestId('lane-count').textContent()).toBe('4');
    // Plain search: words in titles or descriptions, any case.
    await page.getByLabel('Search', { exact: true }).fill('GAM');
    await page.getByLabel('Search', { exact: true }).press('Enter');
    await todo.getByTestId('lane-count').filter({ hasText: /^1$/ }).waitFor();
    expect(await cardIn(todo, 'Gamma').count()).toBe(1);
    await page.getByLabel('Search', { exact: true }).fill('');
    await todo.getByTestId('lane-count').filter({ hasText: /^4$/ }).waitFor();
    await cardIn(todo, 'Alpha').getByRole('button', { name: 'Move “Alpha” (M)' }).click();
    await page.getByRole('menu', { name: 'Move “Alpha” to' }).getByRole('menuitem', { name: 'Done' }).click();
    await cardIn(lane(page, 'Done'), 'Alpha').waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    // The sprint view: the burndown shows the drop from 17 to 14, the live report, no velocity yet.
    await page.getByRole('link', { name: 'Sprint view' }).click();
    await page.getByRole('heading', { name: 'Sprint “Sprint A”' }).waitFor();
    const burnTable = page.getByTestId('burndown-table');
    await burnTable.waitFor();
    const burnRows = async () => (await burnTable.locator('tbody tr').allTextContents());
    // Kickoff (today) to deadline (in a week), in days: today has the actuals (17 committed, 14
    // left), the days after it none yet, and the ideal line falls from 17 to 0 on the deadline.
    const rows = await burnRows();
    expect(rows).toHaveLength(8);
    expect(rows[0]).toMatch(new RegExp(`^${today} \\(today\\)1417`));
    expect(rows.at(-1)).toBe(`${inAWeek}—0—`);
    await page.getByTestId('burndown-chart').locator('canvas').waitFor();
    expect(await page.getByTestId('report-kind').textContent()).toMatch(/^Live/);
    expect(await page.getByTestId('report').locator('tbody tr').allTextContents()).toEqual([
      'Committed417', 'Added00', 'Removed00', 'Completed13', 'Remaining314',
    ]);
    await page.getByText('No closed sprint on this board yet.').waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    // Close it here: the report freezes and the velocity chart shows it.
    await page.getByRole('button', { name: 'Close sprint…' }).click();
    const closeDialog = page.getByRole('dialog', { name: 'Close sprint “Sprint A”' });
    await closeDialog.getByText('Unfinished cards (3)').waitFor();
    await closeDialog.getByLabel('Roll unfinished cards over to').selectOption('backlog');
    await closeDialog.getByRole('button', { name: 'Close sprint' }).click();
    await closeDialog.getByTestId('velocity').waitFor();
    await closeDialog.getByRole('button', { name: 'Done', exact: true }).click();
    await page.getByTestId('report-kind').filter({ hasText: /^Frozen at the close/ }).waitFor();
    const velocityTable = page.getByTestId('velocity-table');
    await velocityTable.waitFor();
    expect(await velocityTable.locator('tbody tr').allTextContents()).toEqual(['Sprint A173']);
    await page.getByTestId('velocity-chart').locator('canvas').waitFor();
    expect(await page.getByTestId('sprint-state').textContent()).toMatch(/^closed/);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, 'sprint-1280.png'), fullPage: true });
    // Readable at 360 px: the charts shrink to the width, the page does not scroll sideways.
    await page.setViewportSize({ width: 360, height: 740 });
    await poll(async () => ((await page.getByTestId('velocity-chart').boundingBox())?.width ?? 999) <= 360).toBe(true);
    expect((await page.evaluate('document.documentElement.scrollWidth')) as number).toBeLessThanOrEqual(360);
    await page.screenshot({ path: join(ARTIFACTS, 'sprint-360.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });

    // Back in planning: the unfinished cards are in the backlog again, and the capacity hint is the velocity.
    await page.getByRole('link', { name: 'Planning' }).click();
    await page.getByTestId('capacity').filter({ hasText: 'mean velocity of the last 1 closed sprint: 3 points.' }).waitFor();
    await cardIn(backlog, 'Beta').waitFor();
    expect(await cardIn(backlog, 'Alpha').count()).toBe(0); // done, and its sprint is closed: history, not backlog
    expect(await page.getByRole('region', { name: 'Sprint “Sprint A”' }).count()).toBe(0);
    // The board after the close: no sprint in a lane either.
    await page.getByRole('link', { name: 'Back to the board' }).click();
    await cardIn(lane(page, 'Done'), 'Alpha').waitFor();
    expect(await page.locator(`[data-card-id="${sprintId}"]`).count()).toBe(0);
    // A sprint started on the board: its notice stays while it runs and ends when it is closed.
    await page.getByLabel('New sprint').fill('Sprint B');
    await page.getByRole('button', { name: 'Start sprint' }).click();
    const started = page.getByRole('status').filter({ hasText: 'Sprint “Sprint B” started.' });
    await started.waitFor();
    await page.getByRole('button', { name: 'Close sprint…' }).click();
    const closeB = page.getByRole('dialog', { name: 'Close sprint “Sprint B”' });
    await closeB.getByRole('button', { name: 'Close sprint' }).click();
    await closeB.getByTestId('velocity').waitFor();
    await closeB.getByRole('button', { name: 'Done', exact: true }).click();
    await started.waitFor({ state: 'detached' });
    await page.getByLabel('New sprint').waitFor(); // no sprint runs: it can start another

    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('rotates the refresh token, and a refused refresh returns to the login page', async () => {
    const ctx = await browser.newContext();
    const page = await newPage(ctx);
    const errors = watchErrors(page);
    await page.goto(server.base + '/login');
    await login(page, 'cyd', true);
    const first = (await page.evaluate('JSON.parse(localStorage.getItem("board.session"))')) as { refreshToken: string; expiresAt: number };
    // Make the access token look expired: the next call refreshes first (rotation).
    await page.evaluate('(() => { const s = JSON.parse(localStorage.getItem("board.session")); s.expiresAt = 0; localStorage.setItem("board.session", JSON.stringify(s)); })()');
    await page.reload();
    await page.getByRole('heading', { name: 'Your boards' }).waitFor();
    await poll(async () => ((await page.evaluate('JSON.parse(localStorage.getItem("board.session"))')) as { refreshToken: string }).refreshToken)
      .not.toBe(first.refreshToken);
    // The old refresh token is used up: presenting it again revokes the family (docs/auth.md) …
    expect((await apiAs(server.base)('POST', '/auth/refresh-token', { refreshToken: first.refreshToken })).status).toBe(401);
    // … so the page's next refresh fails and it returns to the login form.
    await page.evaluate('(() => { const s = JSON.parse(localStorage.getItem("board.session")); s.expiresAt = 0; localStorage.setItem("board.session", JSON.stringify(s)); })()');
    await page.reload();
    await page.getByRole('heading', { name: 'Log in or register' }).waitFor();
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('renders a board of 6 columns × 20 cards; records time to first render and the bundle size', async () => {
    const { token } = await userToken(server.base, 'bench', PASSWORD);
    const api = apiAs(server.base, token);
    const columns = Array.from({ length: 6 }, (_, i) => ({ name: `Stage ${i + 1}`, query: `status = 's${i + 1}'` }));
    const board = (await api('POST', '/api/v1/boards', { name: 'Bench board', board_type: 'private', columns })).body;
    for (let c = 0; c < 6; c++) {
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          api('POST', `/api/v1/boards/${board.id}/tasks`, { title: `Card ${c + 1}.${i + 1}`, column_id: board.columns[c].id, tags: ['bench'] }),
        ),
      );
    }
    // The API floor: the reads the page makes, in the page's order (the board, then 6 column reads
    // and the summary in parallel), from Node.
    const floorRuns: number[] = [];
    for (let r = 0; r < 5; r++) {
      const t0 = performance.now();
      await api('GET', `/api/v1/boards/${board.id}`);
      await Promise.all([
        ...board.columns.map((col: { id: string }) =>
          api('POST', `/api/v1/boards/${board.id}/columns/${col.id}/query`, { sprint: 'active', page: 1, page_size: 20 }),
        ),
        api('GET', `/api/v1/boards/${board.id}/summary?sprint=active&preview=3`),
      ]);
      floorRuns.push(performance.now() - t0);
    }

    const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    await ctx.addInitScript(
      `localStorage.setItem("board.session", ${JSON.stringify(JSON.stringify({ accessToken: token, refreshToken: 'unused', expiresAt: Date.now() + 3_600_000, userId: 'bench', userName: 'bench' }))})`,
    );
    const page = await newPage(ctx);
    const errors = watchErrors(page);
    const runs: Array<{ fromNavigation: number; fromMount: number; boardRead: number; reads: number }> = [];
    for (let r = 0; r < 5; r++) {
      await page.goto(`${server.base}/boards/${board.id}`);
      // A function, not a string: the page's CSP forbids eval, and the board must work under it.
      await page.waitForFunction(() => globalThis.performance.getEntriesByName('board:rendered').length > 0, undefined, { timeout: STEP });
      runs.push(
        (await page.evaluate(
          `(() => {
            const at = (n) => performance.getEntriesByName(n)[0].startTime;
            return { fromNavigation: at('board:rendered'), fromMount: performance.getEntriesByName('board:first-render')[0].duration,
              boardRead: at('board:board-read') - at('board:start'), reads: at('board:reads-done') - at('board:board-read') };
          })()`,
        )) as { fromNavigation: number; fromMount: number; boardRead: number; reads: number },
      );
    }
    for (let c = 0; c < 6; c++) {
      const l = lane(page, `Stage ${c + 1}`);
      expect(await l.getByTestId('lane-count').textContent()).toBe('20');
      expect(await l.getByRole('list').getByRole('listitem').count()).toBe(20);
    }
    await page.screenshot({ path: join(ARTIFACTS, 'bench-board-1440.png') });

    // Per-column paging: a 21st card in Stage 6 shows "Load more (20 of 21)"; it reads page 2.
    await api('POST', `/api/v1/boards/${board.id}/tasks`, { title: 'Card 6.21', column_id: board.columns[5].id });
    await page.reload();
    const stage6 = lane(page, 'Stage 6');
    await stage6.getByTestId('lane-count').filter({ hasText: '21' }).waitFor();
    expect(await stage6.getByRole('list').getByRole('listitem').count()).toBe(20);
    await stage6.getByRole('button', { name: 'Load more (20 of 21)' }).click();
    await cardIn(stage6, 'Card 6.21').waitFor();
    expect(await stage6.getByRole('list').getByRole('listitem').count()).toBe(21);
    expect(await stage6.getByRole('button', { name: /Load more/ }).count()).toBe(0);

    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const js = readdirSync(join(WEB_DIST, 'assets')).filter((f) => f.endsWith('.js'));
    const gzipBytes = js.reduce((n, f) => n + gzipSync(readFileSync(join(WEB_DIST, 'assets', f)), { level: 9 }).length, 0);
    const figures = {
      firstRenderFromNavigationMs: Math.round(median(runs.map((r) => r.fromNavigation))),
      firstRenderFromMountMs: Math.round(median(runs.map((r) => r.fromMount))),
      boardReadMs: Math.round(median(runs.map((r) => r.boardRead))),
      columnReadsMs: Math.round(median(runs.map((r) => r.reads))),
      apiFloorMs: Math.round(median(floorRuns)),
      jsGzipKB: Math.round((gzipBytes / 1024) * 10) / 10,
    };
    writeFileSync(join(ARTIFACTS, 'bench.json'), JSON.stringify({ ...figures, runs, floorRuns }, null, 2));
    console.log(`web board bench: ${JSON.stringify(figures)}`);
    expect(gzipBytes).toBeLessThan(180 * 1024); // the page's JavaScript stays under 180 KB gzipped (docs/web.md)
    expect(errors).toEqual([]);
    await ctx.close();
  });
});
