// `gds list` on a terminal (a pseudo-terminal made by `script`, 120 columns) at 20,000 and 100,000 tables on
// the embedded PGlite: when its first table row shows, when it ends, the CLI's peak memory. The table is
// fitted to the first page and each page is printed as it arrives, so the first row should not wait for the
// last page (it did: 45 s at 100,000 tables). Tables are copies of a seeded one made in SQL (as
// workspace-scale does); the server runs in this process, the CLI in its own (dist/gds when built, else
// `node bin/run.js`; GDS_BENCH_CLI names another, e.g. an older build, for a before/after;
// GDS_BENCH_TERMINAL_SIZES other sizes, e.g. 20000).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { countText } from '../../src/core/count-text.js';
import { startTestServer } from '../../test/helpers/server.js';
import { copyTable } from '../../test/helpers/table-copies.js';
import type { BenchModule, BenchRow } from './types.js';

const SIZES = (process.env.GDS_BENCH_TERMINAL_SIZES ?? '20000,100000').split(',').map(Number);
const root = new URL('../..', import.meta.url).pathname;
const binary = `${root}dist/gds`;
const node = `${root}node_modules/.bin/node`;
const cli = process.env.GDS_BENCH_CLI ?? (existsSync(binary) ? binary : `${node} ${root}bin/run.js`);

const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;

/** `gds list` under `script`: when the first row naming a copied table came, when it ended, peak RSS. */
async function listOnTerminal(env: NodeJS.ProcessEnv, dir: string) {
  const peakFile = join(dir, 'peak');
  const line = `stty cols 120 rows 40; /usr/bin/time -f %M -o ${quote(peakFile)} ${cli} list`;
  const started = performance.now();
  const child = spawn('script', ['-qec', line, '/dev/null'], {
    cwd: root,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let firstRowMs = NaN;
  let tail = '';
  let rows = 0;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const text = tail + chunk;
    const lines = text.split('\n');
    tail = lines.pop() ?? '';
    for (const l of lines) {
      if (!l.includes('bench_')) continue;
      rows += 1;
      if (Number.isNaN(firstRowMs)) firstRowMs = performance.now() - started;
    }
  });
  const code = await new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (exit) => resolve(exit ?? 1));
  });
  child.stdin.end();
  const peakMiB = Number((await readFile(peakFile, 'utf8')).trim().split('\n').pop()) / 1024;
  return { firstRowMs, totalMs: performance.now() - started, peakMiB, rows, code };
}

export const run: BenchModule = async () => {
  const server = await startTestServer({ rateLimit: 1_000_000_000, queryTimeoutMs: 600_000 });
  const dir = await mkdtemp(join(tmpdir(), 'gds-bench-terminal-'));
  try {
    const template = server.table('customers');
    const env = {
      PATH: process.env.PATH,
      HOME: dir,
      TERM: 'xterm-256color',
      NO_COLOR: '1',
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user('OWNER').cliToken,
    };
    const warm = await server.request('GET', '/api/me', { token: env.SERVICE_TOKEN });
    if (warm.status !== 200) throw new Error(`GET /api/me answered ${warm.status}`);
    const rows: BenchRow[] = [];
    let made = 0;
    for (const size of SIZES) {
      await copyTable(server, template.id, size - made, `bench_${made}`);
      await server.sql('ANALYZE gds.tables');
      made = size;
      const list = await listOnTerminal(env, dir);
      if (list.code !== 0) throw new Error(`gds list exited ${list.code}`);
      const note = `PGlite, ${countText(size)} tables, script -qec at 120 columns, ${cli.startsWith(node) ? 'node bin/run.js' : cli.replace(root, '')}`;
      rows.push(
        {
          section: 'scale',
          name: `gds list on a terminal: first row (${countText(size)})`,
          value: `${list.firstRowMs.toFixed(0)} ms`,
          note: `${note}; done when within 3 s: ${list.firstRowMs <= 3000 ? 'within' : 'OVER'}`,
        },
        {
          section: 'scale',
          name: `gds list on a terminal: every table (${countText(size)})`,
          value: `${(list.totalMs / 1000).toFixed(1)} s`,
          note: `${countText(list.rows)} rows, CLI peak ${list.peakMiB.toFixed(0)} MiB`,
        },
      );
    }
    return rows;
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
};
