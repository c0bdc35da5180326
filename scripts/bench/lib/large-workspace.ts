// A server whose workspace holds `count` copies of the seeded `customers` table (one INSERT), for the
// benches at 100,000 tables.
import { performance } from 'node:perf_hooks';
import type { TestServer } from '../../../test/helpers/server.js';
import { startTestServer } from '../../../test/helpers/server.js';
import { copyTable } from '../../../test/helpers/table-copies.js';

/** The server, its template table, and how long the tables took to make (seconds, one decimal). */
export async function largeWorkspace(
  count: number,
  database: 'pglite' | 'postgres' = 'pglite',
): Promise<{ server: TestServer; template: TestServer['ready']['tables'][number]; made: string }> {
  // Making 100,000 tables is one INSERT: on a loaded machine it outlasts the default 30 s query deadline.
  const server = await startTestServer({ database, rateLimit: 1_000_000_000, queryTimeoutMs: 600_000 });
  try {
    const template = server.table('customers');
    const started = performance.now();
    await copyTable(server, template.id, count, 'bench');
    await server.sql('ANALYZE gds.tables');
    return { server, template, made: ((performance.now() - started) / 1000).toFixed(1) };
  } catch (error) {
    await server.close();
    throw error;
  }
}
