// GDS_JSON=1 (which the README offers for CI) must not break the README's own pipes.
// `gds gate suggest T | gds gate apply T -f -` and `gds gate get T > f; gds gate apply T -f f` run through a
// real shell with GDS_JSON=1: apply takes the record suggest or get printed (its yaml / content), and the
// gate1.yml the service stores is the suggestion itself.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { cliCommand, cliEnv, collect, ensureBuilt, repoRoot } from '../cli/helpers/cli-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;
let dir: string;

beforeAll(async () => {
  [server] = await Promise.all([startTestServer({ jobs: 'manual' }), ensureBuilt()]);
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-json-env-'));
});

afterAll(async () => {
  await server?.close();
});

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
const gdsLine = (args: string[]) => cliCommand(args).flat().map(quote).join(' ');

function shell(line: string, env: Record<string, string>): Promise<CliResult> {
  const child = spawn('sh', ['-c', line], {
    cwd: repoRoot,
    env: cliEnv({
      GDS_CONFIG_DIR: join(dir, 'config'),
      GDS_SECRET_STORAGE: 'file',
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user('OWNER').cliToken,
      ...env,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collect(child);
}

async function storedGate(tableId: string): Promise<{ version: number; content: string }> {
  const answer = await server.request('GET', `/api/tables/${tableId}/gate1`, {
    token: server.user('OWNER').cliToken,
  });
  return answer.body as { version: number; content: string };
}

function records(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('the README pipes under GDS_JSON=1', () => {
  it('gds gate suggest T | gds gate apply T -f -: the suggestion is stored', async () => {
    const table = server.table('customers').id;
    const line = `${gdsLine(['gate', 'suggest', table])} 2>/dev/null | ${gdsLine(['gate', 'apply', table, '-f', '-'])}`;
    const piped = await shell(line, { GDS_JSON: '1' });
    expect(piped.code, piped.stderr).toBe(0);
    const [applied, ...rest] = records(piped.stdout);
    expect(rest).toEqual([]);
    expect(applied).toMatchObject({ tableId: table, version: 1 });
    const suggested = await server.request('POST', `/api/tables/${table}/gate1/suggestions`, {
      token: server.user('OWNER').cliToken,
    });
    const stored = await storedGate(table);
    expect(stored.content).toBe((suggested.body as { yaml: string }).yaml);
  });

  it('gds gate get T > f; gds gate apply T -f f: the same rules, No change (one record, the version kept)', async () => {
    const table = server.table('customers').id;
    const before = await storedGate(table);
    const saved = join(dir, 'gate1.yml');
    const line = `${gdsLine(['gate', 'get', table])} > ${quote(saved)} && ${gdsLine(['gate', 'apply', table, '-f', saved])}`;
    const run = await shell(line, { GDS_JSON: '1' });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(await readFile(saved, 'utf8'))).toMatchObject({
      tableId: table,
      content: before.content,
    });
    expect(records(run.stdout)).toEqual([
      expect.objectContaining({ tableId: table, version: before.version }),
    ]);
    expect((await storedGate(table)).version).toBe(before.version);
  });

  it('the same two pipes without GDS_JSON: YAML on stdout, applied as before', async () => {
    const table = server.table('customers').id;
    const before = await storedGate(table);
    const saved = join(dir, 'plain.yml');
    const line = `${gdsLine(['gate', 'get', table])} > ${quote(saved)} && ${gdsLine(['gate', 'apply', table, '-f', saved])}`;
    const run = await shell(line, {});
    expect(run.code, run.stderr).toBe(0);
    expect(await readFile(saved, 'utf8')).toBe(before.content);
    expect(run.stderr).toContain('✓ No change');
  });
});
