// Two `npm run server -- --database-url …` processes on one PostgreSQL behave as one
// service, whichever of them a request reaches (as behind a load balancer). Both start at the same moment on
// an empty database; then requests alternate between them: the table-endpoint rate limit is one window per
// token across both, a refresh token is single-use across both, a device code started on one is approved on
// the other and redeemed on the first, a dashboard sign-in made on one works on the other, and a gate job
// queued on one runs exactly once.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/server/db/migrations.js';
import { HEARTBEAT_MS } from '../../src/server/governance/jobs.js';
import type { ServerProcess } from '../helpers/server-process.js';
import { startServerProcess, waitFor } from '../helpers/server-process.js';
import type { ReadyInfo } from '../helpers/server.js';
import { createPostgresDatabase } from '../helpers/server.js';
import { needs, noPostgres } from '../helpers/skip.js';

/** Table-endpoint requests per minute per token: small, so the shared window fills in a few requests. */
const RATE_LIMIT = 10;
/** Where people would reach the two (a load balancer); requests here go to each process's own address. */
const PUBLIC_URL = 'https://gds.example.com';
/** Behind one --public-url, every process takes the same sign-in secret (test/server/sign-in-secret.test.ts). */
const SIGN_IN_SECRET = 'two-processes-sign-in-secret';

interface Node {
  name: 'A' | 'B';
  process: ServerProcess;
  ready: ReadyInfo;
  url: string;
}

interface Answer {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests index into bodies freely
  body: any;
}

async function call(
  node: Node,
  method: string,
  path: string,
  options: {
    token?: string;
    json?: unknown;
    form?: Record<string, string>;
    cookie?: string;
    /** Another client address (a loopback one): requests sent through it count against its own limits. */
    via?: Agent;
  } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { origin: node.ready.origin };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.cookie) headers.cookie = options.cookie;
  let body: string | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  }
  // The REST paths are under the REST base URL; the sign-in endpoints and the dashboard at the origin.
  const base = path.startsWith('/api/') ? node.ready.baseUrl : node.ready.origin;
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    redirect: 'manual',
    ...(body === undefined ? {} : { body }),
    ...(options.via ? { dispatcher: options.via } : {}),
  });
  const text = await response.text();
  const json = (response.headers.get('content-type') ?? '').startsWith('application/json');
  return { status: response.status, headers: response.headers, body: json && text ? JSON.parse(text) : text };
}

describe('two server processes on one PostgreSQL', needs(noPostgres), () => {
  const dir = mkdtempSync(join(tmpdir(), 'gds-two-'));
  /** Both processes' --clock-offset-file: read at each request, it moves both clocks from here. */
  const clockOffsetFile = join(dir, 'clock-offset');
  let database: { url: string; drop(): Promise<void> };
  let sql: pg.Client;
  let a: Node;
  let b: Node;
  /** A, B, A, B, …: the next node a request goes to, as a round-robin load balancer does. */
  let turn = 0;
  const next = () => ((turn += 1) % 2 === 1 ? a : b);
  const owner = (node: Node) => {
    const user = node.ready.users.find((u) => u.role === 'OWNER');
    if (!user) throw new Error('no OWNER in the ready file');
    return user;
  };
  const table = (name: string) => {
    const found = a.ready.tables.find((t) => t.name === name);
    if (!found) throw new Error(`no table ${name}`);
    return found.id;
  };

  beforeAll(async () => {
    database = await createPostgresDatabase();
    sql = new pg.Client({ connectionString: database.url });
    await sql.connect();
    // Started at the same moment on the empty database: both migrate and seed at once unless serialized.
    const started = (['A', 'B'] as const).map((name) => {
      const readyFile = join(dir, name, 'ready.json');
      const process = startServerProcess(
        [
          ...['--database-url', database.url, '--port', '0', '--ready-file', readyFile],
          // The address of the load balancer in front of both: the tokens' issuer.
          ...['--rate-limit', String(RATE_LIMIT), '--public-url', PUBLIC_URL],
          ...['--clock-offset-file', clockOffsetFile],
        ],
        { GDS_SIGN_IN_SECRET: SIGN_IN_SECRET },
      );
      return { name, process, readyFile };
    });
    await Promise.all(
      started.map(({ process, readyFile, name }) =>
        waitFor(() => {
          if (process.child.exitCode !== null)
            throw new Error(`server ${name} exited: ${process.output.stderr}`);
          return existsSync(readyFile) && process.output.stdout.includes('whole tokens');
        }, `server ${name}'s ready file`),
      ),
    );
    [a, b] = started.map(({ name, process, readyFile }) => {
      const ready = JSON.parse(readFileSync(readyFile, 'utf8')) as ReadyInfo;
      return { name, process, ready, url: ready.baseUrl };
    }) as [Node, Node];
  });

  afterAll(async () => {
    for (const node of [a, b]) node?.process.signal('SIGTERM');
    await Promise.all([a, b].map((node) => node?.process.closed));
    await sql?.end();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('both come up on the empty database started together: migrated once, seeded once, one signing key', async () => {
    expect(a.url).not.toBe(b.url);
    expect(a.ready.workspaceId).toBe(b.ready.workspaceId);
    expect(a.ready.tables.map((t) => t.id)).toEqual(b.ready.tables.map((t) => t.id));
    const count = async (query: string) => (await sql.query<{ n: number }>(query)).rows[0]?.n ?? 0;
    expect(await count('SELECT count(*)::int AS n FROM gds.schema_migrations')).toBe(MIGRATIONS.length);
    expect(await count('SELECT count(*)::int AS n FROM gds.workspaces')).toBe(a.ready.workspaces.length);
    expect(await count('SELECT count(*)::int AS n FROM gds.signing_keys')).toBe(1);
    const jwks = await Promise.all([a, b].map((node) => call(node, 'GET', '/.well-known/jwks.json')));
    expect(jwks[0]?.body).toEqual(jwks[1]?.body);
    // Each process's tokens work on the other.
    expect((await call(b, 'GET', '/api/me', { token: owner(a).accessToken })).status).toBe(200);
    expect((await call(a, 'GET', '/api/me', { token: owner(b).cliToken })).status).toBe(200);
  });

  it(`counts a token's table-endpoint requests in one window across both: the ${RATE_LIMIT + 1}th is 429`, async () => {
    const crm = table('crm_contacts');
    const issued = await call(a, 'POST', '/api/integration/tokens', {
      token: owner(a).accessToken,
      json: { name: 'shared-limit', env: '*', scopes: [{ tableId: crm, permissions: ['read'] }] },
    });
    expect(issued.status).toBe(201);
    const token = issued.body.tokens.accessToken as string;
    const answers: Array<{ node: string; status: number; remaining: string | null; reset: string | null }> =
      [];
    for (let i = 0; i < RATE_LIMIT + 2; i += 1) {
      const node = next();
      const answer = await call(node, 'GET', `/api/tables/${crm}/records?limit=1`, { token });
      answers.push({
        node: node.name,
        status: answer.status,
        remaining: answer.headers.get('x-ratelimit-remaining'),
        reset: answer.headers.get('x-ratelimit-reset'),
      });
    }
    expect(new Set(answers.map((x) => x.node))).toEqual(new Set(['A', 'B']));
    expect(answers.map((x) => x.status)).toEqual([...Array(RATE_LIMIT).fill(200), 429, 429]);
    expect(answers.map((x) => x.remaining)).toEqual([
      ...Array.from({ length: RATE_LIMIT }, (_, i) => String(RATE_LIMIT - 1 - i)),
      '0',
      '0',
    ]);
    // One window: both processes announce the same reset.
    expect(new Set(answers.map((x) => x.reset)).size).toBe(1);
    // Another token has its own window on both.
    const other = await call(b, 'POST', '/api/integration/tokens', {
      token: owner(b).accessToken,
      json: { name: 'other-limit', env: '*', scopes: [{ tableId: crm, permissions: ['read'] }] },
    });
    const fresh = await call(a, 'GET', `/api/tables/${crm}/records?limit=1`, {
      token: other.body.tokens.accessToken,
    });
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('x-ratelimit-remaining')).toBe(String(RATE_LIMIT - 1));

    // Sent all at once, half to each: exactly the limit gets through.
    const burst = await call(a, 'POST', '/api/integration/tokens', {
      token: owner(a).accessToken,
      json: { name: 'burst', env: '*', scopes: [{ tableId: crm, permissions: ['read'] }] },
    });
    const statuses = await Promise.all(
      Array.from({ length: 2 * RATE_LIMIT }, (_, i) =>
        call(i % 2 === 0 ? a : b, 'GET', `/api/tables/${crm}/records?limit=1`, {
          token: burst.body.tokens.accessToken,
        }).then((answer) => answer.status),
      ),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(RATE_LIMIT);
    expect(statuses.filter((status) => status === 429)).toHaveLength(RATE_LIMIT);
  });
  it('spends an integration refresh token once across both: reuse on the other revokes the family', async () => {
    const crm = table('crm_contacts');
    const issued = await call(a, 'POST', '/api/integration/tokens', {
      token: owner(a).accessToken,
      json: { name: 'single-use', env: '*', scopes: [{ tableId: crm, permissions: ['read'] }] },
    });
    const first = issued.body.tokens.refreshToken as string;
    const refreshed = await call(a, 'POST', '/api/integration/refresh', { json: { refreshToken: first } });
    expect(refreshed.status).toBe(200);
    const reused = await call(b, 'POST', '/api/integration/refresh', { json: { refreshToken: first } });
    expect(reused.status).toBe(401);
    expect(reused.body.error.code).toBe('refresh_token_reused');
    // The family is revoked on both: the access token the first refresh gave, and its refresh token.
    const read = await call(a, 'GET', `/api/tables/${crm}/records?limit=1`, {
      token: refreshed.body.tokens.accessToken,
    });
    expect(read.status).toBe(401);
    expect(read.body.error.code).toBe('token_revoked');
    const successor = await call(a, 'POST', '/api/integration/refresh', {
      json: { refreshToken: refreshed.body.tokens.refreshToken },
    });
    expect(successor.status).toBe(401);

    // The same refresh token sent to both at once: one of them answers it.
    const again = await call(b, 'POST', '/api/integration/tokens', {
      token: owner(b).accessToken,
      json: { name: 'raced', env: '*', scopes: [{ tableId: crm, permissions: ['read'] }] },
    });
    const raced = await Promise.all(
      [a, b].map((node) =>
        call(node, 'POST', '/api/integration/refresh', {
          json: { refreshToken: again.body.tokens.refreshToken },
        }),
      ),
    );
    expect(raced.map((r) => r.status).sort()).toEqual([200, 401]);
    const { rows } = await sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM gds.audit_log
        WHERE action = 'INTEGRATION_TOKEN_REFRESHED' AND details->>'tokenId' = $1`,
      [again.body.id],
    );
    expect(rows[0]?.n).toBe(1);
  });

  it('redeems on A a device code started on A and approved on B; the session refreshes once across both', async () => {
    const device = await call(a, 'POST', '/oauth/device/code', { form: { client_id: 'gds-cli' } });
    expect(device.status).toBe(200);
    expect(device.body.verification_uri).toBe(`${PUBLIC_URL}/device`);
    const redeem = () =>
      call(a, 'POST', '/oauth/token', {
        form: {
          grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
          device_code: device.body.device_code,
          client_id: 'gds-cli',
        },
      });
    const approved = await call(b, 'POST', '/device', {
      form: {
        user_code: device.body.user_code,
        email: owner(b).email,
        action: 'approve',
        secret: SIGN_IN_SECRET,
      },
    });
    expect(approved.status).toBe(200);
    expect(approved.body).toContain('Signed in');
    const tokens = await redeem();
    expect(tokens.status).toBe(200);
    expect((await call(b, 'GET', '/api/me', { token: tokens.body.access_token })).status).toBe(200);
    // Redeemed once: B does not redeem it again.
    const twice = await call(b, 'POST', '/oauth/token', {
      form: {
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code: device.body.device_code,
        client_id: 'gds-cli',
      },
    });
    expect(twice.status).toBe(400);
    expect(twice.body.error).toBe('invalid_grant');

    const refresh = (node: Node, token: string) =>
      call(node, 'POST', '/oauth/token', {
        form: { grant_type: 'refresh_token', refresh_token: token, client_id: 'gds-cli' },
      });
    const rotated = await refresh(b, tokens.body.refresh_token);
    expect(rotated.status).toBe(200);
    const reused = await refresh(a, tokens.body.refresh_token);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe('invalid_grant');
    // Reuse revoked the sign-in: the rotated access token is refused by both.
    for (const node of [a, b])
      expect((await call(node, 'GET', '/api/me', { token: rotated.body.access_token })).status).toBe(401);
  });

  it('knows a dashboard sign-in made on A on B, and a sign-out on B on A', async () => {
    const signedIn = await call(a, 'POST', '/dashboard/sign-in', {
      form: { email: owner(a).email, next: '/dashboard', secret: SIGN_IN_SECRET },
    });
    expect(signedIn.status).toBe(303);
    const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    expect(cookie).toMatch(/^gds_dashboard=.+/);
    const page = await call(b, 'GET', '/dashboard', { cookie });
    expect(page.status).toBe(200);
    expect(page.body).toContain(owner(a).email);
    expect((await call(b, 'POST', '/dashboard/sign-out', { cookie })).status).toBe(303);
    const after = await call(a, 'GET', '/dashboard', { cookie });
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('sign_in_required');
  });

  it('runs each gate job queued on A exactly once, by one of the two workers', async () => {
    const orders = table('orders');
    const queued: string[] = [];
    for (let i = 0; i < 8; i += 1) {
      const accepted = await call(next(), 'POST', `/api/tables/${orders}/gate-runs`, {
        token: owner(a).cliToken,
        json: { gate: 2 },
      });
      expect(accepted.status).toBe(202);
      queued.push(accepted.body.job.id);
    }
    const finished = async () =>
      (
        await sql.query<{ id: string; status: string; attempts: number; claimed_by: string | null }>(
          `SELECT id, status, attempts, claimed_by FROM gds.jobs WHERE id = ANY($1::text[]) ORDER BY id`,
          [queued],
        )
      ).rows;
    for (let i = 0; i < 600 && (await finished()).some((j) => j.status !== 'SUCCEEDED'); i += 1)
      await new Promise((resolve) => setTimeout(resolve, 200));
    const jobs = await finished();
    expect(jobs.map((j) => [j.status, j.attempts])).toEqual(queued.map(() => ['SUCCEEDED', 1]));
    for (const job of jobs) expect(job.claimed_by).toMatch(/:\d+:[0-9a-f]{8}$/);
    // Each answers the same from either process.
    const [one] = queued;
    const views = await Promise.all(
      [a, b].map((node) => call(node, 'GET', `/api/gate-jobs/${one}`, { token: owner(node).cliToken })),
    );
    expect(views[0]?.body).toEqual(views[1]?.body);
  });

  it('queues again a job whose process died while running it, and fails one that died too often', async () => {
    const orders = table('orders');
    const orphan = async (id: string, attempts: number) =>
      sql.query(
        `INSERT INTO gds.jobs (id, workspace_id, table_id, type, status, params, created_by, created_at, started_at,
                               heartbeat_at, claimed_by, attempts)
         VALUES ($1, $2, $3, 'gate2', 'RUNNING', '{}', $4, now() - interval '1 hour', now() - interval '1 hour',
                 now() - interval '1 hour', 'gone-host:4242:deadbeef', $5)`,
        [id, a.ready.workspaceId, orders, owner(a).userId, attempts],
      );
    await orphan('job_orphan_once', 1);
    await orphan('job_orphan_often', 3);
    // A worker looks for such jobs once a heartbeat period: both clocks move one period on (each process reads
    // the offset at its next request) instead of the test waiting up to 15 s for the next look.
    writeFileSync(clockOffsetFile, String(Math.ceil(HEARTBEAT_MS / 1000) + 1));
    for (const node of [a, b]) expect((await call(node, 'GET', '/.well-known/jwks.json')).status).toBe(200);
    const rows = async () =>
      (
        await sql.query<{
          id: string;
          status: string;
          attempts: number;
          claimed_by: string;
          error: unknown;
        }>(
          `SELECT id, status, attempts, claimed_by, error FROM gds.jobs WHERE id LIKE 'job_orphan_%' ORDER BY id`,
        )
      ).rows;
    for (
      let i = 0;
      i < 600 && (await rows()).some((j) => j.status === 'RUNNING' || j.status === 'QUEUED');
      i += 1
    )
      await new Promise((resolve) => setTimeout(resolve, 200));
    const [often, once] = await rows();
    expect(once).toMatchObject({ status: 'SUCCEEDED', attempts: 2 });
    expect(once?.claimed_by).not.toBe('gone-host:4242:deadbeef');
    expect(often).toMatchObject({ status: 'FAILED', attempts: 3 });
    expect(JSON.stringify(often?.error)).toContain('gone-host:4242:deadbeef');
  });
  it('limits failed authentications of one address across both (300 a minute), give or take one per process', async () => {
    // From 127.0.0.2, an address of its own: nothing before counted against it.
    const via = new Agent({ localAddress: '127.0.0.2' });
    const statuses: number[] = [];
    for (let i = 0; i < 304; i += 1) {
      const token = `cli_bogus_${i}_${'x'.repeat(20)}`;
      statuses.push((await call(next(), 'GET', '/api/me', { token, via })).status);
    }
    expect(statuses.slice(0, 300)).toEqual(Array(300).fill(401));
    // The process that counted the 300th refuses at once; the other learns it at its own next failure.
    expect(statuses.slice(300).filter((status) => status === 401).length).toBeLessThanOrEqual(1);
    expect(statuses.slice(302)).toEqual([429, 429]);
    for (const node of [a, b]) {
      // Now even a good credential from this address is refused by both, before it is looked at…
      const refused = await call(node, 'GET', '/api/me', { token: owner(node).cliToken, via });
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('rate_limited');
      // …and from another address it is not.
      expect((await call(node, 'GET', '/api/me', { token: owner(node).cliToken })).status).toBe(200);
    }
    await via.close();
  });
});
