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
  expect(r.stderr).toContain('aaaa…');
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

  it('a file name that cannot be read', async () => {
    expectShort(await gds(['gate', 'validate', '-f', join(dir, HUGE)]), 2, 'Check the path given to -f');
    const rows = ['records', 'import', 'crm_contacts', '-f', join(dir, `${HUGE}.csv`)];
    expectShort(await gds(rows), 2, 'Check the path given to -f');
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
