// `gds records export` and `gds records import` as real CLI processes against the reference
// server in this process.
//
// Throughput as a share of the rate limit's: each run is sized to need one request more than a window holds
// (R = L + 1 requests with the server's limit set to L a minute), so the limit alone forces it to last one
// window: 60 s, the least any client could take. Share = 60 s / the run's wall time (process start and the
// last request's work included): 100 % is a run that loses nothing to pacing; under 100 % is what the waits,
// the service's work after the window and the process cost. Budget: 95 %.
//
// Peak memory (GNU time's maximum RSS) of export and import at 10,000, 100,000 and 1,000,000 rows, with no
// limit in the way: flat when a page (export) or a batch (import) is all that is held.
//
// Every row is measured with the server on PGlite and on PostgreSQL (a fresh database on
// GDS_TEST_DATABASE_URL); without that variable the PostgreSQL rows say they were skipped and why.
// GDS_BENCH_RECORDS=throughput or memory runs one half, GDS_BENCH_RECORDS_ENGINE=pglite or postgres one
// engine, GDS_BENCH_RECORDS_SIZES=10000,100000 other sizes for the memory rows.
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { TestServer } from '../../test/helpers/server.js';
import { startTestServer } from '../../test/helpers/server.js';
import { createModeBTable } from '../../test/helpers/records.js';
import type { BenchModule, BenchRow } from './types.js';

const root = new URL('../..', import.meta.url).pathname;
const binary = `${root}dist/gds`;
const cli = existsSync(binary) ? [binary] : [`${root}node_modules/.bin/node`, `${root}bin/run.js`];
const WINDOW_S = 60;

interface Run {
  seconds: number;
  peakMiB: number;
  code: number;
  stderr: string;
  /** When each request left, in seconds from the first (GDS_DEBUG=1's `→` lines, timed as they arrive). */
  sends: number[];
}

/** The CLI under GNU time, stdout to `stdoutFile` (or discarded), stdin from `stdinFile`. */
function gds(
  args: string[],
  env: NodeJS.ProcessEnv,
  io: { stdoutFile?: string; stdinFile?: string } = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('/usr/bin/time', ['-f', 'peak-kib=%M', ...cli, ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: [io.stdinFile === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (io.stdinFile !== undefined && child.stdin) createReadStream(io.stdinFile).pipe(child.stdin);
    if (io.stdoutFile !== undefined) child.stdout?.pipe(createWriteStream(io.stdoutFile));
    else child.stdout?.resume();
    let stderr = '';
    const sends: number[] = [];
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      const at = performance.now();
      for (const line of chunk.split('\n')) if (line.startsWith('gds: → ')) sends.push(at);
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const peak = Number(/peak-kib=(\d+)/.exec(stderr)?.[1] ?? NaN);
      const first = sends[0] ?? 0;
      resolve({
        seconds: (performance.now() - started) / 1000,
        peakMiB: peak / 1024,
        code: code ?? 1,
        stderr,
        sends: sends.map((t) => (t - first) / 1000),
      });
    });
  });
}

/** `rows` rows in a new Mode B table, made in SQL (sku, label, qty, price, active). */
async function tableOf(server: TestServer, name: string, rows: number): Promise<string> {
  const id = await createModeBTable(server, name, [
    { name: 'sku', type: 'text', required: true },
    { name: 'label', type: 'text', required: false },
    { name: 'qty', type: 'integer', required: false },
    { name: 'price', type: 'numeric', required: false },
    { name: 'active', type: 'boolean', required: false },
  ]);
  // In statements of 100,000 rows: each stays far inside the server's statement deadline.
  for (let from = 1; from <= rows; from += 100_000) {
    await server.sql(
      `INSERT INTO gds.records (table_id, id, data, created_at, updated_at)
       SELECT $1, 'rec_' || g, jsonb_build_object('sku', 'SKU-' || lpad(g::text, 8, '0'),
              'label', 'label, "' || g || '"', 'qty', g, 'price', g / 100.0, 'active', g % 2 = 0), now(), now()
         FROM generate_series($2::int, $3::int) AS g ORDER BY g`,
      [id, from, Math.min(rows, from + 99_999)],
    );
  }
  return id;
}

async function envFor(server: TestServer, tables: string[]): Promise<NodeJS.ProcessEnv> {
  const issued = await server.issueToken('OWNER', {
    name: `bench-${tables.length}-${Date.now()}`,
    env: 'dev',
    scopes: tables.map((tableId) => ({ tableId, permissions: ['read', 'write'] as Array<'read' | 'write'> })),
  });
  return { SERVICE_TOKEN: issued.tokens.accessToken, SERVICE_API_URL: server.url, GDS_DEBUG: '1' };
}

/** Each row also goes to stderr as it is measured: a long bench that fails later keeps what it found. */
function said(row: BenchRow): BenchRow {
  process.stderr.write(`records: ${row.name}: ${row.value} (${row.note ?? ''})\n`);
  return row;
}

/**
 * The share: the limit lets request L+1 leave no sooner than a window (60 s) after the first; the run's own
 * gap between them is what pacing made of it (100 % = sent the moment the window reset). The whole run's
 * time (process start and the service's work on the last request included) is in the note.
 */
function share(run: Run, what: string, rows: number, limit: number, engine: Engine): BenchRow {
  const gap = run.sends.at(-1) ?? Number.NaN;
  const percent = (100 * WINDOW_S) / gap;
  const requests = run.sends.length;
  return said({
    section: 'records',
    name: `${what} ${rows.toLocaleString('en')} rows: share of the rate limit's throughput (${ENGINE_NAME[engine]})`,
    value:
      run.code === 0 && requests === limit + 1
        ? `${percent.toFixed(1)} %`
        : `exit ${run.code}, ${requests} requests`,
    note:
      `limit ${limit}/min, ${requests} requests: request ${limit + 1} left ${gap.toFixed(2)} s after the first (the limit forces 60 s); ` +
      `whole run ${run.seconds.toFixed(1)} s, ${Math.round((rows / run.seconds) * 60).toLocaleString('en')} rows/min; ` +
      `budget 95 %: ${percent >= 95 ? 'within' : 'OVER'}` +
      (run.code === 0 ? '' : `; ${run.stderr.trim().split('\n').slice(-2).join(' ')}`),
  });
}

type Engine = 'pglite' | 'postgres';
const ENGINE_NAME: Record<Engine, string> = { pglite: 'PGlite', postgres: 'PostgreSQL' };

function serverOn(engine: Engine, rateLimit: number): Promise<TestServer> {
  return startTestServer({ rateLimit, ...(engine === 'postgres' ? { database: engine } : {}) });
}

/** Export then import of `rows` rows, each with the server's limit at one request less than it needs. */
async function throughput(rows: number, dir: string, engine: Engine): Promise<BenchRow[]> {
  const exportRequests = Math.ceil(rows / 100);
  const importRequests = 1 + Math.ceil(rows / 10_000); // the columns, then the batches
  const file = join(dir, `rows-${rows}.ndjson`);
  const results: BenchRow[] = [];
  {
    const server = await serverOn(engine, exportRequests - 1);
    try {
      const table = await tableOf(server, `bench_export_${rows}`, rows);
      const run = await gds(['records', 'export', table], await envFor(server, [table]), {
        stdoutFile: file,
      });
      results.push(share(run, 'export', rows, exportRequests - 1, engine));
    } finally {
      await server.close();
    }
  }
  {
    const server = await serverOn(engine, importRequests - 1);
    try {
      const table = await tableOf(server, `bench_import_${rows}`, 0);
      const run = await gds(['records', 'import', table, '-f', file, '--key', 'sku'], {
        ...(await envFor(server, [table])),
        XDG_STATE_HOME: join(dir, 'state'),
      });
      results.push(share(run, 'import', rows, importRequests - 1, engine));
    } finally {
      await server.close();
    }
  }
  return results;
}

/** Peak RSS of export and import at each size, the limit out of the way. */
async function memory(sizes: number[], dir: string, engine: Engine): Promise<BenchRow[]> {
  const server = await serverOn(engine, 1_000_000_000);
  const runs: Array<{ rows: number; exported: Run; imported: Run; bytes: number }> = [];
  try {
    for (const rows of sizes) {
      const source = await tableOf(server, `bench_mem_${rows}`, rows);
      const target = await tableOf(server, `bench_mem_copy_${rows}`, 0);
      const env = { ...(await envFor(server, [source, target])), XDG_STATE_HOME: join(dir, 'state') };
      // A file of each engine's own: gds refuses to write over the other engine's export (exit 2).
      const file = join(dir, `mem-${engine}-${rows}.ndjson`);
      const exported = await gds(['records', 'export', source, '-o', file], env);
      const imported = await gds(['records', 'import', target, '-f', file, '--key', 'sku'], env);
      const stored = await server.sql<{ n: number }>(
        'SELECT count(*)::int AS n FROM gds.records WHERE table_id = $1',
        [target],
      );
      if (stored[0]?.n !== rows) throw new Error(`import of ${rows} rows left ${stored[0]?.n} on the server`);
      runs.push({ rows, exported, imported, bytes: (await stat(file)).size });
    }
  } finally {
    await server.close();
  }
  return runs.flatMap(({ rows, exported, imported, bytes }) => [
    {
      section: 'records',
      name: `export ${rows.toLocaleString('en')} rows: CLI peak memory (${ENGINE_NAME[engine]})`,
      value: `${exported.peakMiB.toFixed(0)} MiB`,
      note: `${exported.seconds.toFixed(1)} s, ${(bytes / 2 ** 20).toFixed(0)} MiB of NDJSON written${exported.code === 0 ? '' : `; exit ${exported.code}`}`,
    },
    {
      section: 'records',
      name: `import ${rows.toLocaleString('en')} rows: CLI peak memory (${ENGINE_NAME[engine]})`,
      value: `${imported.peakMiB.toFixed(0)} MiB`,
      note: `${imported.seconds.toFixed(1)} s, batches of 10,000 on a key${imported.code === 0 ? '' : `; exit ${imported.code}`}`,
    },
  ]);
}

/** Where GDS_TEST_DATABASE_URL is not set, the PostgreSQL rows say so instead of a figure. */
function skipped(sizes: number[], only: string | undefined): BenchRow[] {
  const note = 'skipped: GDS_TEST_DATABASE_URL is not set (no PostgreSQL to run the server on)';
  const names = [
    ...(only === 'memory'
      ? []
      : [10_000, 100_000].flatMap((rows) =>
          ['export', 'import'].map(
            (what) => `${what} ${rows.toLocaleString('en')} rows: share of the rate limit's throughput`,
          ),
        )),
    ...(only === 'throughput'
      ? []
      : sizes.flatMap((rows) =>
          ['export', 'import'].map((what) => `${what} ${rows.toLocaleString('en')} rows: CLI peak memory`),
        )),
  ];
  return names.map((name) => ({ section: 'records', name: `${name} (PostgreSQL)`, value: '-', note }));
}

export const run: BenchModule = async () => {
  const only = process.env.GDS_BENCH_RECORDS;
  const sizes = (process.env.GDS_BENCH_RECORDS_SIZES ?? '10000,100000,1000000').split(',').map(Number);
  const engines = (['pglite', 'postgres'] as const).filter(
    (engine) => (process.env.GDS_BENCH_RECORDS_ENGINE ?? engine) === engine,
  );
  const dir = await mkdtemp(join(tmpdir(), 'gds-bench-records-'));
  const rows: BenchRow[] = [];
  try {
    for (const engine of engines) {
      if (engine === 'postgres' && process.env.GDS_TEST_DATABASE_URL === undefined) {
        rows.push(...skipped(sizes, only).map(said));
        continue;
      }
      if (only !== 'memory') {
        rows.push(...(await throughput(10_000, dir, engine)), ...(await throughput(100_000, dir, engine)));
      }
      if (only !== 'throughput') rows.push(...(await memory(sizes, dir, engine)).map(said));
    }
    return rows;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};
