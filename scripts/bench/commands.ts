// The network commands as real processes (node bin/run.js over dist/, built first) against a reference
// server in this process: one `gds members list --json`, and `gds audit list --all --json` streaming
// every entry of an audit log seeded with 2,000 records (2,000+ entries, 11+ pages of 200).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  cliEntry,
  cliEnv,
  collect,
  ensureBuilt,
  node24,
  repoRoot,
} from '../../test/cli/helpers/cli-process.js';
import { startTestServer } from '../../test/helpers/server.js';
import { median } from './lib/measure.js';
import type { BenchModule, BenchRow } from './types.js';

const RECORDS = 2_000;
const CONCURRENCY = 8;
const RUNS = 5;

export async function timedRun(
  args: string[],
  env: Record<string, string>,
): Promise<{ ms: number; lines: number }> {
  const started = performance.now();
  const child = spawn(node24, [cliEntry, ...args], {
    cwd: repoRoot,
    env: cliEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const result = await collect(child);
  const ms = performance.now() - started;
  if (result.code !== 0) throw new Error(`gds ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return { ms, lines: result.stdout.split('\n').filter((l) => l !== '').length };
}

export const run: BenchModule = async () => {
  await ensureBuilt();
  const server = await startTestServer({ rateLimit: 1_000_000_000 });
  const dir = mkdtempSync(join(tmpdir(), 'gds-bench-cmds-'));
  try {
    const table = server.table('crm_contacts').id;
    const writer = await server.issueToken('OWNER', {
      name: 'bench',
      env: '*',
      scopes: [{ tableId: table, permissions: ['write'] }],
    });
    let next = 0;
    const worker = async () => {
      while (next < RECORDS) {
        const n = (next += 1);
        await server.request('POST', `/api/tables/${table}/records`, {
          token: writer.tokens.accessToken,
          body: { email: `bench-${n}@commands.bench`, full_name: `Bench ${n}` },
        });
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const env = {
      GDS_CONFIG_DIR: join(dir, 'gds'),
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user('OWNER').cliToken,
    };
    const members: number[] = [];
    for (let i = 0; i < RUNS; i += 1) members.push((await timedRun(['members', 'list', '--json'], env)).ms);
    const audit: Array<{ ms: number; lines: number }> = [];
    for (let i = 0; i < 3; i += 1) audit.push(await timedRun(['audit', 'list', '--all', '--json'], env));
    const auditMs = median(audit.map((a) => a.ms));
    const entries = audit[0]?.lines ?? 0;
    const rows: BenchRow[] = [
      {
        section: 'commands',
        name: 'gds members list --json (process)',
        value: `${median(members).toFixed(0)} ms`,
        note: `median of ${RUNS}, wall time of the whole process, server in the bench process`,
      },
      {
        section: 'commands',
        name: 'gds audit list --all --json (process)',
        value: `${auditMs.toFixed(0)} ms`,
        note: `median of 3, ${entries} entries in ${Math.ceil(entries / 200)} pages, ${Math.round(entries / (auditMs / 1000))} entries/s`,
      },
    ];
    return rows;
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
};
