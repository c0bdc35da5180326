// A 100 KB argument (a pasted file, a runaway variable) said back in an error is cut to one short line, its
// control characters stripped: the terminal or the CI log gets what went wrong and what to do, not the
// argument. One case per family of commands that echo what was typed.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { startTestServer } from './test-server.js';

/** 100 KB of one argument, with an escape sequence that must not reach the terminal. */
const HUGE = `\u001b]0;pwned\u0007${'a'.repeat(100_000)}`;
/** What a short error is at most: the message, the suggestion, a line or two of names. */
const SHORT = 600;

let server: TestServer;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(join(tmpdir(), 'gds-long-echo-'));
  env = {
    GDS_CONFIG_DIR: dir,
    GDS_SECRET_STORAGE: 'file',
    SERVICE_TOKEN: server.user('OWNER').cliToken,
    SERVICE_API_URL: server.url,
  };
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await server?.close();
});

const gds = (args: string[]) => runInProcess(args, { env });

/** Exit `code`, a short stderr without the escape sequence that says `says`, nothing on stdout. */
function expectShort(r: CliResult, code: number, says: string): void {
  expect(r.code).toBe(code);
  expect(r.stdout).toBe('');
  expect(r.stderr.length).toBeLessThan(SHORT);
  expect(r.stderr).not.toContain('\u001b');
  expect(r.stderr).toMatch(/aaaa…|…aaaa/);
  expect(r.stderr).toContain(says);
}

describe('a 100 KB argument said back in an error is cut short', () => {
  it('an unknown command (did you mean)', async () => {
    expectShort(await gds([`list${HUGE}`]), 2, 'gds --help');
  });

  it('arguments a command does not take', async () => {
    expectShort(await gds(['list', 'extra', HUGE]), 2, 'gds list --help');
  });

  it('an unknown flag', async () => {
    expectShort(await gds(['list', `--x${HUGE}`]), 2, 'gds list --help');
  });

  it('a flag value not in its list', async () => {
    expectShort(await gds(['records', 'export', 't_1', '--format', HUGE]), 2, 'takes one of ndjson, csv');
  });

  it('a table name a DATA-API token does not grant (looked up among its grants, not sent)', async () => {
    const issued = await server.issueToken('OWNER', {
      name: 'reader',
      env: 'dev',
      scopes: [{ tableId: server.table('crm_contacts').id, permissions: ['read'] }],
    });
    const r = await runInProcess(['records', 'list', `my table ${HUGE}`], {
      env: { ...env, SERVICE_TOKEN: issued.tokens.accessToken },
    });
    expectShort(r, 5, 'pass one of those names or ids');
  });

  it('a long path said back keeps its end, the file name', async () => {
    const r = await gds(['gate', 'validate', '-f', join(dir, 'a'.repeat(200), 'rules-of-orders.yml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('…');
    expect(r.stderr).toContain('/rules-of-orders.yml');
  });

  it('a file name that cannot be read', async () => {
    expectShort(await gds(['gate', 'validate', '-f', join(dir, HUGE)]), 2, 'Check the path given to -f');
    const rows = ['records', 'import', 'crm_contacts', '-f', join(dir, `${HUGE}.csv`)];
    expectShort(await gds(rows), 2, 'Check the path given to -f');
  });

  it('a value of 3,000 lines (a pasted file) said back on one line', async () => {
    const pasted = Array.from({ length: 3_000 }, (_, i) => `line ${i}`).join('\n');
    for (const [code, args] of [
      [2, ['list', 'extra', pasted]],
      [2, ['list', `--zz=${pasted}`]],
      [2, ['records', 'export', 't_1', '--format', pasted]],
      [2, ['records', 'list', 't_1', '--limit', pasted]],
      [2, [`lst${pasted}`]],
      [5, ['alias', 'delete', pasted]],
    ] as const) {
      const r = await gds([...args]);
      const named = args.join(' ').slice(0, 40);
      expect(r.code, named).toBe(code);
      expect(r.stderr.length, named).toBeLessThan(SHORT);
      expect(r.stderr.split('\n').length, named).toBeLessThan(6);
      expect(r.stderr, named).toContain('line 0\\nline 1');
    }
    const set = await gds(['settings', 'set', 'pager', `less ${pasted}`]);
    expect(set.code).toBe(0);
    expect(set.stderr.split('\n').length).toBeLessThan(4);
  });

  it('a long secret given where an argument goes is masked, not said back as its first 79 characters', async () => {
    const secret = `sk-live-${'Ab3dEf9h'.repeat(12)}`;
    const jwt = `eyJhbGciOiJIUzI1NiJ9.${Buffer.from(JSON.stringify({ sub: 'x'.repeat(200) })).toString('base64url')}.c2lnbmF0dXJl`;
    for (const [args, variable] of [
      [['auth', 'set', '--profile', 'ci', secret], secret],
      [['list', secret], secret],
      [['list', jwt], 'eyJ'],
    ] as const) {
      const r = await runInProcess([...args], { env: { ...env, SERVICE_TOKEN: secret } });
      expect(r.code).toBe(2);
      expect(r.stderr).not.toContain(secret.slice(0, 20));
      expect(r.stderr).not.toContain(jwt.slice(0, 30));
      expect(r.stderr).toContain(variable === 'eyJ' ? 'eyJ…****' : '****');
    }
  });

  it('settings set: an unknown key, a value not allowed, and the ✓ line of a long pager', async () => {
    expectShort(
      await gds(['settings', 'set', HUGE, 'x']),
      2,
      'The settings are prompt, browser, pager, color',
    );
    expectShort(await gds(['settings', 'set', 'color', HUGE]), 2, 'Allowed: auto, always, never');
    const r = await gds(['settings', 'set', 'pager', `less${'a'.repeat(100_000)}`]);
    expect(r.code).toBe(0);
    expect(r.stderr.length).toBeLessThan(SHORT);
    expect(r.stderr).toMatch(/✓ Set pager to lessa+… \(in .+settings\.json\)\./);
    // Only what is said back is cut: the setting is the whole value.
    const settings = JSON.parse(await readFile(join(dir, 'settings.json'), 'utf8'));
    expect(settings.settings.pager).toHaveLength(100_004);
  });
});
