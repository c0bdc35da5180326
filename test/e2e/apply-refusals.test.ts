// `gds plan` / `gds apply` when the service refuses or another writer moves first (gds run in the test process
// against the reference server, on a generated dbt project of 3 seeds and 3 models):
//  - a STEWARD's or MEMBER's token, which may not replace an ADMIN's definitions: a project that did not change
//    is all `= unchanged` (no phantom `~ replace`, --detailed-exitcode 0, apply has nothing to do); a changed
//    definition (or, for a MEMBER, contract intent) is `! refused` saying why, apply exits 7 and writes nothing;
//  - a step of apply's batch the service refuses (a person applied gate1.yml between plan and apply: 412) is
//    that table's failure, with the service's code and exit code; the others are reported written and the
//    summary is printed;
//  - two CI jobs of one project: a table the first registers between the second's reads of the environment
//    and of the names is the model's table (compared with), never "the name is held";
//  - the project planned in production while its tables are in dev, under the ids gds derives (shop@con_dev,
//    shop@con_prod): each model refused naming the promotion, which then makes it the promoted table;
//  - a table of dev registered with a model's name between production's plan and apply: that table's register
//    fails with what to do (the promotion) on its line and in its --json record, not "already exists" alone.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDbtProject } from '../../scripts/bench/dbt-manifest.js';
import { createApiClient, staticToken } from '../../src/client/index.js';
import type { ReadyUser } from '../../src/server/ready.js';
import { loadDbtProject } from '../../src/services/dbt-project.js';
import { applyGate } from '../../src/services/gates.js';
import { applyPlan } from '../../src/services/project-apply.js';
import { planProject } from '../../src/services/project-plan.js';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { holdingProxy } from '../helpers/holding-proxy.js';
import { summary } from '../helpers/plan-summary.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

const lines = (text: string): Array<Record<string, unknown>> =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/**
 * In a describe: a server, a generated project of 3 seeds and 3 models (`shop`) with its relations in
 * analytics_dev, applied by an ADMIN when `applied`; `gds` runs gds as `role` (ADMIN), through `base`.
 */
function shopProject(options: { applied: boolean }) {
  const context = { server: undefined as unknown as TestServer, dbt: '', dir: '' };
  const on = () => ['--dbt', context.dbt, '--connector', 'warehouse-dev'];
  const gds = (args: string[], call: { role?: ReadyUser['role']; base?: string } = {}) =>
    runInProcess(args, {
      env: {
        GDS_CONFIG_DIR: join(context.dir, 'config'),
        GDS_SECRET_STORAGE: 'file',
        SERVICE_API_URL: call.base ?? context.server.url,
        SERVICE_TOKEN: context.server.user(call.role ?? 'ADMIN').cliToken,
      },
    });
  beforeAll(async () => {
    context.server = await startTestServer();
    context.dir = await mkdtemp(join(tmpdir(), 'gds-e2e-apply-refusals-'));
    context.dbt = writeDbtProject(3, {
      dir: join(context.dir, 'shop'),
      schema: 'analytics_dev',
      project: 'shop',
    });
    for (const d of (await loadDbtProject(context.dbt, {})).declarations)
      await context.server.sql(
        `CREATE TABLE analytics_dev."${d.name}" (${d.columns.map((c) => `"${c.name}" text`).join(', ')})`,
      );
    if (!options.applied) return;
    const applied = await gds(['apply', ...on(), '--yes', '--json']);
    expect(applied.code, applied.stderr).toBe(0);
    expect(lines(applied.stdout).at(-1)).toEqual(summary({ create: 6 }));
  });
  afterAll(async () => {
    await context.server?.close();
  });
  return { context, gds, on };
}

/** Rewrites the project's manifest or catalog as dbt would after a change. */
async function edit(dbt: string, file: 'manifest' | 'catalog', change: (text: string) => string) {
  const path = join(dbt, 'target', `${file}.json`);
  await writeFile(path, change(await readFile(path, 'utf8')));
}

describe('a token that may not replace the ADMIN’s definitions', { timeout: 300_000 }, () => {
  const { context, gds, on } = shopProject({ applied: true });

  it.each(['STEWARD', 'MEMBER'] as const)(
    '%s: nothing changed is all unchanged, and apply has nothing to do',
    async (role) => {
      const plan = await gds(['plan', ...on(), '--json'], { role });
      expect(plan.code, plan.stderr).toBe(0);
      expect(lines(plan.stdout).at(-1)).toEqual(summary({ unchanged: 6 }));
      const human = await gds(['plan', ...on(), '--detailed-exitcode'], { role });
      expect(human.code, human.stderr).toBe(0);
      expect(human.stdout).not.toContain('~ replace');
      expect(human.stdout).toContain('Plan: 0 to create, 0 to change, 6 unchanged, 0 to remove.');

      const apply = await gds(['apply', ...on(), '--prune', '--yes', '--json'], { role });
      expect(apply.code, apply.stderr).toBe(0);
      expect(lines(apply.stdout)).toEqual([summary({ unchanged: 6 })]);
      const one = await gds(['apply', ...on(), '--select', 'raw_source_0', '--yes'], { role });
      expect(one.code, one.stderr).toBe(0);
      expect(one.stderr).toContain('Nothing to apply.');
    },
  );

  it.each(['STEWARD', 'MEMBER'] as const)('%s: production is refused as before (exit 4)', async (role) => {
    const plan = await gds(
      ['plan', '--dbt', context.dbt, '--connector', 'warehouse-production', '--schema', 'analytics_prod'],
      { role },
    );
    expect(plan.code).toBe(4);
    expect(plan.stderr).toContain('this table is in production');
  });

  it('a changed definition is ! refused saying why; apply exits 7, the table untouched', async () => {
    await edit(context.dbt, 'catalog', (text) => {
      const catalog = JSON.parse(text) as {
        nodes: Record<string, { columns: Record<string, { type: string }> }>;
      };
      const amount = catalog.nodes['model.shop.int_entity_1']?.columns['amount'];
      if (amount === undefined) throw new Error('no amount column in int_entity_1');
      amount.type = 'NUMERIC(18,4)';
      return JSON.stringify(catalog);
    });
    const [before] = await context.server.sql<{ definition_version: number }>(
      `SELECT definition_version FROM gds.tables WHERE active AND name = 'int_entity_1'`,
    );
    for (const role of ['STEWARD', 'MEMBER'] as const) {
      const plan = await gds(['plan', ...on(), '--detailed-exitcode'], { role });
      expect(plan.code, plan.stderr).toBe(0);
      expect(plan.stdout).toMatch(/! refused int_entity_1 \(analytics_dev\.int_entity_1, tbl_\w+\)/);
      expect(plan.stdout).toContain(
        "the model changes its definition, which this token may not: only the table's owner or a workspace admin may replace its definition. Apply as the table's owner or a workspace admin, or leave the model out with --exclude int_entity_1",
      );
      expect(plan.stdout).toContain('numeric(18,4)');
      expect(plan.stdout).toContain('Plan: 0 to create, 0 to change, 5 unchanged, 0 to remove. 1 refused.');

      const apply = await gds(['apply', ...on(), '--yes', '--json'], { role });
      expect(apply.code, apply.stderr).toBe(7);
      expect(lines(apply.stdout).at(-1)).toEqual(summary({ unchanged: 5, refused: 1 }));
      const error = lines(apply.stderr).find((line) => 'error' in line)?.['error'];
      expect(error).toMatchObject({ code: 'refused', details: { refused: [{ table: 'int_entity_1' }] } });
    }
    const [after] = await context.server.sql<{ definition_version: number }>(
      `SELECT definition_version FROM gds.tables WHERE active AND name = 'int_entity_1'`,
    );
    expect(after).toEqual(before);
    // The ADMIN may: the same plan is a replacement.
    const admin = await gds(['plan', ...on(), '--json']);
    expect(lines(admin.stdout).at(-1)).toEqual(summary({ replace: 1, unchanged: 5 }));
  });

  it('a changed contract intent: ! refused for a MEMBER, a change for a STEWARD (who may set it)', async () => {
    // fct_entity_2's grain key (its unique test) moves to parent_id.
    await edit(context.dbt, 'manifest', (text) => {
      const manifest = JSON.parse(text) as { nodes: Record<string, Record<string, unknown>> };
      const [unique] = Object.entries(manifest.nodes).filter(([id]) =>
        id.startsWith('test.shop.unique_fct_entity_2_'),
      );
      if (unique === undefined) throw new Error('no unique test on fct_entity_2');
      manifest.nodes[unique[0]] = JSON.parse(
        JSON.stringify(unique[1]).replaceAll('"fct_entity_2_id"', '"parent_id"'),
      ) as Record<string, unknown>;
      return JSON.stringify(manifest);
    });
    const member = await gds(['plan', ...on(), '--select', 'fct_entity_2'], { role: 'MEMBER' });
    expect(member.code, member.stderr).toBe(0);
    expect(member.stdout).toContain('! refused fct_entity_2');
    expect(member.stdout).toContain(
      'the model changes its contract intent, which this token may not: only its owner or a STEWARD and above may set its contract intent.',
    );
    const steward = await gds(['plan', ...on(), '--select', 'fct_entity_2', '--json'], { role: 'STEWARD' });
    expect(lines(steward.stdout)[0]).toMatchObject({
      table: 'fct_entity_2',
      action: 'replace',
      changes: { definition: false, contract: true },
    });
  });
});

describe('a person applies a gate1.yml between apply’s plan and its writes', { timeout: 300_000 }, () => {
  const { context, gds, on } = shopProject({ applied: true });

  it('that table fails with the service’s 412 (exit 6); the others are reported written, the summary printed', async () => {
    // Only the tests change: a new gate1.yml for each model with an accepted_values test.
    await edit(context.dbt, 'manifest', (text) => text.replaceAll('"returned"', '"lost"'));
    const [row] = await context.server.sql<{ id: string }>(
      `SELECT id FROM gds.tables WHERE active AND name = 'int_entity_1'`,
    );
    const tableId = row?.id ?? '';
    const person = createApiClient({
      baseUrl: context.server.url,
      auth: staticToken(context.server.user('ADMIN').cliToken),
      logger: () => {},
    });
    const proxy = await holdingProxy(context.server.url, {
      holds: (method, path) => method === 'POST' && path.endsWith('/api/artifacts/batch'),
      meanwhile: async () => {
        const current = await person.gates.get(tableId);
        const text = `${current.content}patternChecks:\n  - name: status_lower\n    column: status\n    regex: '^[a-z]+$'\n    severity: HARD_FAIL\n`;
        expect((await applyGate(person, tableId, { name: 'gate1.yml', text })).kind).toBe('applied');
      },
    });
    let apply: CliResult;
    try {
      apply = await gds(['apply', ...on(), '--yes', '--json'], { base: proxy.url });
    } finally {
      await proxy.close();
      await person.close();
    }
    expect(proxy.held()).toBe(true);
    expect(apply.code, apply.stderr).toBe(6);
    const records = lines(apply.stdout);
    expect(records.filter((r) => r['step'] === 'gate1').map((r) => [r['table'], r['outcome']])).toEqual(
      expect.arrayContaining([
        ['stg_entity_0', 'done'],
        ['int_entity_1', 'failed'],
        ['fct_entity_2', 'done'],
      ]),
    );
    expect(records.find((r) => r['table'] === 'int_entity_1' && r['step'] === 'gate1')).toMatchObject({
      tableId,
      outcome: 'failed',
      error: { exitCode: 6, code: 'precondition_failed' },
    });
    expect(records.at(-1)).toEqual(summary({ replace: 2, unchanged: 3, failed: 1 }));
    const error = lines(apply.stderr).find((line) => 'error' in line)?.['error'];
    expect(error).toMatchObject({
      code: 'precondition_failed',
      message: '1 table failed; 2 others are applied.',
      details: { failed: [{ table: 'int_entity_1', step: 'gate1', code: 'precondition_failed' }] },
    });
    expect(apply.stderr).not.toContain('Invalid URL');
    // The person's rules stay; the others have the new values.
    const held = await context.server.sql<{ name: string; person: boolean; lost: boolean }>(
      `SELECT t.name, g.content LIKE '%status_lower%' AS person, g.content LIKE '%lost%' AS lost
         FROM gds.tables t JOIN gds.gate1_versions g ON g.table_id = t.id AND g.version = t.gate1_version
        WHERE t.active AND t.name IN ('stg_entity_0', 'int_entity_1', 'fct_entity_2') ORDER BY t.name`,
    );
    expect(held).toEqual([
      { name: 'fct_entity_2', person: false, lost: true },
      { name: 'int_entity_1', person: true, lost: false },
      { name: 'stg_entity_0', person: false, lost: true },
    ]);
  });
});

describe(
  'two CI jobs of one project, the second started while the first registers',
  { timeout: 300_000 },
  () => {
    const { context, gds, on } = shopProject({ applied: false });

    it('a table the first registers between the second’s reads is the model’s table, not a name held', async () => {
      const dev = context.server.ready.connectors.find((c) => c.environmentLabel === 'dev')?.id ?? '';
      const first = createApiClient({
        baseUrl: context.server.url,
        auth: staticToken(context.server.user('ADMIN').cliToken),
        sleep: async () => {},
        logger: () => {},
      });
      // The second job has read the environment's tables (none of the project's yet) and asks who holds the
      // models' names: the first job registers the whole project just then.
      const proxy = await holdingProxy(context.server.url, {
        holds: (method, path) => method === 'GET' && path.endsWith('/api/tables'),
        meanwhile: async () => {
          const plan = await planProject(first, await loadDbtProject(context.dbt, {}), { connectorId: dev });
          const applied = await applyPlan(first, plan, { describe: (error) => error });
          expect(applied.failed).toEqual([]);
        },
      });
      let second: CliResult;
      try {
        second = await gds(['apply', ...on(), '--yes', '--json'], {
          base: proxy.url,
        });
      } finally {
        await proxy.close();
        await first.close();
      }
      expect(proxy.held()).toBe(true);
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout + second.stderr).not.toContain('is held by table');
      expect(lines(second.stdout).at(-1)).toEqual(summary({ unchanged: 6 }));
      const owners = await context.server.sql<{ name: string; project: string }>(
        `SELECT name, project FROM gds.tables WHERE active AND project LIKE 'shop@%' ORDER BY name`,
      );
      expect(owners).toHaveLength(6);
    });
  },
);

/** The same dbt project built in analytics_prod, its relations there: the project as production runs it. */
async function productionCopy(context: { server: TestServer; dir: string }): Promise<string> {
  const prod = writeDbtProject(3, {
    dir: join(context.dir, 'shop-prod'),
    schema: 'analytics_prod',
    project: 'shop',
  });
  for (const d of (await loadDbtProject(prod, {})).declarations)
    await context.server.sql(
      `CREATE TABLE analytics_prod."${d.name}" (${d.columns.map((c) => `"${c.name}" text`).join(', ')})`,
    );
  return prod;
}

describe('the project planned in production while its tables are in dev', { timeout: 300_000 }, () => {
  const { context, gds } = shopProject({ applied: true });

  it('each model is refused naming the promotion that moves its table, under the id gds derives (shop@con_…)', async () => {
    const prod = await productionCopy(context);
    const [held] = await context.server.sql<{ id: string; project: string }>(
      `SELECT id, project FROM gds.tables WHERE active AND name = 'stg_entity_0'`,
    );
    expect(held?.project).toMatch(/^shop@con_/);
    const plan = await gds(['plan', '--dbt', prod, '--connector', 'warehouse-production', '--json']);
    const refused = lines(plan.stdout).find((r) => r['table'] === 'stg_entity_0');
    expect(refused).toMatchObject({ action: 'refused' });
    expect(refused?.['reason']).toContain(`gds env promote ${held?.id ?? ''} --to production`);
    // As it says: promoted, the model is planned as its promoted table, no longer refused.
    const promoted = await gds(['env', 'promote', held?.id ?? '', '--to', 'production', '--json']);
    expect(promoted.code, promoted.stderr).toBe(0);
    const again = await gds(['plan', '--dbt', prod, '--connector', 'warehouse-production', '--json']);
    expect(lines(again.stdout).find((r) => r['table'] === 'stg_entity_0_production')).toMatchObject({
      action: expect.not.stringMatching(/refused/),
    });
  });
});

describe.each([
  { json: false, name: 'int_entity_1' },
  { json: true, name: 'fct_entity_2' },
])(
  'a table of another environment registered with a model’s name between plan and apply (--json: $json)',
  { timeout: 300_000 },
  ({ json, name }) => {
    const { context, gds } = shopProject({ applied: false });

    it('that table’s register fails saying what to do: the promotion', async () => {
      const prod = await productionCopy(context);
      const dev = context.server.ready.connectors.find((c) => c.environmentLabel === 'dev')?.id ?? '';
      let held = '';
      const proxy = await holdingProxy(context.server.url, {
        holds: (method, path) => method === 'POST' && path.endsWith('/api/artifacts/batch'),
        meanwhile: async () => {
          const response = await context.server.request('POST', '/api/artifacts', {
            token: context.server.user('ADMIN').cliToken,
            body: {
              filename: `${name}.yml`,
              content: `table: ${name}\nsource: analytics_dev.${name}\ncolumns:\n  - name: id\n`,
              connectorId: dev,
            },
          });
          held = String(response.body.tableId ?? response.body.governanceId ?? '');
        },
      });
      let result: CliResult;
      try {
        const args = ['apply', '--dbt', prod, '--connector', 'warehouse-production', '--yes'];
        result = await gds(json ? [...args, '--json'] : args, { base: proxy.url });
      } finally {
        await proxy.close();
      }
      expect(result.code, result.stderr).toBe(6);
      const promote = `gds env promote ${held} --to production`;
      if (!json) {
        const line = `${result.stdout}\n${result.stderr}`
          .split('\n')
          .find((l) => l.startsWith(name) && l.includes('failed'));
        expect(line).toContain(promote);
        return;
      }
      const failed = lines(result.stdout).find((r) => r['table'] === name && r['outcome'] === 'failed');
      expect(failed?.['error']).toMatchObject({
        code: 'name_conflict',
        suggestion: expect.stringContaining(promote),
      });
    });
  },
);

// The promotion is named for a table the caller could promote (its owner or a workspace admin, as the
// service's mayReplace says), not for another team's table that the id gds derives for a dbt project of the same
// name (shop@con_dev) makes look like this project's.
describe('another team’s project of the same dbt name in dev', { timeout: 300_000 }, () => {
  const { context, gds } = shopProject({ applied: true });

  it('names no promotion of a table the caller could not promote; its owner is told it', async () => {
    const staging = writeDbtProject(3, {
      dir: join(context.dir, 'shop-staging'),
      schema: 'analytics_staging',
      project: 'shop',
    });
    for (const d of (await loadDbtProject(staging, {})).declarations)
      await context.server.sql(
        `CREATE TABLE analytics_staging."${d.name}" (${d.columns.map((c) => `"${c.name}" text`).join(', ')})`,
      );
    const [held] = await context.server.sql<{ id: string; project: string }>(
      `SELECT id, project FROM gds.tables WHERE active AND name = 'stg_entity_0'`,
    );
    expect(held?.project).toMatch(/^shop@con_/);
    // The steward (dev and staging, no admin) plans their own shop in staging; the ADMIN's tables hold the names.
    const plan = await gds(['plan', '--dbt', staging, '--connector', 'warehouse-staging', '--json'], {
      role: 'STEWARD',
    });
    const refused = lines(plan.stdout).find((r) => r['table'] === 'stg_entity_0');
    expect(refused).toMatchObject({ action: 'refused' });
    expect(refused?.['reason']).not.toContain('gds env promote');
    expect(refused?.['reason']).toContain('another alias');
    // Theirs, it is named.
    await context.server.sql(
      `UPDATE gds.tables SET owner_id = (SELECT id FROM gds.users WHERE email = 'steward@example.com')
        WHERE id = $1`,
      [held?.id ?? ''],
    );
    const owned = await gds(['plan', '--dbt', staging, '--connector', 'warehouse-staging', '--json'], {
      role: 'STEWARD',
    });
    expect(lines(owned.stdout).find((r) => r['table'] === 'stg_entity_0')?.['reason']).toContain(
      `gds env promote ${held?.id ?? ''} --to staging`,
    );
  });
});
