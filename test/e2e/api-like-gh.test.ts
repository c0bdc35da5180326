// `gds api` like `gh api`: --paginate (NDJSON items across cursor pages), -i/--include,
// --silent, -q for --jq, -F key=@file|@-, key[sub]=v and key[]=v, a missing leading / added. gds in the
// test process (runInProcess) against the reference server, and against a loopback server that records what
// it is sent.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;
const recorded: Array<{ method: string; url: string; body: unknown }> = [];
const echo = createServer((request, response) => {
  let text = '';
  request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  request.on('end', () => {
    recorded.push({
      method: request.method ?? '',
      url: request.url ?? '',
      body: text === '' ? null : JSON.parse(text),
    });
    response.setHeader('content-type', 'application/json');
    response.setHeader('x-echo', 'yes');
    // A server whose next page is always the same cursor (second probe: --paginate followed it forever).
    if ((request.url ?? '').startsWith('/loop'))
      return response.end(JSON.stringify({ items: [{ n: 1 }], nextCursor: 'same' }));
    response.end(JSON.stringify({ ok: true }));
  });
});
let echoBase = '';

beforeAll(async () => {
  server = await startTestServer();
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  echoBase = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
});

afterAll(async () => {
  echo.close();
  await server?.close();
});

const env = () => ({
  SERVICE_API_URL: server.url,
  SERVICE_TOKEN: server.user('OWNER').cliToken,
  GDS_CONFIG_DIR: '/nonexistent/gds',
});
const lines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('gds api', () => {
  it('api/me without the leading /: the path of the service', async () => {
    const r = await runInProcess(['api', 'api/me', '-q', '.user.email'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${server.user('OWNER').email}\n`);
  });

  it('--paginate follows nextCursor: one NDJSON line per audit entry of every page', async () => {
    const every = await runInProcess(['audit', 'list', '--all', '--json'], { env: env() });
    const ids = lines(every.stdout).map((e) => e.id);
    const r = await runInProcess(
      ['api', '/api/workspace/audit-log', '-X', 'GET', '-F', 'limit=7', '--paginate'],
      {
        env: env(),
      },
    );
    expect(r.code, r.stderr).toBe(0);
    const entries = lines(r.stdout);
    expect(entries.length).toBeGreaterThan(7);
    expect(entries.map((e) => e.id)).toEqual(ids);
  });

  it('--paginate stops (exit 1) when the service answers the same next page twice', async () => {
    const before = recorded.length;
    const r = await runInProcess(['api', '/loop', '--paginate'], {
      env: { ...env(), SERVICE_API_URL: echoBase },
    });
    expect(r.code).toBe(1);
    expect(lines(r.stdout)).toEqual([{ n: 1 }, { n: 1 }]);
    expect(r.stderr).toContain('twice; stopping');
    expect(recorded.length - before).toBe(2);
  });

  it('-i prints the status line and headers first; --silent prints nothing', async () => {
    const included = await runInProcess(['api', '/api/me', '-i'], { env: env() });
    expect(included.code).toBe(0);
    expect(included.stdout).toMatch(/^HTTP\/1\.1 200 OK\n/);
    expect(included.stdout).toMatch(/^content-type: application\/json/m);
    expect(included.stdout).toContain('"email"');
    const silent = await runInProcess(['api', '/api/me', '--silent'], { env: env() });
    expect(silent).toMatchObject({ code: 0, stdout: '' });
    // Under --json the head is a JSON line of stderr (every stderr line stays JSON), the body on stdout.
    const json = await runInProcess(['api', '/api/me', '-i', '--json'], { env: env() });
    expect(json.code, json.stderr).toBe(0);
    const [head, ...rest] = json.stderr
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as unknown);
    expect(rest).toEqual([]);
    expect(head).toMatchObject({
      response: {
        status: 200,
        statusText: 'OK',
        headers: expect.arrayContaining([
          ['content-type', expect.stringContaining('application/json')],
        ]) as unknown,
      },
    });
    expect(json.stdout).toContain('"email"');
  });

  it('-F key=@file and key=@-, key[sub]=v and key[]=v build the JSON body', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gds-e2e-api-'));
    await writeFile(join(dir, 'notes.txt'), 'from a file');
    recorded.length = 0;
    const r = await runInProcess(
      [
        'api',
        'things',
        '--base',
        echoBase,
        '--token',
        'cli_echo0123456789',
        '-F',
        'data[name]=Ada',
        '-F',
        'data[score]=3',
        '-F',
        'data[tags][]=vip',
        '-F',
        'data[tags][]=new',
        '-F',
        `data[notes]=@${join(dir, 'notes.txt')}`,
        '-F',
        'stdin=@-',
      ],
      { env: { GDS_CONFIG_DIR: '/nonexistent/gds' }, input: 'from stdin' },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(recorded).toEqual([
      {
        method: 'POST',
        url: '/things',
        body: {
          data: { name: 'Ada', score: 3, tags: ['vip', 'new'], notes: 'from a file' },
          stdin: 'from stdin',
        },
      },
    ]);
  });

  it('--field is the typed field and --raw-field the string one, as in gh (API5); --typed-field still works', async () => {
    recorded.length = 0;
    const sent = async (...fields: string[]) => {
      recorded.length = 0;
      const r = await runInProcess(
        ['api', 'things', '--base', echoBase, '--token', 'cli_echo0123456789', ...fields],
        { env: { GDS_CONFIG_DIR: '/nonexistent/gds' } },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(recorded).toHaveLength(1);
      return recorded[0]?.body;
    };
    expect(await sent('--field', 'n=5')).toEqual({ n: 5 });
    expect(await sent('--raw-field', 'n=5')).toEqual({ n: '5' });
    expect(await sent('-F', 'n=5', '-F', 'ok=true', '-F', 'none=null')).toEqual({
      n: 5,
      ok: true,
      none: null,
    });
    expect(await sent('-f', 'n=5', '-f', 'ok=true')).toEqual({ n: '5', ok: 'true' });
    expect(await sent('--typed-field', 'n=5', '--typed-field=ok=false')).toEqual({ n: 5, ok: false });
    expect(await sent('--field=tags[]=1', '--raw-field', 'name=007')).toEqual({ name: '007', tags: [1] });
  });
});

describe('gds api: an error answer, and stdin read by one field alone', () => {
  it('-i prints the status line and headers of an error answer too, on stdout; the error on stderr, exit 5', async () => {
    const r = await runInProcess(['api', '/api/tables/tbl_missing', '-i'], { env: env() });
    expect(r.code).toBe(5);
    expect(r.stdout).toMatch(/^HTTP\/1\.1 404 Not Found\n/);
    expect(r.stdout).toMatch(/^content-type: application\/json/m);
    expect(r.stdout).toMatch(/\n\n$/);
    expect(r.stderr).toContain('not_found');
    expect(r.stdout).not.toContain('not_found');
  });

  it('-F a=@- -F b=@- is exit 2 before anything is sent: only one field may read stdin', async () => {
    recorded.length = 0;
    const r = await runInProcess(
      ['api', 'things', '--base', echoBase, '--token', 'cli_echo0123456789', '-F', 'a=@-', '-F', 'b=@-'],
      { env: { GDS_CONFIG_DIR: '/nonexistent/gds' }, input: 'from stdin' },
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/-F a=@- and -F b=@- both read stdin/);
    expect(recorded).toEqual([]);
    const json = await runInProcess(
      [
        'api',
        'things',
        '--base',
        echoBase,
        '--token',
        'cli_echo0123456789',
        '-F',
        'a=@-',
        '--input',
        '-',
        '--json',
      ],
      { env: { GDS_CONFIG_DIR: '/nonexistent/gds' }, input: '{}' },
    );
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stderr.trim().split('\n').at(-1) ?? '')).toMatchObject({
      error: { code: 'stdin_read_twice' },
    });
    expect(recorded).toEqual([]);
  });
});
