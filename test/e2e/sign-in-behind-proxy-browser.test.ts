// A reverse proxy on the server's own machine (nginx's default `proxy_pass http://127.0.0.1:PORT` sets Host to
// the upstream's) makes a loopback server reachable beyond it while the server sees only loopback: it asks for
// no sign-in secret. A person's sign-in through such a proxy, in a real browser, is refused with what to do
// (start the server with --public-url, which asks for the secret); its own page, on its own name, still signs
// in by e-mail alone. The browser says where its page came from only if the page lets it: the pages are
// served with `Referrer-Policy: same-origin`, so a form post carries its page's origin (under `no-referrer`
// it sent `Origin: null`, and the proxied approval went through).
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from '../helpers/chromium.js';
import { chromiumPath, launchBrowser } from '../helpers/chromium.js';
import { needs } from '../helpers/skip.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import { passThrough } from '../helpers/pass-through.js';

const browserAt = chromiumPath();

/** A proxy as nginx's default: every header and byte passed on both ways, but `Host` set to the upstream's. */
async function hostRewritingProxy(upstream: string): Promise<{ origin: string; server: Server }> {
  const server = createServer((request, response) => passThrough(upstream, request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe(
  'person sign-in through a proxy the server cannot see',
  needs('skip' in browserAt ? browserAt.skip : undefined),
  () => {
    let server: TestServer;
    let proxy: { origin: string; server: Server } | undefined;
    let browser: Browser | undefined;

    beforeAll(async () => {
      if (!('path' in browserAt)) return;
      server = await startTestServer();
      proxy = await hostRewritingProxy(server.origin);
      browser = await launchBrowser(browserAt.path);
    });

    afterAll(async () => {
      await browser?.close();
      if (proxy !== undefined) {
        proxy.server.closeAllConnections();
        await new Promise((resolve) => proxy?.server.close(resolve));
      }
      await server?.close();
    });

    const newDeviceCode = async () => {
      const response = await fetch(`${server.origin}/oauth/device/code`, {
        method: 'POST',
        body: new URLSearchParams({ client_id: 'gds-cli', scope: 'openid offline_access' }),
      });
      expect(response.status).toBe(200);
      return ((await response.json()) as { user_code: string }).user_code;
    };
    const deviceStatus = async (userCode: string) =>
      (await server.sql('SELECT status FROM gds.device_codes WHERE user_code = $1', [userCode]))[0]?.status;

    it('refuses the /device approval through the proxy, saying to start the server with --public-url', async () => {
      const page = browser?.page;
      if (page === undefined || proxy === undefined) throw new Error('no browser');
      const userCode = await newDeviceCode();
      const form = await page.goto(`${proxy.origin}/device?user_code=${userCode}`);
      expect(form?.status()).toBe(200);
      expect(form?.headers()['referrer-policy']).toBe('same-origin');
      expect(await page.locator('#secret').count()).toBe(0);
      await page.fill('#email', server.user('OWNER').email);
      const [answer] = await Promise.all([page.waitForNavigation(), page.click('button[value="approve"]')]);
      expect(answer?.status()).toBe(403);
      const text = (await page.textContent('body')) ?? '';
      expect(text).toContain(`--public-url ${proxy.origin}`);
      expect(text).not.toContain('Signed in');
      expect(await deviceStatus(userCode)).toBe('pending');
    });

    it('refuses the dashboard sign-in through the proxy: no session cookie', async () => {
      const page = browser?.page;
      if (page === undefined || proxy === undefined || browser === undefined) throw new Error('no browser');
      await page.goto(`${proxy.origin}/dashboard/sign-in`);
      await page.fill('#email', server.user('OWNER').email);
      const [answer] = await Promise.all([
        page.waitForNavigation(),
        page.click('button:has-text("Sign in")'),
      ]);
      expect(answer?.status()).toBe(403);
      expect((await page.textContent('body')) ?? '').toContain(`--public-url ${proxy.origin}`);
      expect((await browser.context.cookies(proxy.origin)).map((c) => c.name)).not.toContain('gds_dashboard');
    });

    it('still approves by e-mail alone on the server’s own name', async () => {
      const page = browser?.page;
      if (page === undefined) throw new Error('no browser');
      const userCode = await newDeviceCode();
      await page.goto(`${server.origin}/device?user_code=${userCode}`);
      await page.fill('#email', server.user('OWNER').email);
      const [answer] = await Promise.all([page.waitForNavigation(), page.click('button[value="approve"]')]);
      expect(answer?.status()).toBe(200);
      expect(await deviceStatus(userCode)).toBe('approved');
    });
  },
);
