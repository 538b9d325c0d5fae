import type { Browser } from 'playwright-core';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_ID, CLIENT_SECRET, TestProvider } from '../../../services/gateway/test/app/oidc-provider.js';
import { ARGS, CHROMIUM, hasChromium, newPage, watchErrors } from './harness.js';
import { freePort, startServer, type RunningServer } from './server.js';

/**
 * The "Sign in with …" button of the web board, in Debian's Chromium against the built
 * all-in-one server configured for a real OpenID provider (`oidc-provider`) running in this test
 * process: the button leads to the provider's login and consent, and back to the board signed in.
 */
let idp: TestProvider;
let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  if (!hasChromium) return;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  idp = await TestProvider.start(`${base}/auth/oidc/callback`);
  idp.accounts.set('acc-carol', { preferred_username: 'carol', email: 'carol@example.com', email_verified: true });
  server = await startServer(60_000, {
    port,
    env: {
      OIDC_ISSUER: idp.issuer, OIDC_CLIENT_ID: CLIENT_ID, OIDC_CLIENT_SECRET: CLIENT_SECRET, OIDC_REDIRECT_URL: `${base}/auth/oidc/callback`,
      OIDC_ALLOW_HTTP: 'true', OIDC_PROVIDER_NAME: 'Example SSO',
    },
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS, timeout: 60_000 });
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await idp?.close();
});

describe.skipIf(!hasChromium)('sign in with the identity provider (browser)', () => {
  it('signs in through the provider from the login page and lands on the boards', async () => {
    const ctx = await browser.newContext();
    const page = await newPage(ctx);
    const errors = watchErrors(page);
    await page.goto(server.base + '/login');
    await page.getByRole('link', { name: 'Sign in with Example SSO' }).click();
    await page.locator('input[name="login"]').fill('acc-carol');
    await page.locator('input[name="password"]').fill('any');
    await page.locator('button[type="submit"]').click();
    // the provider's consent page
    await page.locator('button[type="submit"]').click();
    await page.getByRole('heading', { name: 'Your boards' }).waitFor();
    expect(await page.getByLabel('Logged in as').textContent()).toBe('carol');
    expect(new URL(page.url()).hash).toBe('');
    expect(errors).toEqual([]);
    await ctx.close();
  });
});
