// `gds plan` and `gds apply` on the real jaffle-shop project (../shared/fixtures, read in place), run in the
// test process against the reference server (real `gds` processes where a kill or five applies at once are
// what is checked), whose dev warehouse schema gets the project's relations first.
// What the server holds after apply (tables with the catalog's columns, the unique test as the grain key,
// accepted_values as a predicate holding its values, relationships as a reference), that a second plan is all
// unchanged (--exit-code 0), and that an apply killed half-way and run again, or five applies at once, leave
// no duplicate table and one version per change.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { cliCommand, cliEnv, collect, ensureBuilt, runCli } from '../cli/helpers/cli-process.js';
import { holdingProxy } from '../helpers/holding-proxy.js';
import { runInProcess } from '../helpers/run-in-process.js';
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
let connector: string;

/** The warehouse type of a DuckDB catalog type, for the dev schema's copy of the project's relations. */
function postgresType(type: string): string {
  const t = type.toUpperCase();
  if (t === 'INTEGER') return 'integer';
  if (t === 'BIGINT') return 'bigint';
  if (t === 'HUGEINT' || t.startsWith('DECIMAL')) return 'numeric';
  if (t === 'DOUBLE') return 'double precision';
  if (t === 'DATE') return 'date';
  return 'text';
}

interface PlanLine {
  table: string;
  source: string | null;
  action: string;
  tableId: string | null;
  mappedTests: Array<{ test: string; rule: string }>;
  notMappedTests: Array<{ test: string; reason: string }>;
  changes: { definition: boolean; gate1: boolean; contract: boolean };
}

const lines = <T>(text: string): T[] =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);

function gdsEnv(): Record<string, string> {
  return {
    GDS_CONFIG_DIR: join(dir, 'config'),
    GDS_SECRET_STORAGE: 'file',
    SERVICE_API_URL: server.url,
    SERVICE_TOKEN: server.user('ADMIN').cliToken,
  };
}

const gds = (args: string[]): Promise<CliResult> => runInProcess(args, { env: gdsEnv() });
const projectArgs = () => ['--dbt', project, '--connector', connector, '--schema', SCHEMA];

async function versionsOf(name: string) {
  return server.sql<{ id: string; definition_version: number; gate1_version: number }>(
    `SELECT id, definition_version, gate1_version FROM gds.tables
      WHERE workspace_id = $1 AND active AND lower(name) = lower($2)`,
    [server.ready.workspaceId, name],
  );
}

beforeAll(async () => {
  if (noSharedFixtures !== undefined) return;
  [server] = await Promise.all([startTestServer(), ensureBuilt()]);
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-dbt-'));
  project = join(dir, 'jaffle');
  await cp(JAFFLE, project, { recursive: true });
  connector = server.ready.connectors.find((c) => c.environmentLabel === 'dev')?.id ?? '';
  // The project's relations in the dev warehouse schema, as the project declares them (catalog first).
  const declared = await loadDbtProject(project, {});
  for (const declaration of declared.declarations) {
    const columns = declaration.columns
      .map((c) => `"${c.name.toLowerCase()}" ${postgresType(c.type ?? 'text')}`)
      .join(', ');
    await server.sql(`CREATE TABLE IF NOT EXISTS ${SCHEMA}."${declaration.name}" (${columns})`);
  }
});

afterAll(async () => {
  await server?.close();
});

describe('gds plan / gds apply on the jaffle-shop project', needs(noSharedFixtures), () => {
  it('plan: every model and seed to create, each dbt test mapped or listed, --exit-code 1', async () => {
    const r = await gds(['plan', ...projectArgs(), '--json', '--exit-code']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
    const planned = lines<PlanLine>(r.stdout).filter((line) => !('summary' in line));
    expect(lines<{ summary?: unknown }>(r.stdout).at(-1)?.summary).toMatchObject({ create: planned.length });
    expect(planned.length).toBeGreaterThanOrEqual(15);
    for (const line of planned) {
      expect(Object.keys(line)).toEqual(
        expect.arrayContaining(['table', 'source', 'action', 'tableId', 'mappedTests', 'notMappedTests']),
      );
    }
    const stgOrders = planned.find((p) => p.table === 'stg_orders');
    expect(stgOrders).toMatchObject({ action: 'create', tableId: null, source: `${SCHEMA}.stg_orders` });
    expect(stgOrders?.mappedTests.map((t) => t.rule)).toEqual(
      expect.arrayContaining(['grainKey', 'reference:customer_id']),
    );
    const human = await gds(['plan', ...projectArgs()]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('+ create stg_orders');
    expect(human.stdout).toMatch(/^Plan: \d+ to create, 0 to change, 0 unchanged, 0 to remove\./m);
  });

  it('apply --yes (killed once half-way, then run again) registers the project: columns, grain key, accepted_values predicate, reference; plan is then clean', async () => {
    const off = await gds(['apply', ...projectArgs()]);
    expect(off.code).toBe(2);
    expect(off.stderr).toContain('--yes');

    // Killed with SIGKILL once the service has written its tables and before gds reads the answer (a proxy
    // holds it meanwhile: the kill is no race with the process's exit), then run again: it converges.
    let child: ChildProcess | undefined;
    let killed: Promise<Awaited<ReturnType<typeof collect>>> | undefined;
    const proxy = await holdingProxy(server.url, {
      holds: (method, path) => method === 'POST' && path.endsWith('/api/artifacts/batch'),
      hold: 'answer',
      meanwhile: async () => {
        child?.kill('SIGKILL');
        await killed;
      },
    });
    try {
      const [file, args] = cliCommand(['apply', ...projectArgs(), '--yes', '--json', '--concurrency', '1']);
      child = spawn(file, args, {
        env: cliEnv({ ...gdsEnv(), SERVICE_API_URL: proxy.url }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      killed = collect(child);
      const first = await killed;
      expect(first.signal).toBe('SIGKILL');
      expect(proxy.held()).toBe(true);
    } finally {
      await proxy.close();
    }
    const [held] = await server.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM gds.tables WHERE active AND name IN ('stg_orders', 'stg_customers', 'stg_payments')`,
    );
    // The service wrote the held batch (the project's creates are one batch, under 50 tables): the run again
    // must find those tables, not write them twice.
    expect(held?.n).toBe(3);

    const r = await gds(['apply', ...projectArgs(), '--yes', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const actions = lines<{ table: string; step: string; outcome: string; tableId: string }>(r.stdout);
    expect(actions.filter((a) => a.outcome === 'failed')).toEqual([]);
    // No table twice, none missing.
    const listed = lines<{ name: string }>((await gds(['list', '--json'])).stdout).map((t) => t.name);
    expect(listed.length).toBe(new Set(listed).size);
    for (const name of ['stg_orders', 'stg_customers', 'stg_payments', 'raw_orders'])
      expect(listed).toContain(name);
    for (const name of ['stg_orders', 'stg_customers', 'stg_payments'])
      expect((await versionsOf(name))[0]?.definition_version).toBe(1);
    const [stgOrders] = await versionsOf('stg_orders');
    const id = stgOrders?.id ?? '';

    const definition = await server.request('GET', `/api/tables/${id}/definition`, {
      token: server.user('ADMIN').cliToken,
    });
    const columns = (
      definition.body as { definition: { columns: Array<{ name: string; references?: unknown }> } }
    ).definition.columns;
    expect(columns.map((c) => c.name)).toEqual(['order_id', 'customer_id', 'order_date', 'status']);
    expect(columns.find((c) => c.name === 'customer_id')?.references).toBe(
      `${SCHEMA}.stg_customers.customer_id`,
    );

    const contract = await server.request('GET', `/api/tables/${id}/semantic-contract`, {
      token: server.user('ADMIN').cliToken,
    });
    expect(contract.body).toMatchObject({ contract: { grainKeyColumns: ['order_id'] } });

    const gate = await server.request('GET', `/api/tables/${id}/gate1`, {
      token: server.user('ADMIN').cliToken,
    });
    const content = (gate.body as { content: string }).content;
    expect(content).toContain('customPredicates');
    for (const value of ['placed', 'shipped', 'completed', 'returned', 'return_pending'])
      expect(content).toContain(value);

    const status = await gds(['status', 'stg_orders', '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ id, name: 'stg_orders' });

    const again = await gds(['plan', ...projectArgs(), '--exit-code']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/Plan: 0 to create, 0 to change, \d+ unchanged, 0 to remove\./);
    const second = await gds(['apply', ...projectArgs(), '--yes']);
    expect(second.code).toBe(0);
    expect(second.stderr).toContain('Nothing to apply.');
  });

  it('a changed model: five applies at once leave one new version of its definition and gate1.yml', async () => {
    const [before] = await versionsOf('stg_payments');
    // The model's accepted_values-free payments get a new column description and a changed test: edit the
    // manifest as dbt would after a change to that model.
    const manifestPath = join(project, 'target/manifest.json');
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as {
      nodes: Record<
        string,
        { resource_type: string; name: string; description?: string; attached_node?: string }
      >;
    };
    const node = Object.values(manifest.nodes).find(
      (n) => n.resource_type === 'model' && n.name === 'stg_payments',
    );
    if (node === undefined) throw new Error('no stg_payments in the manifest');
    node.description = 'Payments, one row each, after the change';
    await writeFile(manifestPath, JSON.stringify(manifest));
    const plan = await gds(['plan', ...projectArgs(), '--json']);
    const changed = lines<PlanLine>(plan.stdout).filter((p) => 'table' in p && p.action !== 'unchanged');
    expect(changed.map((p) => [p.table, p.action])).toEqual([['stg_payments', 'replace']]);

    const runs = await Promise.all(
      Array.from({ length: 5 }, () =>
        runCli(['apply', ...projectArgs(), '--yes', '--json'], { env: gdsEnv() }),
      ),
    );
    for (const run of runs) expect(run.stderr).toBe('');
    expect(runs.map((run) => run.code)).toEqual([0, 0, 0, 0, 0]);
    const after = await versionsOf('stg_payments');
    expect(after).toHaveLength(1);
    expect(after[0]?.definition_version).toBe((before?.definition_version ?? 0) + 1);
    expect(after[0]?.gate1_version).toBe(before?.gate1_version);
    expect((await gds(['plan', ...projectArgs(), '--exit-code'])).code).toBe(0);
  });

  it('plan --out saves the plan (0600); apply FILE applies it, and refuses it (exit 6, naming the table) once the service changed', async () => {
    const file = join(dir, 'plan.json');
    const saved = await gds(['plan', ...projectArgs(), '--out', file]);
    expect(saved.code, saved.stderr).toBe(0);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ format: 'gds-plan', version: 1 });
    expect(saved.stderr).toContain(`✓ Saved the plan to ${file}`);
    // Under --json every line of stderr parses: the confirmation is not written there.
    const savedJson = await gds(['plan', ...projectArgs(), '--out', file, '--force', '--json']);
    expect(savedJson.code, savedJson.stderr).toBe(0);
    for (const line of savedJson.stderr.split('\n').filter((l) => l !== ''))
      expect(() => JSON.parse(line)).not.toThrow();
    const clean = await gds(['apply', file, '--yes']);
    expect(clean.code, clean.stderr).toBe(0);
    expect(clean.stderr).toContain('Nothing to apply.');

    // Another writer changes stg_orders' gate1.yml after the plan was saved.
    const rules = join(dir, 'other-gate1.yml');
    await writeFile(rules, 'fieldOverrides:\n  - field: order_id\n    nullRate: { warn: 0.1, fail: 0.2 }\n');
    expect((await gds(['gate', 'apply', 'stg_orders', '-f', rules])).code).toBe(0);
    const before = await versionsOf('stg_orders');
    const stale = await gds(['apply', file, '--yes', '--json']);
    expect(stale.code).toBe(6);
    expect(stale.stdout).toBe('');
    const error = JSON.parse(stale.stderr.trim().split('\n').at(-1) ?? '{}') as {
      error: { code: string; message: string };
    };
    expect(error.error.code).toBe('plan_stale');
    expect(error.error.message).toContain('stg_orders');
    expect(await versionsOf('stg_orders')).toEqual(before);
    // Flags that shape a plan do not go with a saved one.
    expect((await gds(['apply', file, '--yes', '--select', 'stg_orders'])).code).toBe(2);
    // Neither a project nor a plan file.
    const neither = await gds(['apply', '--yes']);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain('--dbt');
  });

  it('plan --out - writes the plan file to stdout, no file named "-"; an existing --out file is kept without --force', async () => {
    const folder = await mkdtemp(join(dir, 'out-'));
    const piped = await runInProcess(['plan', ...projectArgs(), '--out', '-'], {
      env: gdsEnv(),
      cwd: folder,
    });
    expect(piped.code, piped.stderr).toBe(0);
    // stdout is the plan file alone (the plan's text would spoil it), stderr its summary.
    expect(JSON.parse(piped.stdout)).toMatchObject({ format: 'gds-plan', version: 1 });
    expect(piped.stderr).toMatch(/^Plan: \d+ to create, /m);
    expect(piped.stderr).not.toContain('gds apply -');
    expect(await readdir(folder)).toEqual([]);
    for (const shaped of [['--json'], ['--format', 'markdown']]) {
      const taken = await runInProcess(['plan', ...projectArgs(), '--out', '-', ...shaped, '--json'], {
        env: gdsEnv(),
        cwd: folder,
      });
      expect(taken.code).toBe(2);
      expect(taken.stdout).toBe('');
    }

    const notes = join(folder, 'notes.txt');
    await writeFile(notes, 'precious\n');
    const kept = await gds(['plan', ...projectArgs(), '--out', notes, '--json']);
    expect(kept.code).toBe(2);
    expect(JSON.parse(kept.stderr.trim().split('\n').at(-1) ?? '{}')).toMatchObject({
      error: { code: 'output_exists' },
    });
    expect(await readFile(notes, 'utf8')).toBe('precious\n');
    const replaced = await gds(['plan', ...projectArgs(), '--out', notes, '--force']);
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(JSON.parse(await readFile(notes, 'utf8'))).toMatchObject({ format: 'gds-plan' });
  });

  it('apply --json says the plan\'s warnings on stderr, each a {"warning"} line; stdout stays its actions', async () => {
    // An --exclude that matches nothing is such a warning (it excludes nothing, as dbt warns).
    const r = await gds(['apply', ...projectArgs(), '--yes', '--json', '--exclude', 'tag:no_such_tag']);
    expect(r.code).toBe(0);
    const warnings = lines<{ warning?: { message: string } }>(r.stderr);
    expect(warnings.map((w) => w.warning?.message)).toEqual([
      '--exclude tag:no_such_tag matches no enabled model, seed, snapshot or test of the project; it excludes nothing',
    ]);
    expect(r.stdout).not.toContain('no_such_tag');
  });
});

describe(
  'on a server started with --dbt (the project as its own warehouse schema)',
  needs(noSharedFixtures),
  () => {
    let dbtServer: TestServer;
    beforeAll(async () => {
      if (noSharedFixtures !== undefined) return;
      dbtServer = await startTestServer({ dbt: JAFFLE });
    });
    afterAll(async () => {
      await dbtServer?.close();
    });

    it('plan and apply with the connector the server made, no --schema; then plan --exit-code is 0', async () => {
      const made = dbtServer.ready.dbt?.tables ?? [];
      expect(made.length).toBeGreaterThan(0);
      const connectorId = made[0]?.connectorId ?? '';
      const env = {
        GDS_CONFIG_DIR: join(dir ?? tmpdir(), 'config-dbt'),
        GDS_SECRET_STORAGE: 'file',
        SERVICE_API_URL: dbtServer.url,
        SERVICE_TOKEN: dbtServer.user('ADMIN').cliToken,
      };
      // gds.yml beside the project names the connector, so nothing else is needed.
      const copy = await mkdtemp(join(tmpdir(), 'gds-e2e-dbt-own-'));
      await cp(JAFFLE, copy, { recursive: true });
      await writeFile(join(copy, 'gds.yml'), `connector: ${connectorId}\n`);
      const applied = await runInProcess(['apply', '--dbt', copy, '--yes', '--json'], { env });
      expect(applied.stderr).toBe('');
      expect(applied.code).toBe(0);
      const again = await runInProcess(['plan', '--dbt', copy, '--exit-code'], { env });
      expect(again.code).toBe(0);
      expect(again.stdout).toMatch(/Plan: 0 to create, 0 to change, \d+ unchanged, 0 to remove\./);
      const status = await runInProcess(['status', 'stg_orders', '--json'], { env });
      expect(JSON.parse(status.stdout)).toMatchObject({ name: 'stg_orders', source: 'main.stg_orders' });
    });
  },
);
