// The dashboard behind the tracking URL, over HTTP: who may see which page, the sign-in cookie, the
// security headers, CSRF refusals, and escaping of every value a page shows.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeHtml, html } from '../../src/server/dashboard/html.js';
import { SESSION_TTL_MS } from '../../src/server/dashboard/sessions.js';
import { loadContract } from '../../src/server/contract.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import { copyTable } from '../helpers/table-copies.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server?.close();
});

interface Page {
  status: number;
  headers: Headers;
  text: string;
}

async function get(path: string, headers: Record<string, string> = {}): Promise<Page> {
  const response = await fetch(`${server.origin}${path}`, { headers, redirect: 'manual' });
  return { status: response.status, headers: response.headers, text: compact(await response.text()) };
}

/** The markup without the white space between tags, so that assertions need not follow its layout. */
function compact(text: string): string {
  return text.replace(/>\s+</g, '><').replace(/\s+</g, '<').replace(/>\s+/g, '>');
}

async function post(path: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await fetch(`${server.origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
    redirect: 'manual',
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const browser = { accept: 'text/html,application/xhtml+xml' };
const sameOrigin = () => ({ origin: server.origin, 'sec-fetch-site': 'same-origin' });

/** Signs in as the seeded user of `role`; returns the Cookie header to send. */
async function signIn(role: 'OWNER' | 'MEMBER' = 'OWNER'): Promise<string> {
  const response = await post('/dashboard/sign-in', { email: server.user(role).email }, sameOrigin());
  expect(response.status).toBe(303);
  const cookie = response.headers.get('set-cookie') ?? '';
  return cookie.split(';')[0] ?? '';
}

function expectSecurityHeaders(headers: Headers): void {
  const csp = headers.get('content-security-policy') ?? '';
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("script-src 'none'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toContain("form-action 'self'");
  expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/]+=*'/);
  expect(csp).not.toContain('unsafe-inline');
  expect(headers.get('x-content-type-options')).toBe('nosniff');
  expect(headers.get('referrer-policy')).toBe('same-origin');
  expect(headers.get('cache-control')).toBe('no-store');
}

describe('escaping', () => {
  const hostile = [
    '<script>alert(1)</script>',
    '"><img src=x onerror=alert(1)>',
    "' onmouseover='alert(1)",
    '&lt;already&gt; & more',
    '</title><style>*{}</style>',
  ];

  it('escapeHtml leaves no markup character of a hostile string', () => {
    for (const text of hostile) {
      const escaped = escapeHtml(text);
      expect(escaped).not.toMatch(/[<>"']/);
      expect(escaped.replace(/&(amp|lt|gt|quot|#39);/g, '')).not.toContain('&');
    }
    expect(escapeHtml('<a href="x">\'&\'</a>')).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    expect(escapeHtml(null)).toBe('');
  });

  it('the html tag escapes every interpolated value, in text and attributes, and nested arrays', () => {
    const value = hostile[1];
    const markup = html`<p title="${value}">${value}${[html`<b>${hostile[0]}</b>`]}</p>`.markup;
    expect(markup).toBe(
      `<p title="${escapeHtml(value)}">${escapeHtml(value)}<b>${escapeHtml(hostile[0])}</b></p>`,
    );
    expect(markup).not.toContain('<img');
    expect(markup).not.toContain('<script');
  });
});

describe('without a sign-in nothing is shown', () => {
  it('a browser is sent to the sign-in page (302, with the page to come back to); other clients get 401', async () => {
    const table = server.table('orders').id;
    const page = await get(`/dashboard/tables/${table}`, browser);
    expect(page.status).toBe(302);
    expect(page.headers.get('location')).toBe(
      `/dashboard/sign-in?next=${encodeURIComponent(`/dashboard/tables/${table}`)}`,
    );
    expect(page.text).toBe('');
    expectSecurityHeaders(page.headers);

    const api = await get('/dashboard');
    expect(api.status).toBe(401);
    expect(JSON.parse(api.text)).toMatchObject({ error: { code: 'sign_in_required' } });
    expect(api.text).not.toContain('orders');
    expectSecurityHeaders(api.headers);
  });

  it("the CSP's style hash is that of the page's one style element", async () => {
    const page = await get('/dashboard/sign-in');
    const style = /<style>([^<]*)<\/style>/.exec(page.text)?.[1] ?? '';
    expect(style).not.toBe('');
    const hash = createHash('sha256').update(style).digest('base64');
    expect(page.headers.get('content-security-policy')).toContain(`style-src 'sha256-${hash}'`);
  });

  it('the contract (openapi.yaml) names the Referrer-Policy the pages carry', async () => {
    const sent = (await get('/dashboard/sign-in')).headers.get('referrer-policy');
    expect(sent).toBe('same-origin');
    const dashboard = loadContract().paths['/dashboard']?.['get'] as { description?: string } | undefined;
    const described = (dashboard?.description ?? '').replace(/\s+/g, ' ');
    expect(described).toContain(`Referrer-Policy ${sent}`);
  });

  it('a made-up or expired cookie is no sign-in', async () => {
    expect((await get('/dashboard', { ...browser, cookie: 'gds_dashboard=forged' })).status).toBe(302);
    const cookie = await signIn();
    expect((await get('/dashboard', { cookie })).status).toBe(200);
    server.clock.advance(SESSION_TTL_MS + 1000);
    try {
      expect((await get('/dashboard', { ...browser, cookie })).status).toBe(302);
    } finally {
      server.clock.reset();
    }
  });

  it('an integration token or a client token is refused (401)', async () => {
    const issued = await server.issueToken('OWNER', {
      name: 'dash',
      env: '*',
      scopes: [{ tableId: server.table('orders').id, permissions: ['read'] }],
    });
    for (const token of [issued.tokens.accessToken, issued.clientToken, 'cli_unknown']) {
      const page = await get('/dashboard', { ...browser, authorization: `Bearer ${token}` });
      expect(page.status).toBe(401);
      expect(page.text).not.toContain('orders');
    }
  });
});

describe('signing in and out', () => {
  it('sets an HttpOnly SameSite=Strict cookie holding a session id, not a token, and audits it', async () => {
    const response = await post(
      '/dashboard/sign-in',
      { email: server.user('OWNER').email, next: `/dashboard/tables/${server.table('orders').id}` },
      sameOrigin(),
    );
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(`/dashboard/tables/${server.table('orders').id}`);
    const cookie = response.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^gds_dashboard=[A-Za-z0-9_-]{32,};/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    expect(cookie).toContain('Path=/dashboard');
    expect(cookie).not.toContain('Secure'); // plain http on loopback
    const value = cookie.split(';')[0]?.split('=')[1] ?? '';
    for (const user of server.ready.users) {
      expect(value).not.toBe(user.accessToken);
      expect(value).not.toBe(user.cliToken);
    }
    const [audit] = await server.sql<{ action: string; user_id: string }>(
      `SELECT action, user_id FROM gds.audit_log WHERE action = 'DASHBOARD_SIGN_IN' ORDER BY seq DESC LIMIT 1`,
    );
    expect(audit).toEqual({ action: 'DASHBOARD_SIGN_IN', user_id: server.user('OWNER').userId });
  });

  it('the sign-in page is a form without script; an unknown e-mail gets the form again, escaped', async () => {
    const form = await get('/dashboard/sign-in?next=%2Fdashboard');
    expect(form.status).toBe(200);
    expect(form.headers.get('content-type')).toContain('text/html');
    expect(form.text).toContain('<form method="post" action="/dashboard/sign-in">');
    expect(form.text).not.toContain('<script');
    expectSecurityHeaders(form.headers);

    const hostile = '"><script>alert(1)</script>@example.com';
    const refused = await post('/dashboard/sign-in', { email: hostile }, sameOrigin());
    expect(refused.status).toBe(400);
    expect(refused.headers.get('set-cookie')).toBeNull();
    expect(refused.text).toContain('No active member has the e-mail');
    expect(refused.text).not.toContain('<script>alert(1)');
    expect(refused.text).toContain(escapeHtml(hostile));
  });

  it('refuses a sign-in posted from another site (403, no cookie)', async () => {
    const email = server.user('OWNER').email;
    const foreign: Record<string, string>[] = [
      { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' },
      { 'sec-fetch-site': 'same-site' },
      { origin: 'https://evil.example' },
      { origin: 'null' },
    ];
    for (const headers of foreign) {
      const response = await post('/dashboard/sign-in', { email }, headers);
      expect(response.status, JSON.stringify(headers)).toBe(403);
      expect(response.headers.get('set-cookie')).toBeNull();
    }
  });

  it('refuses a sign-in posted with neither Origin nor Sec-Fetch-Site (403, no cookie, no session)', async () => {
    const sessions = async () =>
      Number(
        (await server.sql<{ n: number }>('SELECT count(*)::int AS n FROM gds.dashboard_sessions'))[0]?.n,
      );
    const before = await sessions();
    const bare = await post('/dashboard/sign-in', { email: server.user('OWNER').email });
    expect(bare.status).toBe(403);
    expect(bare.headers.get('set-cookie')).toBeNull();
    expect(bare.text).toContain('Sign in from this server’s own sign-in page.');
    expect(await sessions()).toBe(before);
    // Either header alone, same-origin, is enough: a browser sends at least one of them.
    const email = server.user('OWNER').email;
    expect((await post('/dashboard/sign-in', { email }, { origin: server.origin })).status).toBe(303);
    expect((await post('/dashboard/sign-in', { email }, { 'sec-fetch-site': 'same-origin' })).status).toBe(
      303,
    );
  });

  it('sends back only to a dashboard page of this server', async () => {
    const email = server.user('OWNER').email;
    for (const next of ['https://evil.example/', '//evil.example/dashboard', '/dashboard/../api/me', 'x']) {
      const response = await post('/dashboard/sign-in', { email, next }, sameOrigin());
      expect(response.headers.get('location'), next).toBe('/dashboard');
    }
  });

  it('sign-out ends the session and clears the cookie; a cross-site sign-out is refused', async () => {
    const cookie = await signIn();
    const forged = await post('/dashboard/sign-out', {}, { cookie, 'sec-fetch-site': 'cross-site' });
    expect(forged.status).toBe(403);
    expect((await get('/dashboard', { cookie })).status).toBe(200);

    const out = await post('/dashboard/sign-out', {}, { cookie, ...sameOrigin() });
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/dashboard/sign-in');
    expect(out.headers.get('set-cookie')).toMatch(/^gds_dashboard=; Max-Age=0;/);
    expect((await get('/dashboard', { ...browser, cookie })).status).toBe(302);
  });
});

describe('what a signed-in person sees', () => {
  it('the base URL of each door on the home page: REST with its stage, GraphQL and MCP without', async () => {
    const page = await get('/dashboard', { cookie: await signIn('MEMBER') });
    expect(page.status).toBe(200);
    const { rest, graphql, mcp } = server.ready.doors;
    expect(rest).toBe(`${server.origin}/v1`);
    for (const [door, url] of [
      ['REST', rest],
      ['GraphQL', graphql],
      ['MCP', mcp],
    ])
      expect(page.text).toMatch(new RegExp(`<td>${door}</td>\\s*<td><code>${url}</code></td>`));
  });

  it("the workspace's tables of the person's environments, linked to their pages, and none of another workspace", async () => {
    const page = await get('/dashboard', { cookie: await signIn('MEMBER') });
    expect(page.status).toBe(200);
    expectSecurityHeaders(page.headers);
    const active = server.ready.tables.filter((t) => t.active);
    // The seeded member's scope is dev: the production tables stay out, as in `gds list`.
    expect(active.some((t) => t.environmentLabel === 'production')).toBe(true);
    for (const table of active) {
      const link = `<a href="/dashboard/tables/${table.id}">${escapeHtml(table.name)}</a>`;
      if (table.environmentLabel === 'dev') expect(page.text).toContain(link);
      else expect(page.text).not.toContain(table.id);
    }
    for (const table of server.ready.otherWorkspace.tables) expect(page.text).not.toContain(table.id);
    expect(page.text).toContain(escapeHtml(server.user('MEMBER').email));
    expect(page.text).not.toContain('<script');
  });

  it('a table page: state, gate and custody mode, contract, versions, jobs, proofs, audit newest first', async () => {
    const table = server.table('orders');
    const page = await get(`/dashboard/tables/${table.id}`, { cookie: await signIn() });
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<dd class="state" id="table-state">${table.state}</dd>`);
    expect(page.text).toContain(`<dt>Gate mode</dt><dd>${table.gateMode}</dd>`);
    expect(page.text).toMatch(/<dt>Custody mode<\/dt><dd>Mode [AB]/);
    for (const heading of [
      'Semantic contract',
      'Certification versions',
      'Open recertification requests',
      'Recent gate jobs',
      'Gate 1 proofs',
      'Audit, newest first',
    ]) {
      expect(page.text).toContain(`<h2>${heading}</h2>`);
    }
    const audit = await server.sql<{ action: string; email: string }>(
      `SELECT a.action, u.email FROM gds.audit_log a JOIN gds.users u ON u.id = a.user_id
        WHERE a.table_id = $1 ORDER BY a.seq DESC`,
      [table.id],
    );
    expect(audit.length).toBeGreaterThan(0);
    const listed = [
      ...(page.text.split('<h2>Audit, newest first</h2>')[1] ?? '').matchAll(
        /<tr><td>[^<]+<\/td><td>([^<]+)<\/td><td>([^<]+)<\/td>/g,
      ),
    ].map((m) => ({ action: m[1], email: m[2] }));
    expect(listed).toEqual(audit);
  });

  it("another workspace's table is 404, not 403, and says nothing of it", async () => {
    const other = server.ready.otherWorkspace.tables[0]!;
    const page = await get(`/dashboard/tables/${other.id}`, { cookie: await signIn() });
    expect(page.status).toBe(404);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.text).not.toContain(escapeHtml(other.name));
    expectSecurityHeaders(page.headers);
    expect((await get('/dashboard/tables/tbl_unknown', { cookie: await signIn() })).status).toBe(404);
  });

  it("a table outside the person's environment scope is 404, like another workspace's", async () => {
    const production = server.table('customers_production');
    const member = await get(`/dashboard/tables/${production.id}`, { cookie: await signIn('MEMBER') });
    expect(member.status).toBe(404);
    expect(member.text).not.toContain('id="table-state"');
    const viaToken = await get(`/dashboard/tables/${production.id}`, {
      authorization: `Bearer ${server.user('MEMBER').cliToken}`,
    });
    expect(viaToken.status).toBe(404);
    const owner = await get(`/dashboard/tables/${production.id}`, { cookie: await signIn('OWNER') });
    expect(owner.status).toBe(200);
  });

  it("a person's session token or static CLI token as a bearer token works too", async () => {
    const owner = server.user('OWNER');
    for (const token of [owner.accessToken, owner.cliToken]) {
      const page = await get(`/dashboard/tables/${server.table('orders').id}`, {
        authorization: `Bearer ${token}`,
      });
      expect(page.status).toBe(200);
      expect(page.text).toContain('id="table-state"');
    }
  });

  it('every value a page shows is escaped: a hostile table name stays text', async () => {
    const table = server.table('customers');
    const hostile = '<script>alert("x")</script><img src=x onerror=alert(1)>';
    const [before] = await server.sql<{ name: string }>('SELECT name FROM gds.tables WHERE id = $1', [
      table.id,
    ]);
    await server.sql('UPDATE gds.tables SET name = $2 WHERE id = $1', [table.id, hostile]);
    try {
      const cookie = await signIn();
      for (const path of ['/dashboard', `/dashboard/tables/${table.id}`]) {
        const page = await get(path, { cookie });
        expect(page.status).toBe(200);
        expect(page.text).toContain(escapeHtml(hostile));
        expect(page.text).not.toContain('<script');
        expect(page.text).not.toContain('<img');
      }
    } finally {
      await server.sql('UPDATE gds.tables SET name = $2 WHERE id = $1', [table.id, before?.name]);
    }
  });

  it('a member no longer active is signed out', async () => {
    const member = server.user('MEMBER');
    const cookie = await signIn('MEMBER');
    await server.sql('UPDATE gds.memberships SET active = false WHERE user_id = $1', [member.userId]);
    try {
      expect((await get('/dashboard', { ...browser, cookie })).status).toBe(302);
    } finally {
      await server.sql('UPDATE gds.memberships SET active = true WHERE user_id = $1', [member.userId]);
    }
  });
});

describe('the sections of a table page hold what the server stores', () => {
  it('a certified table lists its contract versions and its semantic contract', async () => {
    const [certified] = await server.sql<{ table_id: string; version: number; certified_by: string }>(
      `SELECT v.table_id, v.version, v.certified_by FROM gds.contract_versions v
         JOIN gds.tables t ON t.id = v.table_id WHERE t.workspace_id = $1 AND t.active ORDER BY v.version DESC LIMIT 1`,
      [server.ready.workspaceId],
    );
    expect(certified, 'the seed certifies a table').toBeDefined();
    const page = await get(`/dashboard/tables/${certified!.table_id}`, { cookie: await signIn() });
    const versions = page.text.split('<h2>Certification versions</h2>')[1]?.split('<h2>')[0] ?? '';
    expect(versions).toContain(`<tr><td>${certified!.version}</td>`);
    // People by e-mail, never by user id.
    const [certifier] = await server.sql<{ email: string }>('SELECT email FROM gds.users WHERE id = $1', [
      certified!.certified_by,
    ]);
    expect(versions).toContain(escapeHtml(certifier!.email));
    expect(page.text).not.toContain(certified!.certified_by);
    expect(page.text).not.toContain('No semantic contract yet');
  });

  it('an open recertification request and a gate job of the table are listed', async () => {
    const table = server.table('orders');
    const run = await server.request('POST', `/api/tables/${table.id}/gate-runs`, {
      token: server.user('OWNER').cliToken,
      body: { gate: 2 },
    });
    expect(run.status, JSON.stringify(run.body)).toBe(202);
    const jobId = String(run.body.id ?? run.body.job?.id);
    await server.sql(
      `INSERT INTO gds.recertification_requests (id, workspace_id, table_id, cause, status, created_at, last_seen_at)
       VALUES ('rrq_dashboard', $1, $2, 'manual', 'OPEN', now(), now())`,
      [server.ready.workspaceId, table.id],
    );
    const page = await get(`/dashboard/tables/${table.id}`, { cookie: await signIn() });
    const section = (heading: string) => page.text.split(`<h2>${heading}</h2>`)[1]?.split('<h2>')[0] ?? '';
    expect(section('Recent gate jobs')).toContain(`<code>${jobId}</code>`);
    expect(section('Recent gate jobs')).toContain('Gate 2 (gate2)');
    expect(section('Open recertification requests')).toContain('<code>rrq_dashboard</code>');
  });
});

describe('the steward’s queue at the top of the home page', () => {
  const queueSection = (text: string) =>
    text.split('<section id="review-queue">')[1]?.split('</section>')[0] ?? '';

  it('a submitted table waits for review: its link, proof result, submitter’s e-mail and time; gone once rejected', async () => {
    const table = server.table('customers');
    const submitter = server.user('STEWARD');
    const submitted = await server.request('POST', `/api/tables/${table.id}/gate-submissions`, {
      token: submitter.accessToken,
      body: {},
    });
    expect(submitted.status).toBe(201);
    const page = await get('/dashboard', { cookie: await signIn() });
    const queue = queueSection(page.text);
    expect(queue).toContain('<h2>Waiting for review</h2>');
    expect(queue).toContain(`<a href="/dashboard/tables/${table.id}">${escapeHtml(table.name)}</a>`);
    expect(queue).toContain(
      submitted.body.passed
        ? '<td>passed</td>'
        : `<td>failed (${submitted.body.failedPredicates.join(', ')})</td>`,
    );
    expect(queue).toContain(`<td>${escapeHtml(submitter.email)}</td>`);
    expect(queue).not.toContain(submitter.userId);
    expect(queue).toMatch(/<td>\d{4}-\d{2}-\d{2}T[\d:.]+Z<\/td>/);
    // A member is no steward: no queue.
    expect((await get('/dashboard', { cookie: await signIn('MEMBER') })).text).not.toContain('review-queue');

    const rejected = await server.request('POST', `/api/tables/${table.id}/reject`, {
      token: submitter.accessToken,
      body: { reason: 'dashboard test' },
    });
    expect(rejected.status).toBe(200);
    const after = queueSection((await get('/dashboard', { cookie: await signIn() })).text);
    expect(after).toContain('Nothing is waiting for review.');
    expect(after).not.toContain(table.id);
  });

  it('a waiting table whose data moved since its submission shows its proof stale, not passed', async () => {
    const table = server.table('customers');
    const submitted = await server.request('POST', `/api/tables/${table.id}/gate-submissions`, {
      token: server.user('STEWARD').accessToken,
      body: {},
    });
    expect(submitted.status).toBe(201);
    const issued = await server.issueToken('ADMIN', {
      name: 'dashboard-rebuild',
      env: table.environmentLabel,
      scopes: ['workspace:write:recertify'] as never,
    });
    const signal = await server.request('POST', '/api/workspace/recertify', {
      token: issued.tokens.accessToken,
      body: { tables: [table.name], environmentLabel: table.environmentLabel },
    });
    expect(signal.status).toBe(200);
    const data = submitted.body.tableVersion.data as number;
    const queue = queueSection((await get('/dashboard', { cookie: await signIn() })).text);
    expect(queue).toContain(`stale: data v${data} → v${data + 1} since; submit it again to certify`);
    const rejected = await server.request('POST', `/api/tables/${table.id}/reject`, {
      token: server.user('STEWARD').accessToken,
      body: { reason: 'dashboard test' },
    });
    expect(rejected.status).toBe(200);
  });

  it('a waiting table whose contract changed since its submission shows its proof stale by contract', async () => {
    const table = server.table('customers');
    const submitted = await server.request('POST', `/api/tables/${table.id}/gate-submissions`, {
      token: server.user('STEWARD').accessToken,
      body: {},
    });
    expect(submitted.status).toBe(201);
    const patched = await server.request('PATCH', `/api/tables/${table.id}/semantic-contract`, {
      token: server.user('STEWARD').accessToken,
      body: { meaning: 'Customers, as the dashboard test reads them' },
    });
    expect(patched.status).toBe(200);
    const contract = submitted.body.tableVersion.contract as number;
    const queue = queueSection((await get('/dashboard', { cookie: await signIn() })).text);
    expect(queue).toContain(
      `stale: contract v${contract} → v${contract + 1} since; submit it again to certify`,
    );
    const page = (await get(`/dashboard/tables/${table.id}`, { cookie: await signIn() })).text;
    expect(page).toMatch(new RegExp(`data \\d+, contract\\s+${contract + 1}\\s*</dd>`));
    const rejected = await server.request('POST', `/api/tables/${table.id}/reject`, {
      token: server.user('STEWARD').accessToken,
      body: { reason: 'dashboard test' },
    });
    expect(rejected.status).toBe(200);
  });
});

describe('the tables list pages by key', () => {
  it('100 tables a page, a Next link carrying the cursor and the filters, filtered by state and environment', async () => {
    await copyTable(server, server.table('orders').id, 230, 'paged');
    const cookie = await signIn();
    const names = (text: string) =>
      [...text.matchAll(/<a href="\/dashboard\/tables\/[^"]+">(paged_\d+)<\/a>/g)].map((m) => m[1]);
    const next = (text: string) =>
      /<a rel="next" href="([^"]+)"\s*>/.exec(text)?.[1]?.replaceAll('&amp;', '&');

    const seen: string[] = [];
    let path: string | undefined = '/dashboard?env=dev';
    let pages = 0;
    while (path !== undefined) {
      const page = await get(path, { cookie });
      expect(page.status).toBe(200);
      const rowsOnPage = page.text.match(/<tr><td><a href="\/dashboard\/tables\//g) ?? [];
      expect(rowsOnPage.length).toBeLessThanOrEqual(100);
      seen.push(...names(page.text).filter((n): n is string => n !== undefined));
      path = next(page.text);
      if (path !== undefined) expect(path).toContain('env=dev');
      pages += 1;
    }
    expect(pages).toBeGreaterThanOrEqual(3);
    expect(seen).toEqual(Array.from({ length: 230 }, (_, i) => `paged_${i + 1}`));

    const production = await get('/dashboard?env=production', { cookie });
    expect(names(production.text)).toEqual([]);
    const [copy] = await server.sql<{ state: string }>(
      "SELECT state FROM gds.tables WHERE id = 'tbl_paged_1'",
    );
    const other = copy?.state === 'CERTIFIED' ? 'QUARANTINED' : 'CERTIFIED';
    const filtered = await get(`/dashboard?state=${other}`, { cookie });
    expect(names(filtered.text)).toEqual([]);
    expect(filtered.text).toContain(`<option value="${other}" selected>`);
    const bad = await get('/dashboard?cursor=nonsense&state=NOPE', { cookie });
    expect(bad.status).toBe(200);
    expect(bad.text).toContain('role="alert"');
    expect(bad.text.match(/<tr><td><a href="\/dashboard\/tables\//g)).toHaveLength(100);
  });

  it('at 20,000 tables a page is 100 rows and well under 1 MB', async () => {
    await copyTable(server, server.table('orders').id, 20_000, 'bulk');
    const response = await fetch(`${server.origin}/dashboard`, { headers: { cookie: await signIn() } });
    const bytes = Buffer.byteLength(await response.clone().text());
    expect(response.status).toBe(200);
    expect(bytes).toBeLessThan(1_000_000);
    expect((await response.text()).match(/<a href="\/dashboard\/tables\//g)?.length).toBeLessThanOrEqual(
      100 + 20,
    );
  });
});

describe('the tokens page', () => {
  const revokeForm = (text: string, tokenId: string) =>
    new RegExp(
      `action="/dashboard/tokens/revoke"><input type="hidden" name="csrf" value="([^"]+)"[^>]*><input\\s+type="hidden"\\s+name="token"\\s+value="${tokenId}"`,
    ).exec(text)?.[1];

  it('lists each integration token masked, with its issuer’s e-mail; a member sees and revokes only their own', async () => {
    const orders = server.table('orders');
    const mine = await server.issueToken('MEMBER', {
      name: 'member-feed',
      env: orders.environmentLabel,
      scopes: [{ tableId: orders.id, permissions: ['read'] }],
    });
    const owners = await server.issueToken('OWNER', {
      name: 'owner-audit',
      env: '*',
      scopes: ['workspace:read:audit'],
    });
    const memberCookie = await signIn('MEMBER');
    const page = await get('/dashboard/tokens', { cookie: memberCookie });
    expect(page.status).toBe(200);
    expectSecurityHeaders(page.headers);
    expect(page.text).toContain('<td>member-feed</td>');
    expect(page.text).toContain(`<td>${escapeHtml(server.user('MEMBER').email)}</td>`);
    expect(page.text).toMatch(/<td><code>tf_[^<]{4}…[^<]{4}<\/code><\/td>/);
    expect(page.text).not.toContain(mine.clientToken);
    expect(page.text).not.toContain(mine.tokens.accessToken);
    expect(page.text).not.toContain('owner-audit');
    const csrf = revokeForm(page.text, mine.id);
    expect(csrf).toBeDefined();

    // Without the form's token, or from another site: refused, nothing revoked.
    const revoked = () =>
      server.sql<{ revoked: boolean }>(
        'SELECT revoked_at IS NOT NULL AS revoked FROM gds.integration_tokens WHERE id = $1',
        [mine.id],
      );
    expect(
      (await post('/dashboard/tokens/revoke', { token: mine.id }, { cookie: memberCookie, ...sameOrigin() }))
        .status,
    ).toBe(403);
    expect(
      (
        await post(
          '/dashboard/tokens/revoke',
          { token: mine.id, csrf: csrf! },
          { cookie: memberCookie, origin: 'https://evil.example' },
        )
      ).status,
    ).toBe(403);
    expect((await revoked())[0]?.revoked).toBe(false);
    // Someone else's token: the service's own refusal, shown on the page.
    const refused = await post(
      '/dashboard/tokens/revoke',
      { token: owners.id, csrf: csrf! },
      { cookie: memberCookie, ...sameOrigin() },
    );
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('role="alert"');

    const done = await post(
      '/dashboard/tokens/revoke',
      { token: mine.id, csrf: csrf! },
      { cookie: memberCookie, ...sameOrigin() },
    );
    expect(done.status).toBe(303);
    expect((await revoked())[0]?.revoked).toBe(true);
    const after = await get('/dashboard/tokens', { cookie: memberCookie });
    expect(revokeForm(after.text, mine.id)).toBeUndefined();
    expect(after.text).toMatch(/<td>revoked \d{4}-/);
  });

  it('an OWNER sees the workspace’s tokens with a revoke button on each', async () => {
    const page = await get('/dashboard/tokens', { cookie: await signIn() });
    expect(page.text).toContain('<td>owner-audit</td>');
    const [live] = await server.sql<{ id: string }>(
      `SELECT id FROM gds.integration_tokens WHERE name = 'owner-audit' AND revoked_at IS NULL`,
    );
    expect(revokeForm(page.text, live!.id)).toBeDefined();
  });
});
