// `gds plan` / `gds apply` as CI runs them, on the real jaffle-shop project (../shared/fixtures, read in place
// and copied to a temp folder) against the reference server, gds run in the test process (runInProcess: its
// exit codes and streams are what is tested): a plan never promises what apply cannot do (a source the connector lacks is
// `! refused` with a fix that works, and apply says so once, without "the others are applied" when none
// were), --connector takes the connector's name (plan, apply, push), --detailed-exitcode is terraform's
// (2 on a removal too; every failure 1), --json always ends with the summary line (a no-op apply prints it
// alone), the certified tables downstream of a change are named, and --format markdown is a PR comment.
import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { runAs } from '../helpers/run-in-process.js';
import { summary } from '../helpers/plan-summary.js';
import { sharedFixturesDir } from '../helpers/fixtures.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import { needs, noSharedFixtures } from '../helpers/skip.js';
import { loadDbtProject } from '../../src/services/dbt-project.js';

const JAFFLE = join(sharedFixturesDir, 'real/dbt-projects/manoty_jaffle_duckdb');
const SCHEMA = 'analytics_dev';

let server: TestServer;
let dir: string;
let project: string;
let tables = 0;

const lines = (text: string): Array<Record<string, unknown>> =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

const gds = (args: string[]): Promise<CliResult> => runAs(server, 'ADMIN', dir, args);

/** The project on the dev connector, by its name, in the schema its relations are in. */
const onDev = () => ['--dbt', project, '--connector', 'warehouse-dev', '--schema', SCHEMA];

/** Edits the project's manifest as dbt would after a change. */
async function editManifest(change: (manifest: { nodes: Record<string, Record<string, unknown>> }) => void) {
  const path = join(project, 'target/manifest.json');
  const manifest = JSON.parse(await readFile(path, 'utf8')) as {
    nodes: Record<string, Record<string, unknown>>;
  };
  change(manifest);
  await writeFile(path, JSON.stringify(manifest));
}

beforeAll(async () => {
  if (noSharedFixtures !== undefined) return;
  server = await startTestServer();
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-plan-ci-'));
  project = join(dir, 'jaffle');
  await cp(JAFFLE, project, { recursive: true });
  // The project's relations in the dev warehouse schema (dbt wrote them to DuckDB's `main`).
  const declared = await loadDbtProject(project, {});
  tables = declared.declarations.length;
  for (const declaration of declared.declarations) {
    const columns = declaration.columns.map((c) => `"${c.name.toLowerCase()}" text`).join(', ');
    await server.sql(`CREATE TABLE IF NOT EXISTS ${SCHEMA}."${declaration.name}" (${columns})`);
  }
});

afterAll(async () => {
  await server?.close();
});

// Each test runs several gds processes one after the other; on a loaded two-core machine that takes a while.
describe(
  'gds plan / apply in CI on the jaffle-shop project',
  { ...needs(noSharedFixtures), timeout: 300_000 },
  () => {
    it('a source the connector lacks is ! refused with the fix; apply refuses it once, naming what was applied', async () => {
      const plan = await gds(['plan', '--dbt', project, '--connector', 'warehouse-dev']);
      expect(plan.code, plan.stderr).toBe(0);
      expect(plan.stdout).toContain('! refused stg_orders (main.stg_orders)');
      expect(plan.stdout).toContain(
        "Source 'main.stg_orders' is not a warehouse object on connector warehouse-dev (schema analytics_dev), but analytics_dev.stg_orders is: pass --schema analytics_dev",
      );
      expect(plan.stdout).toContain(
        `Plan: 0 to create, 0 to change, 0 unchanged, 0 to remove. ${tables} refused.`,
      );

      const apply = await gds([
        'apply',
        '--dbt',
        project,
        '--connector',
        'warehouse-dev',
        '--select',
        'stg_customers',
        '--yes',
      ]);
      expect(apply.code).toBe(7);
      const both = apply.stdout + apply.stderr;
      expect(both).not.toContain('pass --source');
      expect(both).not.toContain('the others are applied');
      expect(both.split('is not a warehouse object').length - 1).toBe(1);
      expect(apply.stderr).toContain('1 table was refused (stg_customers); nothing was applied.');
      // Nothing was registered.
      expect(lines((await gds(['list', '--json'])).stdout).map((t) => t['name'])).not.toContain(
        'stg_customers',
      );

      // The fix the refusal names works.
      const fixed = await gds(['apply', ...onDev(), '--select', 'stg_customers', '--yes']);
      expect(fixed.code, fixed.stderr).toBe(0);
      expect(fixed.stdout).toContain('Apply: 1 table applied');
    });

    it('--connector takes the name in plan, apply and push; an unknown one is exit 5 with did you mean', async () => {
      const unknown = await gds(['plan', '--dbt', project, '--connector', 'warehuse-dev']);
      expect(unknown.code).toBe(5);
      expect(unknown.stderr).toContain('Did you mean warehouse-dev?');
      await writeFile(
        join(dir, 'nothing.yml'),
        'table: ci_pushed\nsource: analytics_dev.ci_pushed\ncolumns:\n  - name: id\n',
      );
      const typo = await gds(['push', join(dir, 'nothing.yml'), '--connector', 'warehuse-dev', '--dry-run']);
      expect(typo.code).toBe(5);
      expect(typo.stderr).toContain('Did you mean warehouse-dev?');
      await server.sql(`CREATE TABLE ${SCHEMA}.ci_pushed (id integer)`);
      const pushed = await gds(['push', join(dir, 'nothing.yml'), '--connector', 'warehouse-dev', '--json']);
      expect(pushed.code, pushed.stderr).toBe(0);
      expect(lines(pushed.stdout)[0]).toMatchObject({ governanceId: expect.any(String) });
    });

    it('--detailed-exitcode 2 on changes, 0 once applied; --json ends with the summary, alone on a no-op apply', async () => {
      const plan = await gds(['plan', ...onDev(), '--detailed-exitcode', '--json']);
      expect(plan.code, plan.stderr).toBe(2);
      const planned = lines(plan.stdout);
      const firstRun = summary({ create: tables - 1, unchanged: 1 });
      expect(planned.at(-1)).toEqual(firstRun);
      expect(planned.slice(0, -1).every((l) => typeof l['table'] === 'string')).toBe(true);

      // A --jq filter failing on the plan of these changes is a failure, not the answer: 1 under
      // --detailed-exitcode (2 means changes), 2 under --exit-code (1 means changes).
      for (const [flag, code] of [
        ['--detailed-exitcode', 1],
        ['--exit-code', 2],
      ] as const) {
        const failing = await gds(['plan', ...onDev(), flag, '--jq', 'error("boom")']);
        expect(failing.code, failing.stderr).toBe(code);
        expect(lines(failing.stderr)).toMatchObject([{ error: { code: 'jq_failed' } }]);
      }

      const apply = await gds(['apply', ...onDev(), '--yes', '--json']);
      expect(apply.code, apply.stderr).toBe(0);
      expect(lines(apply.stdout).at(-1)).toEqual(firstRun);

      const noop = await gds(['apply', ...onDev(), '--yes', '--json']);
      expect(noop.code, noop.stderr).toBe(0);
      expect(lines(noop.stdout)).toEqual([summary({ unchanged: tables })]);
      expect((await gds(['plan', ...onDev(), '--detailed-exitcode'])).code).toBe(0);
    });

    it('a change names the CERTIFIED tables downstream of it, and a write to a CERTIFIED table says it files a request', async () => {
      await server.sql(
        `UPDATE gds.tables SET state = 'CERTIFIED' WHERE workspace_id = $1 AND name IN ('customer_ltv', 'monthly_revenue', 'stg_payments')`,
        [server.ready.workspaceId],
      );
      await editManifest((manifest) => {
        for (const node of Object.values(manifest.nodes))
          if (
            node['resource_type'] === 'model' &&
            ['stg_orders', 'stg_payments'].includes(node['name'] as string)
          )
            node['description'] = 'after a change';
      });
      const plan = await gds(['plan', ...onDev()]);
      expect(plan.code, plan.stderr).toBe(0);
      expect(plan.stdout).toMatch(
        /~ replace stg_orders[^\n]*\n(?: {2}[^\n]*\n)*? {2}2 certified tables read from this: (customer_ltv, monthly_revenue|monthly_revenue, customer_ltv)\n/,
      );
      expect(plan.stdout).toContain('applying this files a recertification request');
      const json = lines((await gds(['plan', ...onDev(), '--json'])).stdout);
      const orders = json.find((l) => l['table'] === 'stg_orders');
      expect((orders?.['downstreamCertified'] as string[]).sort()).toEqual([
        'customer_ltv',
        'monthly_revenue',
      ]);
      expect(json.find((l) => l['table'] === 'stg_payments')).toMatchObject({
        recertificationRequested: true,
      });
      expect(json.at(-1)).toMatchObject({ summary: { replace: 2, recertificationRequested: 1 } });

      const apply = await gds(['apply', ...onDev(), '--yes']);
      expect(apply.code, apply.stderr).toBe(0);
      expect(apply.stderr).toMatch(/stg_payments \(tbl_\w+\): replace done; filed a recertification request/);
      expect(apply.stdout).toContain('1 recertification request filed.');
    });

    it('a model removed from the project: --detailed-exitcode 2 (--exit-code still 0), the markdown comment shows it; failures are 1', async () => {
      await editManifest((manifest) => {
        delete manifest.nodes['model.jaffle_dbt.top_customers_summary_query'];
      });
      const detailed = await gds(['plan', ...onDev(), '--detailed-exitcode']);
      expect(detailed.code, detailed.stderr).toBe(2);
      expect(detailed.stdout).toContain('- gone top_customers_summary_query');
      expect((await gds(['plan', ...onDev(), '--exit-code'])).code).toBe(0);

      const markdown = await gds(['plan', ...onDev(), '--format', 'markdown']);
      expect(markdown.code, markdown.stderr).toBe(0);
      expect(markdown.stdout).toContain('| `- remove` | 1 |');
      expect(markdown.stdout).toContain(
        '<summary><code>- gone</code> <strong>top_customers_summary_query</strong>',
      );
      expect(markdown.stdout.split('<details>').length - 1).toBe(1);

      // Every failure is 1 under --detailed-exitcode: a usage error (2 otherwise) and an unknown connector (5).
      expect((await gds(['plan', ...onDev(), '--detailed-exitcode', '--nosuch'])).code).toBe(1);
      const unknown = await gds(['plan', '--dbt', project, '--connector', 'nosuch', '--detailed-exitcode']);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('Connector not found');
    });

    it('apply --prune removes nothing while a table of the run is refused (the gone model may be its new name): exit 7', async () => {
      await editManifest((manifest) => {
        const node = manifest.nodes['model.jaffle_dbt.stg_orders'] ?? {};
        manifest.nodes['model.jaffle_dbt.top_customers_renamed'] = {
          ...node,
          unique_id: 'model.jaffle_dbt.top_customers_renamed',
          name: 'top_customers_renamed',
          alias: 'top_customers_renamed',
        };
      });
      const apply = await gds(['apply', ...onDev(), '--prune', '--yes']);
      expect(apply.code, apply.stderr).toBe(7);
      expect(apply.stdout).toContain('! refused top_customers_renamed');
      expect(apply.stdout).toContain(
        'Not pruned: 1 gone table stays until every create and replace succeeds (1 refused).',
      );
      expect(apply.stderr).toContain('1 table was refused (top_customers_renamed)');
      expect(lines((await gds(['list', '--json'])).stdout).map((t) => t['name'])).toContain(
        'top_customers_summary_query',
      );
    });
  },
);
