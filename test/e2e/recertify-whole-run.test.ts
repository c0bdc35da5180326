// `gds recertify --run-results` of a whole dbt run, on PGlite and on PostgreSQL (skipped, saying why, without
// GDS_TEST_DATABASE_URL): 1,000 rebuilt models, each a CERTIFIED table whose certified view the rebuild
// dropped, so the service publishes every one again. gds (in the test process, runInProcess) sends the run as
// two signals of 500 and exits 0 with all 1,000 accounted for: each outcome, each view back, each table
// signalled once.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { runResultsOf } from '../helpers/certified-copies.js';
import { recertifyEnv, startRecertifyServer } from '../helpers/recertify-runs.js';
import { ENGINES } from '../helpers/engines.js';
import type { TestServer } from '../helpers/server.js';
import { needs } from '../helpers/skip.js';

const MODELS = 1_000;

describe.each(ENGINES)('recertify of a 1,000-model dbt run on $engine', ({ postgres, skip }) => {
  let server: TestServer;
  let dir: string;
  let token: string;
  let names: string[];

  beforeAll(async () => {
    if (skip !== undefined) return;
    ({ server, token, names } = await startRecertifyServer({ postgres, models: MODELS, prefix: 'whole' }));
    dir = await mkdtemp(join(tmpdir(), 'gds-e2e-whole-run-'));
    await writeFile(join(dir, 'run_results.json'), runResultsOf(names, 'inv-whole'));
  }, 300_000);

  afterAll(async () => {
    await server?.close();
  });

  const gds = (args: string[]): Promise<CliResult> =>
    runInProcess(args, {
      env: recertifyEnv(dir, server.url, token),
    });

  it(
    'exits 0 with every table accounted for and every certified view published again',
    needs(skip),
    async () => {
      const r = await gds(['recertify', '--run-results', join(dir, 'run_results.json'), '--json']);
      expect(r.code, r.stderr).toBe(0);
      const lines = r.stdout.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      const response = JSON.parse(lines[0] ?? '') as {
        submitted: number;
        governed: number;
        outcomes: Array<{ table: string; outcome: string; certifiedView?: { republished: boolean } }>;
      };
      expect(response.submitted).toBe(MODELS);
      expect(response.governed).toBe(MODELS);
      expect(response.outcomes.map((o) => o.table)).toEqual(names);
      expect(response.outcomes.every((o) => o.outcome === 'recert_filed')).toBe(true);
      expect(response.outcomes.every((o) => o.certifiedView?.republished === true)).toBe(true);
      const [views] = await server.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_catalog.pg_views WHERE schemaname = 'certified_dev' AND viewname LIKE 'whole\\_%'`,
      );
      expect(views?.n).toBe(MODELS);
      const signals = await server.sql<{ n: number; tables: number }>(
        `SELECT count(*)::int AS n, count(DISTINCT table_id)::int AS tables FROM gds.audit_log
        WHERE action = 'RECERTIFY_SIGNAL' AND table_id LIKE 'tbl_whole\\_%'`,
      );
      expect(signals[0]).toEqual({ n: MODELS, tables: MODELS });
    },
  );
});
