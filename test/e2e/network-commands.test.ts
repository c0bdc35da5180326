// The network commands, run by gds in the test process (runInProcess), against a real reference server in
// this process: what the server sees and stores, exit codes, stdout against stderr, NDJSON. A terminal is a
// real `gds` process (node bin/run.js over dist/) under `script`.
// Every output of every run is kept; no run may print a credential whole (checked at the end).
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry, IssuedToken, Member } from '../../src/contract/types.js';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { ensureBuilt, runInTerminal } from '../cli/helpers/cli-process.js';
import type { InProcessOptions } from '../helpers/run-in-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;
let dir: string;
let crm: string;
/** Credentials handed to gds in some run: none may appear whole in any output. */
const secrets: string[] = [];
const outputs: string[] = [];

beforeAll(async () => {
  [server] = await Promise.all([startTestServer({ refreshGraceMs: 30_000 }), ensureBuilt()]);
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-net-'));
  crm = server.table('crm_contacts').id;
  for (const user of server.ready.users) secrets.push(user.accessToken, user.cliToken);
});

afterAll(async () => {
  await server?.close();
  expect(outputs.length).toBeGreaterThan(0);
  for (const output of outputs) {
    for (const secret of secrets) expect(output).not.toContain(secret);
  }
});

let folders = 0;
function configDir(): string {
  folders += 1;
  return join(dir, `c${folders}`, 'gds');
}

interface GdsOptions extends InProcessOptions {
  configDir?: string;
}

/** Runs gds against the test server with an empty config of its own unless told otherwise. */
async function gds(args: string[], options: GdsOptions = {}): Promise<CliResult> {
  const result = await runInProcess(args, {
    ...options,
    env: {
      GDS_CONFIG_DIR: options.configDir ?? configDir(),
      GDS_SECRET_STORAGE: 'file',
      SERVICE_API_URL: server.url,
      ...options.env,
    },
  });
  outputs.push(result.stdout, result.stderr);
  return result;
}

function lines(text: string): unknown[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown);
}

function jwtSubject(jwt: string): string {
  const payload = jwt.split('.')[1] ?? '';
  return (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sub: string }).sub;
}

async function issue(
  role: Parameters<TestServer['issueToken']>[0],
  request: Parameters<TestServer['issueToken']>[1],
) {
  const issued = await server.issueToken(role, request);
  secrets.push(issued.tokens.accessToken, issued.tokens.refreshToken);
  return issued;
}

const dataToken = (permissions: Array<'read' | 'write'>) =>
  issue('OWNER', {
    name: `data-${permissions.join('-')}`,
    env: '*',
    scopes: [{ tableId: crm, permissions }],
  });
const managementToken = (scopes: Array<'workspace:read:audit' | 'workspace:read:members'>) =>
  issue('OWNER', { name: `mgmt-${scopes.join('-')}`, env: '*', scopes });

async function serverMembers(): Promise<Member[]> {
  const res = await server.request('GET', '/api/workspace/members', {
    token: server.user('OWNER').accessToken,
  });
  return (res.body as { members: Member[] }).members;
}

async function serverAuditIds(): Promise<string[]> {
  const ids: string[] = [];
  let cursor = '';
  do {
    const query: string = cursor === '' ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const res = await server.request('GET', `/api/workspace/audit-log?limit=200${query}`, {
      token: server.user('OWNER').accessToken,
    });
    const page = res.body as { entries: AuditEntry[]; nextCursor: string };
    ids.push(...page.entries.map((e) => e.id));
    cursor = page.nextCursor;
  } while (cursor !== '');
  return ids;
}

describe('gds api', () => {
  it('GET with a session token: the body on stdout as one compact line, nothing on stderr', async () => {
    const r = await gds(['api', '/api/workspace/members'], {
      env: { SERVICE_TOKEN: server.user('MEMBER').accessToken },
    });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout.split('\n')).toHaveLength(2);
    expect(lines(r.stdout)).toEqual([{ members: await serverMembers() }]);
  });

  it('on a terminal the body is indented and coloured, as gh api prints it', async () => {
    const { result } = runInTerminal(`node_modules/.bin/node bin/run.js api /api/workspace/members`, {
      GDS_CONFIG_DIR: configDir(),
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user('OWNER').cliToken,
    });
    const r = await result;
    outputs.push(r.stdout, r.stderr);
    expect(r.code).toBe(0);
    expect(stripVTControlCharacters(r.stdout)).toContain('{\r\n  "members": [\r\n    {');
    expect(r.stdout).toContain('\u001b[1m\u001b[34m"members"');
  });

  it('-X GET with typed fields goes into the query', async () => {
    const r = await gds(['api', '/api/workspace/audit-log', '-X', 'GET', '-F', 'limit=2'], {
      env: { SERVICE_TOKEN: server.user('OWNER').cliToken },
    });
    expect(r.code).toBe(0);
    const [page] = lines(r.stdout) as Array<{ entries: unknown[] }>;
    expect(page?.entries).toHaveLength(2);
  });

  it('GDS_TYPED_FIELD and GDS_HEADER are not read: only -F and -H shape the call', async () => {
    const r = await gds(['api', '/api/workspace/audit-log', '-X', 'GET', '--json', '-F', 'limit=1'], {
      env: {
        SERVICE_TOKEN: server.user('OWNER').cliToken,
        GDS_TYPED_FIELD: 'limit=3',
        GDS_HEADER: 'X-Trace: e2e',
      },
    });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const [page] = lines(r.stdout) as Array<{ entries: unknown[] }>;
    expect(page?.entries).toHaveLength(1);
  });

  it('fields make a POST with a JSON body: the record exists on the server afterwards', async () => {
    const token = (await dataToken(['read', 'write'])).tokens.accessToken;
    const r = await gds(
      [
        'api',
        `/api/tables/${crm}/records`,
        '-f',
        'email=e2e@example.com',
        '-f',
        'full_name=End To End',
        '-F',
        'score=7',
      ],
      { env: { SERVICE_TOKEN: token } },
    );
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const [created] = lines(r.stdout) as Array<{ id: string }>;
    const stored = await server.request('GET', `/api/tables/${crm}/records?search=e2e@example.com`, {
      token,
    });
    expect(stored.body.records).toEqual([
      expect.objectContaining({ id: created?.id, full_name: 'End To End', score: 7 }),
    ]);
  });

  it('--input - sends stdin as the body', async () => {
    const token = (await dataToken(['read', 'write'])).tokens.accessToken;
    const body = { records: [{ data: { email: 'stdin@example.com', full_name: 'From Stdin' } }] };
    const r = await gds(['api', `/api/tables/${crm}/bulk-update`, '--input', '-', '--json'], {
      env: { SERVICE_TOKEN: token },
      input: JSON.stringify(body),
    });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(lines(r.stdout)).toEqual([expect.objectContaining({ created: 1, updated: 0 })]);
  });

  it('an unknown path: the error body on stderr, exit 5', async () => {
    const r = await gds(['api', '/api/nothing-here', '--json'], {
      env: { SERVICE_TOKEN: server.user('OWNER').cliToken },
    });
    expect(r).toMatchObject({ code: 5, stdout: '' });
    expect(lines(r.stderr)).toEqual([{ error: expect.objectContaining({ code: 'route_not_found' }) }]);
    // The contract documents 404 route_not_found (NotFound) for every path no route serves.
    expect(server.violations()).toEqual([]);
  });

  it('an absolute URL is refused (exit 2) and nothing reaches any server', async () => {
    const r = await gds(['api', `${server.url}/api/workspace/members`], {
      env: { SERVICE_TOKEN: server.user('OWNER').cliToken },
    });
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain('is not a path of the service');
  });
});

describe('gds audit list', () => {
  it('--json --all: every line parses, one per entry, the same entries as the server in the same order', async () => {
    // More than one page of 200: two write tokens, so no token reaches the per-minute limit.
    const writers = await Promise.all([dataToken(['write']), dataToken(['write'])]);
    for (let batch = 0; batch < 21; batch += 1) {
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          server.request('POST', `/api/tables/${crm}/records`, {
            token: writers[i % 2]?.tokens.accessToken,
            body: { email: `bulk${batch}_${i}@example.com`, full_name: `Bulk ${batch} ${i}` },
          }),
        ),
      );
    }
    const token = (await managementToken(['workspace:read:audit'])).tokens.accessToken;
    const r = await gds(['audit', 'list', '--json', '--all'], { env: { SERVICE_TOKEN: token } });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const entries = lines(r.stdout) as AuditEntry[];
    const expected = await serverAuditIds();
    expect(expected.length).toBeGreaterThan(200);
    expect(entries.map((e) => e.id)).toEqual(expected);
  });

  it('filters by --event-type and --limit; a person sees a table and the hint that there is more', async () => {
    const json = await gds(['audit', 'list', '--json', '--event-type', 'RECORD_CREATED', '--limit', '3'], {
      env: { SERVICE_TOKEN: server.user('MEMBER').cliToken },
    });
    expect(json.code).toBe(0);
    const entries = lines(json.stdout) as AuditEntry[];
    expect(entries).toHaveLength(3);
    expect(new Set(entries.map((e) => e.action))).toEqual(new Set(['RECORD_CREATED']));

    const human = await gds(['audit', 'list', '--limit', '2', '--event-type', 'RECORD_CREATED'], {
      env: { SERVICE_TOKEN: server.user('MEMBER').cliToken },
    });
    expect(human.code).toBe(0);
    const rows = human.stdout
      .trimEnd()
      .split('\n')
      .map((row) => row.split('\t'));
    expect(rows.map((row) => row[1])).toEqual(['RECORD_CREATED', 'RECORD_CREATED']);
    // §2.4's gateModeAtEvaluation: the gate mode of the table when the entry was written.
    const gate = server.table('crm_contacts').gateMode;
    expect(rows.map((row) => row[6])).toEqual([gate, gate]);
    expect(human.stderr).toBe('Showing the newest 2; --all shows every entry, --limit up to 200.\n');
  });

  it('a MANAGEMENT token without workspace:read:audit: exit 4 naming the scope', async () => {
    const token = (await managementToken(['workspace:read:members'])).tokens.accessToken;
    const r = await gds(['audit', 'list'], { env: { SERVICE_TOKEN: token } });
    expect(r).toMatchObject({ code: 4, stdout: '' });
    expect(r.stderr).toContain('This call needs the scope workspace:read:audit');
    const json = await gds(['audit', 'list', '--json'], { env: { SERVICE_TOKEN: token } });
    expect(json.code).toBe(4);
    expect(lines(json.stderr)).toEqual([
      {
        error: {
          code: 'missing_scope',
          message: expect.not.stringContaining('(403 on GET'),
          suggestion: expect.stringContaining('This call needs the scope workspace:read:audit'),
          details: expect.objectContaining({
            status: 403,
            request: 'GET /api/workspace/audit-log',
            server: { requiredScope: 'workspace:read:audit' },
          }),
        },
      },
    ]);
  });
});

describe('gds members list', () => {
  it('a table of the members; the platform operator never shows', async () => {
    const operator = server.user('PLATFORM_OPERATOR');
    const r = await gds(['members', 'list'], { env: { SERVICE_TOKEN: server.user('OWNER').cliToken } });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    for (const m of await serverMembers()) expect(r.stdout).toContain(m.email);
    expect(r.stdout).not.toContain(operator.email);
    expect(r.stdout.indexOf('owner@example.com')).toBeLessThan(r.stdout.indexOf('member@example.com'));
  });

  it('--json with a MANAGEMENT token: one line per member, owners first', async () => {
    const token = (await managementToken(['workspace:read:members'])).tokens.accessToken;
    const r = await gds(['members', 'list', '--json'], { env: { SERVICE_TOKEN: token } });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const members = lines(r.stdout) as Member[];
    expect(members.map((m) => m.role)).toEqual(['OWNER', 'ADMIN', 'STEWARD', 'MEMBER']);
    expect(members.map((m) => m.userId)).not.toContain(server.user('PLATFORM_OPERATOR').userId);
  });
});

describe('gds tokens issue and refresh', () => {
  it('issue shows the tokens once and stores nothing; refresh rotates; the spent refresh token gets the same pair within the grace window, then fails with exit 3', async () => {
    const cfg = configDir();
    const env = { SERVICE_TOKEN: server.user('OWNER').cliToken };
    const issued = await gds(
      ['tokens', 'issue', '--name', 'e2e', '--env', '*', '--table', `${crm}:read`, '--json'],
      {
        configDir: cfg,
        env,
      },
    );
    expect(issued).toMatchObject({ code: 0, stderr: '' });
    const [token] = lines(issued.stdout) as IssuedToken[];
    expect(token).toMatchObject({ audience: 'DATA-API', env: '*', name: 'e2e' });
    expect(await readdir(join(cfg, '..')).catch(() => [])).toEqual([]);

    // The access token works on the table it was given.
    const read = await gds(
      ['api', `/api/tables/${crm}/records?limit=1`, '--token', token?.tokens.accessToken ?? ''],
      {
        configDir: cfg,
      },
    );
    expect(read.code).toBe(0);

    const refreshed = await gds(['tokens', 'refresh', '--json'], {
      configDir: cfg,
      input: `${token?.tokens.refreshToken}\n`,
    });
    expect(refreshed).toMatchObject({ code: 0, stderr: '' });
    const [rotated] = lines(refreshed.stdout) as Array<{ tokens: IssuedToken['tokens'] }>;
    expect(rotated?.tokens.refreshToken).not.toBe(token?.tokens.refreshToken);

    // Within the service's reuse grace window the spent token gets the same pair again (a lost answer).
    const repeated = await gds(['tokens', 'refresh', '--json'], {
      configDir: cfg,
      input: token?.tokens.refreshToken ?? '',
    });
    expect(repeated).toMatchObject({ code: 0, stderr: '' });
    expect(lines(repeated.stdout)).toEqual([rotated]);

    server.clock.advance(31_000);
    let again;
    try {
      again = await gds(['tokens', 'refresh', '--refresh-token', '-'], {
        configDir: cfg,
        input: token?.tokens.refreshToken ?? '',
      });
    } finally {
      server.clock.reset();
    }
    expect(again).toMatchObject({ code: 3, stdout: '' });
    expect(again.stderr).toContain('This refresh token was already used');
    expect(again.stderr).not.toContain(token?.tokens.refreshToken ?? '');
    // Reuse revoked the whole family, the rotated tokens included.
    const revoked = await server.request('GET', `/api/tables/${crm}/records?limit=1`, {
      token: rotated?.tokens.accessToken ?? '',
    });
    expect(revoked.status).toBe(401);
  });

  it('human: the secrets on stdout, the shown-once warning on stderr', async () => {
    const r = await gds(
      ['tokens', 'issue', '--name', 'from-env', '--env', 'dev', '--scope', 'workspace:read:members'],
      { env: { SERVICE_TOKEN: server.user('ADMIN').cliToken } },
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^✓ Issued MANAGEMENT token itk_\w+ "from-env" for environment dev\.\n/);
    expect(r.stdout).toMatch(/^Scopes: {8}workspace:read:members\n/);
    expect(r.stdout).toMatch(/Access token: {2}eyJ/);
    expect(r.stdout).toMatch(/Refresh token: \S+\.\S+\n/);
    expect(r.stderr).toContain('Shown once: gds has not stored these tokens and cannot show them again.');
  });

  it('refresh with nothing on stdin: exit 2 saying how to give the token', async () => {
    const r = await gds(['tokens', 'refresh'], { input: '' });
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain('No refresh token on stdin.');
    expect(r.stderr).toContain('printf %s "$REFRESH_TOKEN" | gds tokens refresh');
  });

  it('a MEMBER may not grant a table it does not own: exit 4', async () => {
    const r = await gds(['tokens', 'issue', '--name', 'x', '--env', 'dev', '--table', `${crm}:read`], {
      env: { SERVICE_TOKEN: server.user('MEMBER').cliToken },
    });
    expect(r).toMatchObject({ code: 4, stdout: '' });
  });
});

describe('credential precedence, seen by the server as the user who issues a token', () => {
  const issueAs = async (args: string[], options: GdsOptions) => {
    const r = await gds(
      [
        'tokens',
        'issue',
        '--name',
        'who',
        '--env',
        'dev',
        '--scope',
        'workspace:write:definition',
        '--json',
        ...args,
      ],
      options,
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const [token] = lines(r.stdout) as IssuedToken[];
    return jwtSubject(token?.tokens.accessToken ?? '');
  };

  it('--token over SERVICE_TOKEN over the profile (made with gds auth set)', async () => {
    const cfg = configDir();
    const set = await gds(['auth', 'set', '--token', server.user('STEWARD').cliToken, '--base', server.url], {
      configDir: cfg,
      env: { SERVICE_API_URL: undefined },
    });
    expect(set.code).toBe(0);
    const flag = ['--token', server.user('OWNER').cliToken];
    const env = { SERVICE_TOKEN: server.user('ADMIN').cliToken };
    expect(await issueAs(flag, { configDir: cfg, env })).toBe(server.user('OWNER').userId);
    expect(await issueAs([], { configDir: cfg, env })).toBe(server.user('ADMIN').userId);
    expect(await issueAs([], { configDir: cfg, env: { SERVICE_API_URL: undefined } })).toBe(
      server.user('STEWARD').userId,
    );
  });
});

describe('exit codes', () => {
  it('3: no token anywhere, saying how to get one', async () => {
    const r = await gds(['members', 'list']);
    expect(r).toMatchObject({ code: 3, stdout: '' });
    expect(r.stderr).toContain('Unauthorized: no API token');
    expect(r.stderr).toContain('gds auth set --token <t> --base <url>');
  });

  it('3: a token the server does not know, saying where it came from', async () => {
    const bogus = 'cli_NotARealTokenAtAll000000';
    secrets.push(bogus);
    const r = await gds(['members', 'list', '--json'], { env: { SERVICE_TOKEN: bogus } });
    expect(r).toMatchObject({ code: 3, stdout: '' });
    const [line] = lines(r.stderr) as Array<{ error: { code: string } }>;
    expect(line?.error.code).toBe('invalid_token');
    const human = await gds(['members', 'list', '--token', bogus]);
    expect(human.code).toBe(3);
    expect(human.stderr).toContain('The token from the command line was refused');
  });

  it('3: a DATA-API token on the management plane names the kinds of token', async () => {
    const token = (await dataToken(['read'])).tokens.accessToken;
    const r = await gds(['members', 'list'], { env: { SERVICE_TOKEN: token } });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('This endpoint takes a MANAGEMENT token');
  });

  it('5: a table that does not exist', async () => {
    const token = (await dataToken(['read'])).tokens.accessToken;
    const r = await gds(['api', '/api/tables/tbl_doesnotexist/records', '--json'], {
      env: { SERVICE_TOKEN: token },
    });
    expect(r.code).toBe(5);
    expect(lines(r.stderr)).toEqual([{ error: expect.objectContaining({ code: 'table_not_found' }) }]);
  });
});

describe('a rate-limited server, then a stopped one', () => {
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startTestServer({ rateLimit: 2 });
  });
  afterAll(async () => {
    await limited?.close().catch(() => undefined);
  });

  it('8: past the limit, with a Retry-After over --max-retry-after, exit 8 at once with the error body', async () => {
    const table = limited.table('crm_contacts').id;
    const issued = await limited.issueToken('OWNER', {
      name: 'rl',
      env: '*',
      scopes: [{ tableId: table, permissions: ['read'] }],
    });
    secrets.push(issued.tokens.accessToken, issued.tokens.refreshToken);
    const env = {
      SERVICE_API_URL: limited.url,
      SERVICE_TOKEN: issued.tokens.accessToken,
    };
    const path = `/api/tables/${table}/records?limit=1`;
    for (let i = 0; i < 2; i += 1) expect((await gds(['api', path], { env })).code).toBe(0);
    const r = await gds(['api', path, '--json', '--max-retry-after', '0'], { env });
    expect(r).toMatchObject({ code: 8, stdout: '' });
    expect(lines(r.stderr)).toEqual([{ error: expect.objectContaining({ code: 'rate_limited' }) }]);
    const human = await gds(['api', path, '--max-retry-after', '0'], { env });
    expect(human.code).toBe(8);
    expect(human.stderr).toContain('"code": "rate_limited"');
  });

  it('9: the server stopped (connection refused): names the URL and --base / SERVICE_API_URL', async () => {
    const url = limited.url;
    await limited.close();
    const r = await gds(['members', 'list'], {
      env: { SERVICE_API_URL: url, SERVICE_TOKEN: server.user('OWNER').cliToken },
    });
    expect(r).toMatchObject({ code: 9, stdout: '' });
    expect(r.stderr).toContain(`Could not reach the service at ${url}`);
    expect(r.stderr).toContain('connection refused');
    expect(r.stderr).toContain('The API base URL came from SERVICE_API_URL');
    expect(r.stderr).toContain('--base <url> or SERVICE_API_URL');
  });
});
