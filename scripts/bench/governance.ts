// Governance paths of the reference server (in process, PGlite in memory): push (register, then
// replace), the auto-baseline profile of a warehouse object, and the recertification signal with a
// 500-name batch and with the real dbt run + manifest fixture.
import { existsSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createServer } from '../../src/server/app.js';
import type { BenchModule, BenchRow } from './types.js';

const REPLACES = 20;
const SIGNALS = 10;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const ms = (value: number) => value.toFixed(1);

export const run: BenchModule = async () => {
  const server = await createServer({ port: 0, jobs: 'manual' });
  try {
    const admin = server.ready.users.find((u) => u.role === 'ADMIN');
    const connector = server.ready.connectors.find((c) => c.name === 'warehouse-dev');
    if (!admin || !connector) throw new Error('bench: seed lacks an admin or the dev connector');
    const call = async (method: string, path: string, token: string, body: unknown) => {
      const started = performance.now();
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const json = (await response.json()) as Record<string, unknown>;
      if (response.status >= 300) throw new Error(`bench: ${path} answered ${response.status}`);
      return { json, elapsed: performance.now() - started };
    };
    const artifact = {
      filename: 'categorydim.yml',
      content: 'table: categorydim\nsource: analytics_dev.categorydim\ncolumns:\n  - name: category_id\n',
      connectorId: connector.id,
    };
    const first = await call('POST', '/api/artifacts', admin.cliToken, artifact);
    const governanceId = String(first.json['governanceId']);
    const replaces: number[] = [];
    for (let i = 0; i < REPLACES; i += 1) {
      replaces.push(
        (await call('POST', '/api/artifacts', admin.cliToken, { ...artifact, replaceId: governanceId }))
          .elapsed,
      );
    }
    const jobsStarted = performance.now();
    const ran = await server.jobs.runPending();
    const perJob = (performance.now() - jobsStarted) / ran.length;
    await server.db.query(`UPDATE gds.tables SET state = 'CERTIFIED' WHERE id = $1`, [governanceId]);
    const tokenResponse = await call('POST', '/api/integration/tokens', admin.accessToken, {
      name: 'bench',
      env: 'dev',
      scopes: ['workspace:write:recertify'],
    });
    const token = String((tokenResponse.json['tokens'] as Record<string, unknown>)['accessToken']);
    const batch = { tables: ['categorydim', ...Array.from({ length: 499 }, (_, i) => `model_${i}`)] };
    // The real dbt run and manifest are the shared fixtures beside the repository: without them, no such row.
    const fixtures = new URL('../../../shared/fixtures/dbt/', import.meta.url);
    // As built into analytics_dev, the schema categorydim is over (dbt wrote main): a signal matches a table
    // only over the relation it rebuilt, and the row times a governed signal.
    const fixture = (name: string) =>
      JSON.parse(
        readFileSync(new URL(name, fixtures), 'utf8')
          .replaceAll('\\"main\\"', '\\"analytics_dev\\"')
          .replaceAll('"schema": "main"', '"schema": "analytics_dev"'),
      ) as unknown;
    const dbt = existsSync(fixtures)
      ? { runResults: fixture('duckdb-v6-run_results.json'), manifest: fixture('duckdb-v12-manifest.json') }
      : undefined;
    const batches: number[] = [];
    const runs: number[] = [];
    for (let i = 0; i < SIGNALS; i += 1) {
      batches.push((await call('POST', '/api/workspace/recertify', token, batch)).elapsed);
      if (dbt !== undefined) runs.push((await call('POST', '/api/workspace/recertify', token, dbt)).elapsed);
    }
    const rows: BenchRow[] = [
      {
        section: 'governance',
        name: 'push (replace), median',
        value: `${ms(median(replaces))} ms`,
        note: `${REPLACES} replaces of a Mode A definition`,
      },
      {
        section: 'governance',
        name: 'baseline job, mean',
        value: `${ms(perJob)} ms`,
        note: `${ran.length} profiles of analytics_dev.categorydim`,
      },
      {
        section: 'governance',
        name: 'recertify 500 names, median',
        value: `${ms(median(batches))} ms`,
        note: '1 governed CERTIFIED, 499 not_governed',
      },
      {
        section: 'governance',
        name: 'recertify dbt run+manifest, median',
        value: dbt === undefined ? '-' : `${ms(median(runs))} ms`,
        note:
          dbt === undefined
            ? 'no ../shared/fixtures/dbt beside the repository'
            : 'duckdb v6 run + 450 KB v12 manifest, built into analytics_dev (categorydim governed)',
      },
    ];
    return rows;
  } finally {
    await server.close();
  }
};
