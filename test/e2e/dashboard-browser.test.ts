// The dashboard in a real browser (headless Chromium driven by playwright-core): a person signs in,
// opens a table's page, sees its state change after a real `gds gate submit`, and signs out. The page
// runs under its Content-Security-Policy (the hashed style applies, nothing is refused), the session
// cookie is out of the page's reach, and another workspace's table is not shown.
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';
import type { Browser } from '../helpers/chromium.js';
import { chromiumPath, launchBrowser } from '../helpers/chromium.js';
import { needs } from '../helpers/skip.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

const browserAt = chromiumPath();

describe('dashboard in a browser', needs('skip' in browserAt ? browserAt.skip : undefined), () => {
  let server: TestServer;
  let browser: Browser | undefined;
  let profile: string;
  let context: BrowserContext;
  let page: Page;
  const cspReports: string[] = [];

  beforeAll(async () => {
    if (!('path' in browserAt)) return;
    server = await startTestServer();
    browser = await launchBrowser(browserAt.path);
    ({ profile, context, page } = browser);
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) cspReports.push(message.text());
    });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const state = async (tableId: string) =>
    (await server.sql<{ state: string }>('SELECT state FROM gds.tables WHERE id = $1', [tableId]))[0]?.state;

  it('sends a person who is not signed in to the sign-in page, then back to the table', async () => {
    const orders = server.table('orders').id;
    await page.goto(`${server.origin}/dashboard/tables/${orders}`);
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
    expect(await page.locator('#table-state').count()).toBe(0);

    await page.fill('#email', server.user('OWNER').email);
    const [response] = await Promise.all([
      page.waitForNavigation(),
      page.click('button:has-text("Sign in")'),
    ]);
    expect(new URL(page.url()).pathname).toBe(`/dashboard/tables/${orders}`);
    expect(response?.status()).toBe(200);
    expect(await page.textContent('#table-state')).toBe(await state(orders));
    expect(await page.textContent('h1')).toBe('orders');
  });

  it('runs the page under its CSP: the header is there, the hashed style applies, nothing is refused', async () => {
    const response = await page.reload();
    const headers = response?.headers() ?? {};
    expect(headers['content-security-policy']).toContain("default-src 'none'");
    expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['referrer-policy']).toBe('same-origin');
    // The style element sets 15px; the browser's default is 16px, so 15px proves the CSP let it apply.
    expect(await page.evaluate('getComputedStyle(document.body).fontSize')).toBe('15px');
    expect(cspReports).toEqual([]);
  });

  it('keeps the session cookie HttpOnly and SameSite=Strict, out of the page scripts reach', async () => {
    const cookies = await context.cookies(`${server.origin}/dashboard`);
    const session = cookies.find((c) => c.name === 'gds_dashboard');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/dashboard' });
    expect(await page.evaluate('document.cookie')).toBe('');
  });

  it('shows the new state after a real `gds gate submit`', async () => {
    const orders = server.table('orders').id;
    const before = await page.textContent('#table-state');
    const submitted = await runInProcess(['gate', 'submit', orders, '--json'], {
      env: {
        GDS_CONFIG_DIR: join(profile, 'gds-config'),
        GDS_SECRET_STORAGE: 'file',
        SERVICE_API_URL: server.url,
        SERVICE_TOKEN: server.user('OWNER').cliToken,
      },
    });
    expect(submitted.code, submitted.stderr).toBe(0);
    const proof = JSON.parse(submitted.stdout.trim()) as { id: string; state: string };
    expect(proof.state).toBe('PENDING_REVIEW');
    expect(before).not.toBe('PENDING_REVIEW');

    await page.reload();
    expect(await page.textContent('#table-state')).toBe('PENDING_REVIEW');
    expect(await page.textContent('main')).toContain(proof.id);
  });

  it("does not show another workspace's table (404) and lists only this workspace's tables", async () => {
    const other = server.ready.otherWorkspace.tables[0]!;
    const response = await page.goto(`${server.origin}/dashboard/tables/${other.id}`);
    expect(response?.status()).toBe(404);
    expect(await page.textContent('main')).not.toContain(other.name);

    await page.goto(`${server.origin}/dashboard`);
    const links = await page
      .locator('#tables a[href^="/dashboard/tables/"]')
      .evaluateAll((as) => as.map((a) => a.getAttribute('href')));
    const own = server.ready.tables.filter((t) => t.active).map((t) => `/dashboard/tables/${t.id}`);
    expect(links.sort()).toEqual(own.sort());
  });

  it('signs out: the next visit is sent to the sign-in page again', async () => {
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Sign out")')]);
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
    await page.goto(`${server.origin}/dashboard`);
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
    expect(
      (await context.cookies(`${server.origin}/dashboard`)).some((c) => c.name === 'gds_dashboard'),
    ).toBe(false);
  });
});
