// `gds recertify --run-results` of a whole dbt run: 1,000 and 10,000 rebuilt models, every one a
// CERTIFIED table whose certified view the rebuild dropped (so each is published again), on PGlite and, with
// GDS_TEST_DATABASE_URL, on PostgreSQL. The server runs in this process; the run goes through the CLI's own
// service function and HTTP client, in signals of at most 500 names. Budget: every name accounted for, and
// milliseconds per name, not the 55-85 ms a name it cost when each view was published on its own.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createApiClient, staticToken } from '../../src/client/index.js';
import { countText } from '../../src/core/count-text.js';
import { recertify } from '../../src/services/recertification.js';
import { certifiedCopies } from '../../test/helpers/certified-copies.js';
import { startTestServer } from '../../test/helpers/server.js';
import type { BenchModule, BenchRow } from './types.js';

const SIZES = (process.env.GDS_BENCH_RECERTIFY_SIZES ?? '1000,10000').split(',').map(Number);

async function measure(engine: 'PGlite' | 'PostgreSQL', size: number): Promise<BenchRow> {
  const server = await startTestServer({
    rateLimit: 1_000_000_000,
    queryTimeoutMs: 600_000,
    ...(engine === 'PostgreSQL' ? { database: 'postgres' as const } : {}),
  });
  const folder = await mkdtemp(join(tmpdir(), 'gds-bench-recertify-'));
  try {
    const names = await certifiedCopies(server, size, 'rc');
    const results = names.map((name) => ({
      status: 'success',
      unique_id: `model.shop.${name}`,
      message: 'SELECT 1',
      adapter_response: {},
      relation_name: `"dev"."analytics_dev"."${name}"`,
    }));
    const run = {
      metadata: {
        dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json',
        dbt_version: '1.8.0',
        invocation_id: `bench-${size}`,
      },
      results,
      elapsed_time: 60,
      args: { which: 'run' },
    };
    const file = join(folder, 'run_results.json');
    await writeFile(file, JSON.stringify(run));
    const issued = await server.issueToken('ADMIN', {
      name: 'bench-recertify',
      env: 'dev',
      scopes: ['workspace:write:recertify'],
    });
    const client = createApiClient({ baseUrl: server.url, auth: staticToken(issued.tokens.accessToken) });
    const started = performance.now();
    const response = await recertify(client, { runResults: file, environmentLabel: 'dev' });
    const elapsed = performance.now() - started;
    const requests = client.stats.requests;
    await client.close();
    const republished = response.outcomes.filter((o) => o.certifiedView?.republished === true).length;
    return {
      section: 'recertify',
      name: `gds recertify, ${countText(size)} rebuilt names (${engine})`,
      value: `${(elapsed / 1000).toFixed(1)} s`,
      note: `${(elapsed / size).toFixed(1)} ms a name; ${requests} requests; ${response.governed} of ${response.submitted} governed, ${republished} views published again`,
    };
  } finally {
    await rm(folder, { recursive: true, force: true });
    await server.close();
  }
}

export const run: BenchModule = async () => {
  const rows: BenchRow[] = [];
  const engines: Array<'PGlite' | 'PostgreSQL'> = ['PGlite'];
  if (process.env.GDS_TEST_DATABASE_URL !== undefined) engines.push('PostgreSQL');
  else
    rows.push({
      section: 'recertify',
      name: 'PostgreSQL rows',
      value: 'skipped',
      note: 'GDS_TEST_DATABASE_URL is not set',
    });
  for (const engine of engines) for (const size of SIZES) rows.push(await measure(engine, size));
  return rows;
};
