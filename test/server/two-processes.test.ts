// Issue 25 item 8: two `npm run server -- --database-url …` processes on one PostgreSQL behave as one
// service, whichever of them a request reaches (as behind a load balancer). Both start at the same moment on
// an empty database; then requests alternate between them: the table-endpoint rate limit is one window per
// token across both, a refresh token is single-use across both, a device code started on one is approved on
// the other and redeemed on the first, a dashboard sign-in made on one works on the other, and a gate job
// queued on one runs exactly once.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/server/db/migrations.js';
import type { ServerProcess } from '../helpers/server-process.js';
import { startServerProcess, waitFor } from '../helpers/server-process.js';
import type { ReadyInfo } from '../helpers/server.js';
import { createPostgresDatabase } from '../helpers/server.js';
import { needs, noPostgres } from '../helpers/skip.js';

/** Table-endpoint requests per minute per token: small, so the shared window fills in a few requests. */
const RATE_LIMIT = 10;
/** Where people would reach the two (a load balancer); requests here go to each process's own address. */
const PUBLIC_URL = 'https://gds.example.com';

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
  options: { token?: string; json?: unknown; form?: Record<string, string>; cookie?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { origin: node.url };
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
  const response = await fetch(`${node.url}${path}`, {
    method,
    headers,
    redirect: 'manual',
    ...(body === undefined ? {} : { body }),
  });
  const text = await response.text();
  const json = (response.headers.get('content-type') ?? '').startsWith('application/json');
  return { status: response.status, headers: response.headers, body: json && text ? JSON.parse(text) : text };
}

describe('two server processes on one PostgreSQL', needs(noPostgres), () => {
  const dir = mkdtempSync(join(tmpdir(), 'gds-two-'));
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
      const process = startServerProcess([
        ...['--database-url', database.url, '--port', '0', '--ready-file', readyFile],
        // The address of the load balancer in front of both: the tokens' issuer.
        ...['--rate-limit', String(RATE_LIMIT), '--public-url', PUBLIC_URL],
      ]);
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
  }, 180_000);

  afterAll(async () => {
    for (const node of [a, b]) node?.process.signal('SIGTERM');
    await Promise.all([a, b].map((node) => node?.process.closed));
    await sql?.end();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

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
  });
});
