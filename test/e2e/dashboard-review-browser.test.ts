// The steward's side of the dashboard in a real browser (headless Chromium, playwright-core): a table a
// real `gds gate submit` handed over waits at the top of the home page; the tables list pages by key
// (Next, First page, the filters by state and environment); the tokens page shows each integration token
// masked and revokes one.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';
import type { Browser } from '../helpers/chromium.js';
import { chromiumPath, launchBrowser } from '../helpers/chromium.js';
import { needs } from '../helpers/skip.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import { copyTable } from '../helpers/table-copies.js';

const browserAt = chromiumPath();

describe(
  'the steward’s dashboard in a browser',
  needs('skip' in browserAt ? browserAt.skip : undefined),
  () => {
    let server: TestServer;
    let browser: Browser | undefined;
    let profile: string;
    let page: Page;

    beforeAll(async () => {
      if (!('path' in browserAt)) return;
      server = await startTestServer();
      browser = await launchBrowser(browserAt.path);
      ({ profile, page } = browser);
      await page.goto(`${server.origin}/dashboard`);
      await page.fill('#email', server.user('OWNER').email);
      await Promise.all([page.waitForNavigation(), page.click('button:has-text("Sign in")')]);
    });

    afterAll(async () => {
      await browser?.close();
      await server?.close();
    });

    it('a table submitted with gds gate submit waits for review, with its submitter’s e-mail', async () => {
      expect(await page.textContent('#review-queue')).toContain('Nothing is waiting for review.');
      const customers = server.table('customers');
      const submitted = await runInProcess(['gate', 'submit', customers.id, '--json'], {
        env: {
          GDS_CONFIG_DIR: join(profile, 'gds-config'),
          GDS_SECRET_STORAGE: 'file',
          SERVICE_API_URL: server.url,
          SERVICE_TOKEN: server.user('STEWARD').cliToken,
        },
      });
      expect(submitted.code, submitted.stderr).toBe(0);
      await page.reload();
      const row = page.locator('#review-queue tbody tr');
      expect(await row.count()).toBe(1);
      const cells = await row.locator('td').allTextContents();
      expect(cells[0]).toBe(customers.name);
      expect(cells[1]).toMatch(/^(passed|failed \(.+\))$/);
      expect(cells[2]).toBe(server.user('STEWARD').email);
      await Promise.all([page.waitForNavigation(), row.locator('a').click()]);
      expect(await page.textContent('#table-state')).toBe('PENDING_REVIEW');
    });

    it('the tables list pages by key: Next 100 tables, First page, then filters by state and environment', async () => {
      await copyTable(server, server.table('orders').id, 150, 'many');
      await page.goto(`${server.origin}/dashboard`);
      const tableLinks = () => page.locator('#tables tbody tr').count();
      expect(await tableLinks()).toBe(100);
      await Promise.all([page.waitForNavigation(), page.click('a[rel="next"]')]);
      expect(new URL(page.url()).searchParams.get('cursor')).toBeTruthy();
      const second = await page.locator('#tables tbody tr td:first-child').allTextContents();
      expect(second.length).toBeGreaterThan(0);
      expect(second.length).toBeLessThanOrEqual(100);
      expect(second.at(-1)).toBe('many_150');
      // First page goes back to where the list starts.
      await Promise.all([page.waitForNavigation(), page.click('#table-pages a:has-text("First page")')]);
      expect(new URL(page.url()).searchParams.get('cursor')).toBeNull();
      expect(await tableLinks()).toBe(100);

      await page.selectOption('#state', 'CERTIFIED');
      await Promise.all([page.waitForNavigation(), page.click('#table-filter button')]);
      expect(new URL(page.url()).searchParams.get('state')).toBe('CERTIFIED');
      const states = await page.locator('#tables tbody tr td:nth-child(3)').allTextContents();
      expect(states.length).toBeGreaterThan(0);
      expect(new Set(states)).toEqual(new Set(['CERTIFIED']));
      await page.selectOption('#state', '');

      await page.selectOption('#env', 'production');
      await Promise.all([page.waitForNavigation(), page.click('#table-filter button')]);
      const url = new URL(page.url());
      expect(url.searchParams.get('env')).toBe('production');
      const production = await page.locator('#tables tbody tr td:last-child').allTextContents();
      expect(production.length).toBeGreaterThan(0);
      expect(new Set(production)).toEqual(new Set(['production']));
    });

    it('the tokens page shows each integration token masked, and its Revoke button revokes it', async () => {
      const orders = server.table('orders');
      const issued = await server.issueToken('OWNER', {
        name: 'browser-feed',
        env: orders.environmentLabel,
        scopes: [{ tableId: orders.id, permissions: ['read'] }],
      });
      await page.goto(`${server.origin}/dashboard`);
      await Promise.all([page.waitForNavigation(), page.click('a:has-text("Integration tokens")')]);
      const row = page.locator('tr', { hasText: 'browser-feed' });
      const cells = await row.locator('td').allTextContents();
      expect(cells[1]).toMatch(/^tf_.{4}….{4}$/);
      expect(cells[1]).not.toBe(issued.clientToken);
      expect(cells.slice(2, 6)).toEqual([
        'DATA-API',
        orders.environmentLabel,
        `tables:${orders.name}:read`,
        server.user('OWNER').email,
      ]);
      expect(await page.content()).not.toContain(issued.clientToken);

      await Promise.all([page.waitForNavigation(), row.locator('button:has-text("Revoke")').click()]);
      expect(new URL(page.url()).pathname).toBe('/dashboard/tokens');
      const [stored] = await server.sql<{ revoked: boolean }>(
        'SELECT revoked_at IS NOT NULL AS revoked FROM gds.integration_tokens WHERE id = $1',
        [issued.id],
      );
      expect(stored?.revoked).toBe(true);
      expect(await page.locator('tr', { hasText: 'browser-feed' }).textContent()).toContain('revoked');
    });
  },
);
