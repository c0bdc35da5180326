// The client's paged walkers against a local reference server (its own process, so the memory
// figures are the client's): 10,000 records seeded through the API, then every record walked with
// `records.iterate` and every RECORD_CREATED audit entry with `auditLog.iterate`.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createApiClient, staticToken } from '../../src/client/index.js';
import type { ApiClient } from '../../src/client/index.js';
import type { ReadyInfo } from '../../src/server/ready.js';
import type { BenchModule, BenchRow } from './types.js';

const SEEDED = 10_000;
const SEED_CONCURRENCY = 8;
const MiB = 1024 * 1024;

// A full collection before and after each walk, so the heap figures show what the walk holds on to
// rather than garbage left by seeding (the bench runs under tsx, without --expose-gc).
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** Starts `npm run server` on a free port without a rate limit; resolves once it listens. */
async function startServer(dir: string) {
  const readyFile = join(dir, 'ready.json');
  const flags = { port: '0', 'ready-file': readyFile, 'rate-limit': '1000000000' };
  const argv = [
    '--import',
    'tsx',
    'src/server/main.ts',
    ...Object.entries(flags).flatMap(([k, v]) => [`--${k}`, v]),
  ];
  const root = new URL('../..', import.meta.url).pathname;
  const child = spawn(process.execPath, argv, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for await (const line of createInterface({ input: child.stdout })) {
    // The ready file is written before this line is printed.
    if (line.includes(' listening on ')) {
      child.stdout.resume();
      const ready = JSON.parse(readFileSync(readyFile, 'utf8')) as ReadyInfo;
      return { ready, stop: () => (child.kill('SIGTERM'), exited) };
    }
  }
  throw new Error('the reference server exited before listening');
}

async function seedRecords(client: ApiClient, tableId: string): Promise<number> {
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < SEEDED) {
      const n = (next += 1);
      await client.records.create(tableId, { email: `bench-${n}@paging.bench`, full_name: `Bench ${n}` });
    }
  };
  await Promise.all(Array.from({ length: SEED_CONCURRENCY }, worker));
  return (performance.now() - started) / 1000;
}

/** Walks `items` to the end, sampling this process's memory every 100 items. */
async function measureWalk(client: ApiClient, items: AsyncIterable<unknown>) {
  const requestsBefore = client.stats.requests;
  collectGarbage();
  const heapBefore = process.memoryUsage().heapUsed;
  const rssBefore = process.memoryUsage.rss();
  let peakHeap = heapBefore;
  let peakRss = rssBefore;
  let rows = 0;
  const started = performance.now();
  for await (const _item of items) {
    rows += 1;
    if (rows % 100 === 0) {
      peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
      peakRss = Math.max(peakRss, process.memoryUsage.rss());
    }
  }
  const seconds = (performance.now() - started) / 1000;
  collectGarbage();
  const heapAfter = process.memoryUsage().heapUsed;
  const requests = client.stats.requests - requestsBefore;
  return { rows, seconds, requests, heapBefore, peakHeap, heapAfter, rssBefore, peakRss };
}

const mib = (bytes: number) => (bytes / MiB).toFixed(1);

function rowsOf(
  section: string,
  walk: Awaited<ReturnType<typeof measureWalk>>,
  pageNote: string,
): BenchRow[] {
  return [
    { section, name: 'rows walked', value: String(walk.rows) },
    { section, name: 'requests', value: String(walk.requests), note: pageNote },
    {
      section,
      name: 'rows/s',
      value: (walk.rows / walk.seconds).toFixed(0),
      note: `${walk.seconds.toFixed(2)} s`,
    },
    {
      section,
      name: 'heap MiB: before / peak / after',
      value: `${mib(walk.heapBefore)} / ${mib(walk.peakHeap)} / ${mib(walk.heapAfter)}`,
      note: 'client process; before and after a full GC; peak sampled every 100 rows',
    },
    {
      section,
      name: 'RSS MiB: before / peak',
      value: `${mib(walk.rssBefore)} / ${mib(walk.peakRss)}`,
      note: 'client process; mostly left by the 10,000 seeding POSTs (Node fetch), tsx alone ~74',
    },
  ];
}

export const run: BenchModule = async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gds-bench-paging-'));
  const server = await startServer(dir);
  const clients: ApiClient[] = [];
  const clientFor = (token: string) => {
    const client = createApiClient({
      baseUrl: server.ready.baseUrl,
      auth: staticToken(token),
      version: 'bench',
    });
    clients.push(client);
    return client;
  };
  try {
    const owner = server.ready.users.find((u) => u.role === 'OWNER');
    const table = server.ready.tables.find((t) => t.name === 'crm_contacts');
    if (!owner || !table) throw new Error('the ready file lacks the OWNER user or the crm_contacts table');
    const session = clientFor(owner.accessToken);
    const issued = await session.tokens.issue({
      name: 'paging-bench',
      env: 'dev',
      scopes: [{ tableId: table.id, permissions: ['read', 'write'] }],
    });
    const data = clientFor(issued.tokens.accessToken);

    const seedSeconds = await seedRecords(data, table.id);
    const records = await measureWalk(data, data.records.iterate(table.id));
    const audit = await measureWalk(session, session.auditLog.iterate({ eventType: 'RECORD_CREATED' }));
    return [
      {
        section: 'client seeding',
        name: 'records created/s',
        value: (SEEDED / seedSeconds).toFixed(0),
        note: `${SEEDED} POST records, ${SEED_CONCURRENCY} concurrent, keep-alive`,
      },
      ...rowsOf('client records.iterate', records, 'limit=100 per page'),
      ...rowsOf('client auditLog.iterate', audit, 'limit=200 per page, eventType=RECORD_CREATED'),
    ];
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
};
