// Person sign-in (the dashboard's, the /device approval that mints `gds auth login`'s tokens) is by a
// member's e-mail. On loopback that stays all it takes; a server reachable beyond its machine (a host other
// than loopback, --public-url, --trust-proxy) also asks for a sign-in secret, given (GDS_SIGN_IN_SECRET) or
// made at start and printed once on stderr. A missing or wrong one is 401 on the page, counted against the
// address's failed authentications (429 past the limit), and the secret is in no answer and no log line.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from '../../src/server/app.js';
import { parseServerArgs } from '../../src/server/options.js';
import { scratchDir } from '../helpers/migrated-database.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import { startServerProcess, waitFor } from '../helpers/server-process.js';

const SECRET = 'a-sign-in-secret-for-tests';
const OWNER = 'owner@example.com';

interface Page {
  status: number;
  headers: Headers;
  body: string;
}

/** Every answer a test read, to check that none says the secret. */
const answers: string[] = [];

async function read(response: Response): Promise<Page> {
  const body = await response.text();
  answers.push(body, JSON.stringify([...response.headers]));
  return { status: response.status, headers: response.headers, body };
}

async function newDeviceCode(origin: string): Promise<string> {
  const response = await fetch(`${origin}/oauth/device/code`, {
    method: 'POST',
    body: new URLSearchParams({ client_id: 'gds-cli', scope: 'openid offline_access' }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { user_code: string }).user_code;
}

const decide = async (origin: string, fields: Record<string, string>) =>
  read(await fetch(`${origin}/device`, { method: 'POST', body: new URLSearchParams(fields) }));

/** The dashboard's sign-in, posted as its own page does (a browser sends Origin). */
const signIn = async (origin: string, fields: Record<string, string>) =>
  read(
    await fetch(`${origin}/dashboard/sign-in`, {
      method: 'POST',
      headers: { origin },
      body: new URLSearchParams({ next: '/dashboard', ...fields }),
      redirect: 'manual',
    }),
  );

const page = async (url: string) => read(await fetch(url));

const deviceStatus = async (server: TestServer, userCode: string) =>
  (await server.sql('SELECT status FROM gds.device_codes WHERE user_code = $1', [userCode]))[0]?.status;

describe('on loopback (the trial, the demo, the tests)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server?.close());

  it('asks for no secret: the e-mail alone approves a device code and signs in to the dashboard', async () => {
    expect(server.signIn).toBeNull();
    expect((await page(`${server.origin}/device`)).body).not.toContain('name="secret"');
    expect((await page(`${server.origin}/dashboard/sign-in`)).body).not.toContain('name="secret"');
    const userCode = await newDeviceCode(server.origin);
    const approved = await decide(server.origin, { user_code: userCode, email: OWNER, action: 'approve' });
    expect(approved.status).toBe(200);
    expect(approved.body).toContain('Signed in');
    const signedIn = await signIn(server.origin, { email: OWNER });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('set-cookie')).toContain('gds_dashboard=');
  });

  it('refuses a form posted from a page on another name (a proxy it cannot see), saying to give --public-url', async () => {
    const userCode = await newDeviceCode(server.origin);
    const viaProxy = { 'sec-fetch-site': 'same-origin', origin: 'https://gds.example.com' };
    const refused = await read(
      await fetch(`${server.origin}/device`, {
        method: 'POST',
        headers: viaProxy,
        body: new URLSearchParams({ user_code: userCode, email: OWNER, action: 'approve' }),
      }),
    );
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('Start the server with --public-url https://gds.example.com');
    expect(await deviceStatus(server, userCode)).toBe('pending');
    const dashboard = await read(
      await fetch(`${server.origin}/dashboard/sign-in`, {
        method: 'POST',
        headers: viaProxy,
        body: new URLSearchParams({ next: '/dashboard', email: OWNER }),
        redirect: 'manual',
      }),
    );
    expect(dashboard.status).toBe(403);
    expect(dashboard.body).toContain('--public-url https://gds.example.com');
    expect(dashboard.headers.get('set-cookie')).toBeNull();
  });
});

describe('reachable beyond loopback (--public-url), with a secret given', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      publicUrl: 'https://gds.example.com',
      signInSecret: SECRET,
      failedAuthLimit: 4,
    });
  });
  afterAll(async () => server?.close());

  it('shows a sign-in secret field on /device and the dashboard’s sign-in page', async () => {
    expect(server.signIn).toMatchObject({ generated: false });
    for (const path of ['/device', '/dashboard/sign-in']) {
      const form = await page(`${server.origin}${path}`);
      expect(form.status).toBe(200);
      expect(form.body).toContain('name="secret" type="password"');
    }
  });

  it('approves a device code and signs in with the e-mail and the secret; without it, 401 and nothing happens', async () => {
    const userCode = await newDeviceCode(server.origin);
    for (const secret of [undefined, 'not-the-secret-at-all']) {
      const fields = { user_code: userCode, email: OWNER, action: 'approve' };
      const refused = await decide(server.origin, secret === undefined ? fields : { ...fields, secret });
      expect(refused.status).toBe(401);
      expect(refused.body).toContain('The sign-in secret is missing or wrong');
      expect(refused.body).not.toContain('Signed in');
      expect(await deviceStatus(server, userCode)).toBe('pending');
    }
    const approved = await decide(server.origin, {
      user_code: userCode,
      email: OWNER,
      action: 'approve',
      secret: SECRET,
    });
    expect(approved.status).toBe(200);
    expect(approved.body).toContain('Signed in');
    expect(await deviceStatus(server, userCode)).toBe('approved');

    const refused = await signIn(server.origin, { email: OWNER, secret: 'wrong' });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('set-cookie')).toBeNull();
    expect(refused.body).toContain('The sign-in secret is missing or wrong');
    // The e-mail typed is kept, the secret is not filled in again.
    expect(refused.body).toContain(`value="${OWNER}"`);
    const signedIn = await signIn(server.origin, { email: OWNER, secret: SECRET });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('set-cookie')).toContain('gds_dashboard=');
    server.clock.advance(61_000);
  });

  it('says nothing of the e-mail before the secret is right (no member list for a stranger)', async () => {
    const stranger = await signIn(server.origin, { email: 'nobody@example.com', secret: 'wrong' });
    expect(stranger.status).toBe(401);
    expect(stranger.body).not.toContain('No active member');
    server.clock.advance(61_000);
  });

  it('counts wrong secrets as failed authentications: past the limit, 429 with Retry-After, the right one too', async () => {
    const userCode = await newDeviceCode(server.origin);
    const attempt = (secret: string) =>
      decide(server.origin, { user_code: userCode, email: OWNER, action: 'approve', secret });
    const statuses = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await attempt(`wrong-${i}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401]);
    const locked = await attempt(SECRET);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(locked.body).toContain('failed authentications');
    expect((await signIn(server.origin, { email: OWNER, secret: SECRET })).status).toBe(429);
    expect(await deviceStatus(server, userCode)).toBe('pending');
    server.clock.advance(61_000);
    expect((await attempt(SECRET)).status).toBe(200);
  });

  it('never says the secret in an answer', () => {
    expect(answers.length).toBeGreaterThan(10);
    for (const answer of answers) expect(answer).not.toContain(SECRET);
  });
});

describe('listening on every interface (0.0.0.0) without a secret given', () => {
  const lines: string[] = [];
  let running: Awaited<ReturnType<typeof createServer>>;
  beforeAll(async () => {
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    running = await createServer({
      port: 0,
      host: '0.0.0.0',
      scratchDir: await scratchDir(),
      logger: { level: 'trace', stream },
    });
  }, 60_000);
  afterAll(async () => running?.close());

  it('makes a secret, asks for it, and no log line holds it', async () => {
    expect(running.signIn).toMatchObject({ generated: true, reason: 'it listens on 0.0.0.0' });
    const secret = running.signIn?.secret ?? '';
    expect(secret).toMatch(/^[\w-]{24}$/);
    const origin = `http://127.0.0.1:${new URL(running.origin).port}`;
    const userCode = await newDeviceCode(origin);
    const fields = { user_code: userCode, email: OWNER, action: 'approve' };
    expect((await decide(origin, fields)).status).toBe(401);
    const approved = await decide(origin, { ...fields, secret });
    expect(approved.status).toBe(200);
    expect(approved.body).not.toContain(secret);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).not.toContain(secret);
  });
});

describe('npm run server beyond loopback', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gds-sign-in-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints the secret it made once, on stderr, with the address: not on stdout, not in the ready file', async () => {
    const readyFile = join(dir, 'ready.json');
    const server = startServerProcess(['--host', '0.0.0.0', '--port', '0', '--ready-file', readyFile]);
    try {
      await waitFor(() => server.output.stderr.includes('sign-in secret'), 'the sign-in line');
      const secret = /made for this start \(set GDS_SIGN_IN_SECRET to choose it\): (\S+)\n/.exec(
        server.output.stderr,
      )?.[1];
      expect(secret).toMatch(/^[\w-]{24}$/);
      expect(server.output.stderr).toContain('(it listens on 0.0.0.0)');
      expect(server.output.stderr.split(secret ?? '').length).toBe(2);
      expect(server.output.stdout).not.toContain(secret);
      expect(server.output.stdout).toContain('and the sign-in secret; see stderr');
      expect(readFileSync(readyFile, 'utf8')).not.toContain(secret);
    } finally {
      server.signal('SIGTERM');
      await server.exited;
    }
  }, 60_000);

  it('refuses a GDS_SIGN_IN_SECRET too short, without saying it', () => {
    expect(() => parseServerArgs(['--port', '0'], { GDS_SIGN_IN_SECRET: 'short' })).toThrow(
      'GDS_SIGN_IN_SECRET must be at least 16 characters without spaces or control characters (it has 5)',
    );
    expect(parseServerArgs(['--port', '0'], { GDS_SIGN_IN_SECRET: SECRET })).toMatchObject({
      server: { signInSecret: SECRET },
    });
  });
});
