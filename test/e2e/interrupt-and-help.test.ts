// Ctrl-C in the middle of `gds audit list --all --json` (a stub service that serves one page and then
// never answers), and the help of every network command (a description and examples), the help run by gds in
// the test process.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCommand, cliEnv, collect, ensureBuilt, repoRoot } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';

const token = 'cli_InterruptTestToken0001';
let stub: Server;
let base: string;
const requests: string[] = [];

function entry(n: number) {
  return {
    id: `aud_${n}`,
    userId: 'usr_1',
    tableId: null,
    action: 'RECORD_CREATED',
    resource: 'record',
    environmentLabel: 'dev',
    gateModeAtEvaluation: null,
    createdAt: '2026-01-01T00:00:00.000Z',
  };
}

beforeAll(async () => {
  stub = createServer((req, res) => {
    requests.push(req.url ?? '');
    if (new URL(req.url ?? '/', 'http://x').searchParams.has('cursor')) return; // the second page never comes
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ entries: [entry(1), entry(2), entry(3)], nextCursor: 'c2' }));
  });
  await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
  await ensureBuilt();
});

afterAll(async () => {
  stub.closeAllConnections();
  await new Promise((resolve) => stub.close(resolve));
});

describe('Ctrl-C during audit list --all', () => {
  it('exits 130; every line already written is whole and parses; one interrupted line on stderr', async () => {
    const configDir = join(await mkdtemp(join(tmpdir(), 'gds-int-')), 'gds');
    const [command, argv] = cliCommand(['audit', 'list', '--all', '--json']);
    const child = spawn(command, argv, {
      cwd: repoRoot,
      env: cliEnv({ GDS_CONFIG_DIR: configDir, SERVICE_API_URL: base, SERVICE_TOKEN: token }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const done = collect(child);
    let printed = '';
    child.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
    // Bounded wait: the first page printed and the second asked for (at most 10 s).
    for (let i = 0; i < 200 && !(requests.length >= 2 && printed.split('\n').length > 3); i += 1)
      await sleep(50);
    expect(requests).toHaveLength(2);
    child.kill('SIGINT');
    const r = await done;
    expect(r.code).toBe(130);
    const lines = r.stdout.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(['aud_1', 'aud_2', 'aud_3']);
    expect(
      r.stderr
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual([{ error: { code: 'interrupted', message: 'Interrupted.', suggestion: null, details: null } }]);
    expect(r.stderr + r.stdout).not.toContain(token);
  });
});

describe('help that teaches', () => {
  it.each(['api', 'audit list', 'members list', 'tokens issue', 'tokens refresh'])(
    'gds %s --help: description, examples and the global flags',
    async (command) => {
      const r = await runInProcess([...command.split(' '), '--help']);
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(r.stdout).toContain('DESCRIPTION');
      expect(r.stdout).toMatch(new RegExp(`EXAMPLES\\n[\\s\\S]*gds ${command}\\b`));
      expect(r.stdout).toMatch(
        /\nGLOBAL FLAGS\n {2}.*--max-retry-after.*\n {2}\(see `gds help global-flags`\)\n/,
      );
    },
  );

  it('gds --help lists the new topics', async () => {
    const r = await runInProcess(['--help']);
    expect(r.stdout).toMatch(/\n {2}api +Make an authenticated call/);
    for (const topic of ['audit', 'members', 'tokens'])
      expect(r.stdout).toMatch(new RegExp(`\\n {2}${topic} +\\S`));
  });
});
