// The side by side with gh (docs/gh-comparison.md), the rows that were worse and are fixed, each as
// a person meets it: gds in the test process (runInProcess) against the reference server, and a real `gds`
// process in a pseudo-terminal (`script`) where the terminal matters. O4 a narrow table keeps the name; O7 states coloured outside tables; O13 -q on
// every command; E11 CLICOLOR=0; API16 `gds api` JSON coloured on a terminal; API5 --raw-field; A14 a
// refused pasted (or piped) token is not called "the token from the command line"; token list times; E12
// GDS_FORCE_TTY; API13 `gds api --cache`.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { cliCommand, ensureBuilt, runInTerminal } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;

beforeAll(async () => {
  [server] = await Promise.all([startTestServer(), ensureBuilt()]);
});

afterAll(async () => {
  await server?.close();
});

const env = () => ({
  SERVICE_API_URL: server.url,
  SERVICE_TOKEN: server.user('OWNER').cliToken,
  GDS_CONFIG_DIR: '/nonexistent/gds',
});

const escape = /\u001b\[[0-9;?]*[A-Za-z]/g;
const strip = (text: string) => text.replaceAll(escape, '');

/** `gds args` in a pseudo-terminal `columns` wide: its exit code and what the terminal showed. */
async function onTerminal(args: string[], columns: number, extra: Record<string, string> = {}) {
  const [command, argv] = cliCommand(args);
  const line = `stty cols ${columns} rows 40; ${[command, ...argv].map((a) => `'${a}'`).join(' ')}`;
  const { result } = runInTerminal(line, { ...env(), ...extra });
  const r: CliResult = await result;
  return { code: r.code, text: r.stdout.replaceAll('\r\n', '\n') };
}

interface ListedTable {
  id: string;
  name: string;
  state: string;
}

async function listed(): Promise<ListedTable[]> {
  const r = await runInProcess(['list', '--json', 'id,name,state'], { env: env() });
  expect(r.code, r.stderr).toBe(0);
  return r.stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as ListedTable);
}

describe('tables and colours on a terminal', () => {
  it('gds list at 60 columns keeps NAME (cut, not dropped) and drops ENV and GATE first (O4)', async () => {
    const { code, text } = await onTerminal(['list'], 60, { NO_COLOR: '1' });
    expect(code).toBe(0);
    const lines = text.split('\n').filter((l) => l !== '');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+/);
    expect(lines[0]).not.toMatch(/\bENV\b/);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(60);
    for (const table of await listed()) {
      const row = lines.find((l) => l.startsWith(table.id));
      expect(row, `a row for ${table.id}`).toBeDefined();
      const shown =
        (row ?? '')
          .slice(table.id.length)
          .trim()
          .split(/\s{2,}/)[0] ?? '';
      // Whole, or its beginning and an ellipsis.
      expect(shown === table.name || (shown.endsWith('…') && table.name.startsWith(shown.slice(0, -1)))).toBe(
        true,
      );
    }
  });

  it('gds status colours the state as the table does; piped it is plain (O7)', async () => {
    const tables = await listed();
    const quarantined = tables.find((t) => t.state === 'QUARANTINED');
    const certified = tables.find((t) => t.state === 'CERTIFIED');
    expect(quarantined && certified).toBeTruthy();
    const red = await onTerminal(['status', quarantined?.id ?? ''], 100, { FORCE_COLOR: '1' });
    expect(red.code).toBe(0);
    expect(red.text).toMatch(/State:\s+(\u001b\[[0-9;]*m)*\u001b\[31mQUARANTINED\u001b\[39m/);
    const green = await onTerminal(['status', certified?.id ?? ''], 100, { FORCE_COLOR: '1' });
    expect(green.text).toMatch(/\u001b\[32mCERTIFIED\u001b\[39m/);
    const piped = await runInProcess(['status', quarantined?.id ?? ''], { env: env() });
    expect(piped.code).toBe(0);
    expect(piped.stdout).toMatch(/^State:\s+QUARANTINED$/m);
    expect(piped.stdout).not.toMatch(escape);
  });

  it('CLICOLOR=0 turns colour off on a terminal, as in gh (E11)', async () => {
    const coloured = await onTerminal(['list'], 120);
    expect(coloured.text).toMatch(escape);
    const plain = await onTerminal(['list'], 120, { CLICOLOR: '0' });
    expect(plain.code).toBe(0);
    expect(plain.text).toMatch(/^ID\s+NAME/m);
    expect(plain.text).not.toMatch(escape);
  });

  it('gds tokens list --cli shows relative times on a terminal, ISO piped', async () => {
    const terminal = await onTerminal(['tokens', 'list', '--cli'], 150, { NO_COLOR: '1' });
    expect(terminal.code).toBe(0);
    // One table for CLI and integration tokens: NAME KIND TOKEN … CREATED LAST USED REVOKED ID.
    const rows = terminal.text.split('\n').filter((l) => /\sclt_\w+\s*$/.test(l));
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row).toMatch(/\s(now|\d+(s|m|h|d|mo|y) ago)\s/);
      expect(row).not.toMatch(/\d{4}-\d\d-\d\dT/);
    }
    const piped = await runInProcess(['tokens', 'list', '--cli'], { env: env() });
    expect(piped.code).toBe(0);
    const fields = piped.stdout.split('\n')[0]?.split('\t') ?? [];
    expect(fields.at(-1)).toMatch(/^clt_/);
    expect(fields[6]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/);
  });
});

describe('GDS_FORCE_TTY, as gh GH_FORCE_TTY (E12)', () => {
  it('piped, the table is printed as on a terminal of that width; --json is unchanged', async () => {
    const r = await runInProcess(['list'], { env: { ...env(), GDS_FORCE_TTY: '60' } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(escape);
    const lines = strip(r.stdout).trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+/);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(60);
    for (const table of await listed()) expect(lines.some((l) => l.startsWith(`${table.id}  `))).toBe(true);
    const plain = await runInProcess(['list'], { env: { ...env(), GDS_FORCE_TTY: '1', NO_COLOR: '1' } });
    expect(plain.stdout).not.toMatch(escape);
    expect(plain.stdout).toMatch(/^ID\s+NAME/);
    const json = await runInProcess(['list', '--json', 'id'], { env: { ...env(), GDS_FORCE_TTY: '1' } });
    expect(
      json.stdout
        .trimEnd()
        .split('\n')
        .map((l) => (JSON.parse(l) as { id: string }).id),
    ).toEqual((await listed()).map((t) => t.id));
  });
});

describe('-q is --jq on every command (O13)', () => {
  it('gds list -q .id prints the ids, one a line', async () => {
    const r = await runInProcess(['list', '-q', '.id'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trimEnd().split('\n')).toEqual((await listed()).map((t) => t.id));
  });
});

describe('--template, as gh has it (O14, API12)', () => {
  it('gds list --template prints each table as the template makes it; with --jq it is exit 2', async () => {
    const r = await runInProcess(['list', '--template', '{{id}} {{name}} ({{state}})'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trimEnd().split('\n')).toEqual(
      (await listed()).map((t) => `${t.id} ${t.name} (${t.state})`),
    );
    const both = await runInProcess(['list', '-t', '{{id}}', '-q', '.id'], { env: env() });
    expect(both.code).toBe(2);
    expect(both.stdout).toBe('');
  });

  it('gds api --template formats the answer', async () => {
    const r = await runInProcess(['--template', '{{user.email}} is {{role}}', 'api', '/api/me'], {
      env: env(),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^\S+@example\.com is [A-Z]+\n$/);
  });
});

describe('gds api like gh api', () => {
  it('on a terminal the JSON is indented and coloured (keys blue, strings green); piped it is one plain line (API16)', async () => {
    const piped = await runInProcess(['api', '/api/me'], { env: env() });
    expect(piped.code).toBe(0);
    expect(piped.stdout).not.toMatch(escape);
    const body = JSON.parse(piped.stdout) as { user: { email: string } };
    const terminal = await onTerminal(['api', '/api/me'], 100, { FORCE_COLOR: '1' });
    expect(terminal.code).toBe(0);
    expect(terminal.text).toMatch(/\u001b\[34m"user"\u001b\[39m/);
    expect(terminal.text).toContain(`\u001b[32m"${body.user.email}"\u001b[39m`);
    expect(strip(terminal.text).trimEnd()).toBe(JSON.stringify(body, null, 2));
    const plain = await onTerminal(['api', '/api/me'], 100, { NO_COLOR: '1' });
    expect(plain.text.trimEnd()).toBe(JSON.stringify(body, null, 2));
  });

  it('a refused call on a terminal: the coloured error body, exit by status', async () => {
    const r = await onTerminal(['api', '/api/tables/tbl_0000000000000000/status'], 100, { FORCE_COLOR: '1' });
    expect(r.code).toBe(5);
    expect(r.text).toMatch(/\u001b\[34m"error"\u001b\[39m/);
    expect(JSON.parse(strip(r.text))).toMatchObject({ error: { code: 'table_not_found' } });
  });

  it("--raw-field, gh's name for -f, sends a string field (API5)", async () => {
    const r = await runInProcess(['api', '/api/workspace/audit-log', '-X', 'GET', '--raw-field', 'limit=1'], {
      env: env(),
    });
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { entries: unknown[] }).entries).toHaveLength(1);
  });
});

describe('gds api --cache, as gh api --cache (API13)', () => {
  it('a GET answered once is printed again from the cache; another token, a POST or no --cache ask again', async () => {
    let calls = 0;
    const counter = createServer((request, response) => {
      calls += 1;
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ call: calls, method: request.method }));
    });
    await new Promise<void>((resolve) => counter.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(counter.address() as AddressInfo).port}`;
    const cacheHome = await mkdtemp(join(tmpdir(), 'gds-e2e-api-cache-'));
    const api = async (args: string[], token = 'cli_cache_test_token_aaaa') => {
      const r = await runInProcess(['api', ...args, '--base', base, '--token', token], {
        env: { XDG_CACHE_HOME: cacheHome, GDS_CONFIG_DIR: '/nonexistent/gds' },
      });
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as { call: number; method: string };
    };
    try {
      expect(await api(['/x', '--cache', '1h'])).toEqual({ call: 1, method: 'GET' });
      expect(await api(['/x', '--cache', '60m'])).toEqual({ call: 1, method: 'GET' });
      expect(calls).toBe(1);
      expect(await api(['/x'])).toMatchObject({ call: 2 });
      expect(await api(['/x', '--cache', '1h'], 'cli_cache_test_token_bbbb')).toMatchObject({ call: 3 });
      expect(await api(['/x', '-X', 'POST', '--cache', '1h'])).toMatchObject({ call: 4, method: 'POST' });
      expect(await api(['/x', '-X', 'POST', '--cache', '1h'])).toMatchObject({ call: 5 });
      const dir = join(cacheHome, 'gds', 'api');
      expect((await stat(dir)).mode & 0o777).toBe(0o700);
      const files = await readdir(dir);
      expect(files).toHaveLength(2);
      for (const file of files) expect((await stat(join(dir, file))).mode & 0o777).toBe(0o600);
      const bad = await runInProcess(['api', '/x', '--cache', '5x', '--base', base, '--token', 't'], {
        env: { XDG_CACHE_HOME: cacheHome },
      });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--cache takes a duration');
      expect(calls).toBe(5);
    } finally {
      counter.close();
    }
  });
});

describe('a refused token says where it came from (A14)', () => {
  const cfg = () => mkdtemp(join(tmpdir(), 'gds-e2e-ghcmp-'));

  it('read from stdin', async () => {
    const r = await runInProcess(['auth', 'set', '--token', '-', '--base', server.url], {
      input: 'cli_this_token_does_not_exist_000\n',
      env: { GDS_CONFIG_DIR: await cfg(), GDS_SECRET_STORAGE: 'file', SERVICE_TOKEN: undefined },
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('The token read from stdin was refused');
    expect(r.stderr).not.toContain('command line');
  });

  it('pasted at the prompt on a terminal', async () => {
    const [command, argv] = cliCommand(['auth', 'set', '--base', server.url]);
    const line = `stty cols 100 rows 40; ${[command, ...argv].map((a) => `'${a}'`).join(' ')}`;
    const { child, result } = runInTerminal(line, {
      GDS_CONFIG_DIR: await cfg(),
      GDS_SECRET_STORAGE: 'file',
      NO_COLOR: '1',
    });
    let seen = '';
    child.stdout?.on('data', (chunk: Buffer) => (seen += chunk.toString('utf8')));
    for (let i = 0; i < 200 && !seen.includes('Paste the CLI token'); i += 1) await sleep(50);
    child.stdin?.write('cli_this_token_does_not_exist_000\r');
    const r = await result;
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('The token you pasted was refused');
    expect(r.stdout).not.toContain('cli_this_token_does_not_exist_000');
  });
});
