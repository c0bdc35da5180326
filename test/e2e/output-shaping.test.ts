// Output as a script and a person at a terminal meet it (gh's habits): piped tables through `cut`, `--json`
// with a field list, `--jq` without a jq binary, `-L`, global flags before the command, an empty list, and
// the table on a terminal. gds in the test process (dist/gds under GDS_TEST_CLI), and real `gds` processes
// in a pipe or on a terminal, against a real server.
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { cliCommand, cliEnv, collect, ensureBuilt, runInTerminal } from '../cli/helpers/cli-process.js';
import type { InProcessOptions } from '../helpers/run-in-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;
let dir: string;
let ownerToken: string;
const outputs: string[] = [];

beforeAll(async () => {
  [server] = await Promise.all([startTestServer(), ensureBuilt()]);
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-shaping-'));
  ownerToken = server.user('OWNER').cliToken;
});

afterAll(async () => {
  await server?.close();
  for (const output of outputs) expect(output).not.toContain(ownerToken);
});

function env(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    GDS_CONFIG_DIR: join(dir, 'config'),
    GDS_SECRET_STORAGE: 'file',
    SERVICE_API_URL: server.url,
    SERVICE_TOKEN: ownerToken,
    ...extra,
  };
}

async function gds(args: string[], options: InProcessOptions = {}): Promise<CliResult> {
  const result = await runInProcess(args, { ...options, env: { ...env(), ...options.env } });
  outputs.push(result.stdout, result.stderr);
  return result;
}

async function serverTables(): Promise<Array<{ id: string; name: string; state: string }>> {
  const r = await server.request('GET', '/api/tables', { token: server.user('OWNER').accessToken });
  return (r.body as { tables: Array<{ id: string; name: string; state: string }> }).tables;
}

/** `gds …args | cut -f2` through a real shell pipe. */
async function throughCut(args: string[]): Promise<CliResult> {
  const [command, commandArgs] = cliCommand(args);
  const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;
  const line = `${[command, ...commandArgs].map(quote).join(' ')} | cut -f2`;
  const child = spawn('sh', ['-c', line], { env: cliEnv(env()), stdio: ['ignore', 'pipe', 'pipe'] });
  return collect(child);
}

describe('piped tables', () => {
  it('gds list | cut -f2 gives the table names, one per line, no header', async () => {
    const r = await throughCut(['list']);
    expect(r.code).toBe(0);
    expect(r.stdout.trimEnd().split('\n')).toEqual((await serverTables()).map((t) => t.name));
  });

  it('an empty list prints nothing on stdout and says so on stderr', async () => {
    const r = await gds(['list', '--state', 'CORE']);
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: 'No tables.\n' });
  });

  it('-L keeps the first rows, piped and under --json', async () => {
    const human = await gds(['list', '-L', '2']);
    expect(human.stdout.trimEnd().split('\n')).toHaveLength(2);
    const json = await gds(['list', '--limit', '1', '--json']);
    expect(json.stdout.trimEnd().split('\n')).toHaveLength(1);
  });

  it('on a terminal: an upper-case header and aligned columns, no box drawing', async () => {
    const [command, args] = cliCommand(['list']);
    const { result } = runInTerminal([command, ...args].join(' '), { ...env(), NO_COLOR: '1' });
    const r = await result;
    expect(r.code).toBe(0);
    const screen = r.stdout.replaceAll('\r', '');
    expect(screen).toMatch(/^ID +NAME +MODE +STATE +GATE/m);
    expect(screen).not.toMatch(/[│┌─]/);
  });
});

describe('--json fields and --jq', () => {
  it('--json id,name keeps those fields, and --jq filters each record without a jq binary', async () => {
    const tables = await serverTables();
    const fields = await gds(['list', '--json', 'id,name']);
    expect(fields.code).toBe(0);
    const records = fields.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as object);
    expect(records).toEqual(tables.map((t) => ({ id: t.id, name: t.name })));

    const jq = await gds(['list', '--json', 'id,name', '--jq', 'select(.name | startswith("c")) | .name'], {
      env: { PATH: '/nonexistent' },
    });
    expect(jq.code).toBe(0);
    expect(jq.stdout.trimEnd().split('\n')).toEqual(
      tables.map((t) => t.name).filter((n) => n.startsWith('c')),
    );
  });

  it('a single field after the arguments: gds status <id> --json state', async () => {
    const [first] = await serverTables();
    const r = await gds(['status', first?.id ?? '', '--json', 'state']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ state: first?.state });
  });

  it('an unknown field: exit 2, nothing on stdout, the fields there are in the error', async () => {
    const r = await gds(['list', '--json', 'id,nme']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const error = (JSON.parse(r.stderr) as { error: { code: string; details: { available: string[] } } })
      .error;
    expect(error.code).toBe('unknown_json_field');
    expect(error.details.available).toEqual(expect.arrayContaining(['id', 'name', 'state']));
  });

  it('--json= with no field (a CI variable left empty): exit 2, not a line of {} per record', async () => {
    const records = ['records', 'list', 'crm_contacts', '--json='];
    for (const args of [
      ['list', '--json='],
      ['list', '--json=,'],
      ['status', 'customers', '--json='],
      records,
    ]) {
      // Refused before anything is sent: no service answers at this address.
      const r = await gds(args, { env: { SERVICE_API_URL: 'http://127.0.0.1:9' } });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      const error = (JSON.parse(r.stderr) as { error: { code: string; suggestion: string } }).error;
      expect(error.code).toBe('empty_json_fields');
      expect(error.suggestion).toContain('--json alone');
    }
  });

  it('--jq and --template imply --json for errors too: a usage error is one JSON line, as a lookup error is', async () => {
    const cases: Array<[string[], string]> = [
      [['list', '--bogus', '--jq', '.name'], 'usage'],
      [['status', '--jq', '.name'], 'usage'],
      [['list', '-q.name', '--state', 'NOPE'], 'usage'],
      [['list', '--jq', '.name |'], 'invalid_jq'],
      [['list', '--template', '{{name'], 'invalid_template'],
      [['list', '--template', '{{name}}', '--limit', '0'], 'usage'],
      [['nope', '--jq', '.name'], 'command_not_found'],
      [['status', 'nope', '--jq', '.name'], 'table_not_found'],
    ];
    for (const [args, code] of cases) {
      const r = await gds(args);
      expect(r.code, args.join(' ')).toBe(code === 'table_not_found' ? 5 : 2);
      expect(r.stdout).toBe('');
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines, args.join(' ')).toHaveLength(1);
      expect((JSON.parse(lines[0] ?? '') as { error: { code: string } }).error.code).toBe(code);
    }
    // Without them the same mistake is said to the person.
    const human = await gds(['list', '--bogus']);
    expect(human.code).toBe(2);
    expect(human.stderr).toMatch(/^Error: Unknown flag: --bogus\./);
  });

  it('a --jq filter jq cannot compile: exit 2 before the service is called', async () => {
    const r = await gds(['list', '--jq', '.name +'], { env: { SERVICE_API_URL: 'http://127.0.0.1:9' } });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('compile error');
  });
});

describe('global flags before the command', () => {
  it('gds --profile P --json id list reads profile P, and the token flag and --json before the command work too', async () => {
    const config = {
      GDS_CONFIG_DIR: join(dir, 'profiles'),
      SERVICE_TOKEN: undefined,
      SERVICE_API_URL: undefined,
    };
    const set = await gds(['auth', 'set', '--profile', 'ci', '--token', ownerToken, '--base', server.url], {
      env: config,
    });
    expect(set.code).toBe(0);
    const viaProfile = await gds(['--profile', 'ci', '--json', 'id,name', 'list', '-L', '1'], {
      env: config,
    });
    expect(viaProfile.code).toBe(0);
    expect(Object.keys(JSON.parse(viaProfile.stdout) as object)).toEqual(['id', 'name']);
    const viaFlags = await gds(['--base', server.url, '--token', ownerToken, '--json', 'list'], {
      env: config,
    });
    expect(viaFlags.code).toBe(0);
    expect(viaFlags.stdout.trimEnd().split('\n')).toHaveLength((await serverTables()).length);
  });
});
