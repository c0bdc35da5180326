// Strings from the service reach no terminal with their control characters, on the output paths that had no
// stripping of their own: the shell completion's candidates (zsh and fish show the descriptions in their
// menus, every shell inserts the value into the command line) and `gds api -i`'s response headers (a header
// value may carry C1 controls, which HTTP allows as obs-text). A value of the service put into a command
// line gds prints for pasting (the next page of records list) is one shell word, whatever it holds.
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCommand, ensureBuilt, runInTerminal } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

/** Clipboard write (OSC 52), clear screen, carriage return, a bidi override, a C1 CSI. */
const HOSTILE = '\u001b]52;c;ZXZpbA==\u0007\u001b[2J\r\u202eEVIL\u009b31m';
/** Any control or bidi character a terminal would act on (the tab of a completion line excepted). */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

let server: TestServer;
let dir: string;

beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-hostile-'));
  await server.sql('UPDATE gds.tables SET name = $2 WHERE id = $1', [
    server.table('orders').id,
    `orders${HOSTILE}`,
  ]);
  await server.sql('UPDATE gds.tables SET name = $2 WHERE id = $1', [
    server.table('customers').id,
    'customers\nlist --token=x',
  ]);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await server?.close();
});

const gds = (args: string[], env: Record<string, string> = {}) =>
  runInProcess(args, {
    env: {
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user('OWNER').cliToken,
      XDG_CACHE_HOME: join(dir, 'cache'),
      GDS_CONFIG_DIR: join(dir, 'config'),
      GDS_SECRET_STORAGE: 'file',
      ...env,
    },
  });

describe('shell completion of what the service holds', () => {
  it('offers no value and no description with a control character, and no candidate split by a line break', async () => {
    const r = await gds(['__complete', 'line', '--', 'status', '']);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n').filter((line) => line !== '');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).not.toMatch(CONTROL);
    const values = lines.map((line) => line.split('\t')[0]);
    // The hostile names are left out as values (the shell would type them as they are) ...
    expect(values.some((v) => v?.startsWith('orders'))).toBe(false);
    expect(values).not.toContain('list --token=x');
    expect(values.some((v) => v?.startsWith('customers\u0020'))).toBe(false);
    // ... and their tables are still offered by id, the name shown clean beside it.
    const ordersLine = lines.find((line) => line.startsWith(`${server.table('orders').id}\t`));
    expect(ordersLine).toBe(`${server.table('orders').id}\torders EVIL dev QUARANTINED`);
    const customersLine = lines.find((line) => line.startsWith(`${server.table('customers').id}\t`));
    expect(customersLine).toMatch(/\tcustomers list --token=x dev CERTIFIED$/);
    // A plain name is still a value.
    expect(values).toContain('crm_contacts');
  });
});

describe('gds api -i', () => {
  let stub: Server;
  let stubUrl: string;

  beforeAll(async () => {
    stub = createServer((_request, response) => {
      // Node sends a header value's characters U+0080–U+00FF as single bytes (latin1), as HTTP's obs-text.
      response.setHeader('X-Note', 'a\u009b2Jb\u009d52;c;ZXZpbA==\u009cc');
      response.setHeader('Content-Type', 'application/json');
      response.end('{"ok":true}');
    });
    await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
    stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    stub.closeAllConnections();
    await new Promise((resolve) => stub.close(resolve));
  });

  it('prints the headers without their control characters on stdout; under --json escaped in a JSON line on stderr', async () => {
    // The whole sequences go, parameters and payload with them: only a, b and c (and whatever bytes the
    // encoding of the header added beside the controls) are left.
    const note = (text: string) => text.split('\n').find((line) => line.startsWith('x-note: ')) ?? '';
    const human = await gds(['api', '-i', '/api/me'], { SERVICE_API_URL: stubUrl });
    expect(human.code).toBe(0);
    expect(human.stdout).not.toMatch(CONTROL);
    expect(note(human.stdout)).toMatch(/^x-note: a[^2]*b[^5]*c$/);
    expect(human.stdout).toMatch(/\n\n\{\n {2}"ok": true\n\}\n$|\n\n\{"ok":true\}\n$/);
    const json = await gds(['api', '-i', '/api/me', '--json'], { SERVICE_API_URL: stubUrl });
    expect(json.code).toBe(0);
    // Under --json the head is a JSON line on stderr: the header's value kept whole, its C1 controls escaped.
    expect(json.stderr).not.toMatch(CONTROL);
    const head = JSON.parse(json.stderr.trim()) as { response: { headers: Array<[string, string]> } };
    const value = head.response.headers.find(([name]) => name === 'x-note')?.[1] ?? '';
    expect(value).toMatch(/^a.*\u009b2Jb.*\u009d52;c;ZXZpbA==.*\u009cc$/);
    expect(JSON.parse(json.stdout)).toEqual({ ok: true });
  });
});

describe('records list: the next page command', () => {
  let stub: Server;
  let stubUrl: string;
  const cursor = "abc'; touch /tmp/pwned #$(id)";
  const otherToken = 'cli_other0000000000000000';

  beforeAll(async () => {
    stub = createServer((request, response) => {
      response.setHeader('Content-Type', 'application/json');
      if (request.headers.authorization === `Bearer ${otherToken}`) {
        response.statusCode = 401;
        response.end(JSON.stringify({ error: { code: 'unauthorized', message: 'Token refused.' } }));
        return;
      }
      response.end(JSON.stringify({ records: [{ id: 'rec_1', a: 1 }], nextCursor: cursor, total: 2 }));
    });
    await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
    stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    stub.closeAllConnections();
    await new Promise((resolve) => stub.close(resolve));
  });

  it('quotes the cursor (and the search) so that pasting the line runs gds with them, nothing else', async () => {
    const search = 'a "$(b)"';
    const r = await gds(['records', 'list', 'tbl_stub', '--search', search], { SERVICE_API_URL: stubUrl });
    expect(r.code, r.stderr).toBe(0);
    const line = /More records of tbl_stub: (gds records list .*)$/m.exec(r.stderr)?.[1];
    expect(line).toBeDefined();
    const words = execFileSync('bash', ['-c', `printf '%s\\0' ${line ?? ''}`], { encoding: 'utf8' })
      .split('\0')
      .slice(0, -1);
    expect(words).toEqual(['gds', 'records', 'list', 'tbl_stub', '--search', search, '--cursor', cursor]);
  });
  it('carries the --profile and --base the person gave, so that the pasted line runs as theirs did', async () => {
    const noEnv = { SERVICE_API_URL: undefined, SERVICE_TOKEN: undefined } as unknown as Record<
      string,
      string
    >;
    for (const [profile, token] of [
      ['default', otherToken],
      ['loader', 'cli_loader000000000000000'],
    ] as const) {
      const set = await gds(
        ['auth', 'set', '--token', token, '--base', stubUrl, '--profile', profile, '--no-verify'],
        noEnv,
      );
      expect(set.code, set.stderr).toBe(0);
    }
    const first = await gds(['records', 'list', 'tbl_stub', '--profile', 'loader', '-L', '5'], noEnv);
    expect(first.code, first.stderr).toBe(0);
    const line = /More records of tbl_stub: gds (records list .*)$/m.exec(first.stderr)?.[1] ?? '';
    expect(line).toContain('--profile loader');
    const words = execFileSync('bash', ['-c', `printf '%s\\0' ${line}`], { encoding: 'utf8' })
      .split('\0')
      .slice(0, -1);
    const pasted = await gds(words, noEnv);
    expect(pasted.code, pasted.stderr).toBe(0);
    expect(pasted.stdout).toContain('rec_1');

    const withToken = await gds(
      ['records', 'list', 'tbl_stub', '--token', 'cli_secret0000000000000', '--base', stubUrl],
      noEnv,
    );
    expect(withToken.stderr).not.toContain('cli_secret');
    expect(withToken.stderr).toMatch(/ --base http\S+ \(add --token …: gds does not print tokens\)$/m);
  });
});

describe('data holding C1 and format characters: whole in JSON, cut nowhere in text', () => {
  // cp1252 "Žižek" read as latin1: U+008E and U+009E, and U+009E starts a terminal's PM string.
  const zizek = { email: 'zizek@example.com', full_name: 'Slavoj \u008Ei\u009Eek' };
  const after = { email: 'after@example.com', full_name: 'After Record' };
  let table: string;
  const lines = (text: string) => text.split('\n').filter((line) => line !== '');

  beforeAll(async () => {
    table = server.table('crm_contacts').id;
    for (const record of [zizek, after]) {
      const r = await gds(['records', 'create', table, '-d', JSON.stringify(record)], {
        SERVICE_TOKEN: server.user('ADMIN').cliToken,
      });
      expect(r.code, r.stderr).toBe(0);
    }
  });

  it('--jq: every record, JSON whole with \\u escapes, strings raw piped and stripped on a terminal', async () => {
    for (const forced of [{}, { GDS_FORCE_TTY: '1' }] as Array<Record<string, string>>) {
      const whole = await gds(['records', 'list', table, '--jq', '.'], forced);
      expect(whole.code, whole.stderr).toBe(0);
      expect(whole.stdout).not.toMatch(CONTROL);
      const records = lines(whole.stdout).map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(records).toContainEqual(expect.objectContaining(zizek));
      expect(records).toContainEqual(expect.objectContaining(after));
      const pairs = await gds(['records', 'list', table, '--jq', '[.full_name, .email]'], forced);
      expect(pairs.code, pairs.stderr).toBe(0);
      const parsed = lines(pairs.stdout).map((line) => JSON.parse(line) as unknown);
      expect(parsed).toContainEqual([zizek.full_name, zizek.email]);
      expect(parsed).toContainEqual([after.full_name, after.email]);
    }
    const piped = await gds(['records', 'list', table, '--jq', '.full_name']);
    expect(lines(piped.stdout)).toEqual(expect.arrayContaining([zizek.full_name, after.full_name]));
    const terminal = await gds(['records', 'list', table, '--jq', '.full_name'], { GDS_FORCE_TTY: '1' });
    expect(lines(terminal.stdout)).toEqual(expect.arrayContaining(['Slavoj iek', after.full_name]));
  });

  it('--template: the whole line, as it is piped and stripped on a terminal; a piped table cell whole', async () => {
    const template = ['records', 'list', table, '--template', '{{full_name}} <{{email}}>'];
    const piped = await gds(template);
    expect(piped.code, piped.stderr).toBe(0);
    expect(lines(piped.stdout)).toEqual(
      expect.arrayContaining([`${zizek.full_name} <${zizek.email}>`, `${after.full_name} <${after.email}>`]),
    );
    const terminal = await gds(template, { GDS_FORCE_TTY: '1' });
    expect(lines(terminal.stdout)).toEqual(
      expect.arrayContaining([`Slavoj iek <${zizek.email}>`, `${after.full_name} <${after.email}>`]),
    );
    const table_ = await gds(['records', 'list', table]);
    expect(table_.code, table_.stderr).toBe(0);
    const row = lines(table_.stdout).find((line) => line.includes(zizek.email)) ?? '';
    expect(row.split('\t')).toContain('Slavoj iek');
  });

  it('records export to stdout: CSV bytes as they are piped, stripped as on a terminal (GDS_FORCE_TTY too)', async () => {
    const piped = await gds(['records', 'export', table, '--format', 'csv']);
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout).toContain(zizek.full_name);
    // GDS_FORCE_TTY says stdout is shown as on a terminal (`| less -R`, which passes OSC 8 links on), as it
    // does for gate get: the rows are stripped there too.
    const forced = await gds(['records', 'export', table, '--format', 'csv'], { GDS_FORCE_TTY: '1' });
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).not.toMatch(CONTROL);
    expect(forced.stdout).toContain('Slavoj iek');
  });

  it('--json and gds api on a terminal keep the name whole, as \\u escapes, as piped', async () => {
    await ensureBuilt();
    const name = `orders${HOSTILE}`;
    const nameIn = (text: string) => {
      const line = text.split('\n').find((l) => /^\s*"name": "orders/.test(l)) ?? '';
      return (JSON.parse(`{${line.trim().replace(/,$/, '')}}`) as { name?: string }).name;
    };
    const piped = await gds(['list', '--json']);
    const tables = lines(piped.stdout).map((line) => JSON.parse(line) as { name: string });
    expect(tables.map((t) => t.name)).toContain(name);
    for (const args of [
      ['list', '--json'],
      ['api', '/api/tables'],
    ]) {
      const [command, argv] = cliCommand(args);
      const { result } = runInTerminal([command, ...argv].map((a) => `'${a}'`).join(' '), {
        SERVICE_API_URL: server.url,
        SERVICE_TOKEN: server.user('OWNER').cliToken,
        XDG_CACHE_HOME: join(dir, 'cache'),
        GDS_CONFIG_DIR: join(dir, 'config'),
        NO_COLOR: '1',
        GDS_PAGER: 'cat',
      });
      const r = await result;
      const text = r.stdout.replaceAll('\r\n', '\n');
      expect(r.code, text).toBe(0);
      expect(text).not.toMatch(CONTROL);
      expect(nameIn(text), args.join(' ')).toBe(name);
    }
  });
});
