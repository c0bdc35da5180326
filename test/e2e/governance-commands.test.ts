// The governance commands (list, status --watch, push [--wait], delete, connectors, quarantine, recertification,
// definitions push, recertify) against a real reference server whose gate jobs stay QUEUED until a test runs
// them, so QUEUED -> RUNNING -> SUCCEEDED can be watched. What the server stores, exit codes, stdout against
// stderr, every --json line parsed, and no credential ever printed whole. gds runs in the test process
// (runInProcess), but where it is watched while it runs (startGds) or on a terminal (inTerminal).
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult, RunOptions } from '../cli/helpers/cli-process.js';
import {
  cliCommand,
  cliEnv,
  collect,
  ensureBuilt,
  repoRoot,
  runInTerminal,
} from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { sharedFixturesDir } from '../helpers/fixtures.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import { noSharedFixtures } from '../helpers/skip.js';

let server: TestServer;
let dir: string;
let devConnector: string;
/** A stand-in service that only counts what reaches it: refusals before the network leave it at zero. */
let counter: Server;
let counterUrl: string;
let counted = 0;
const secrets: string[] = [];
const outputs: string[] = [];

beforeAll(async () => {
  [server] = await Promise.all([startTestServer({ jobs: 'manual' }), ensureBuilt()]);
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-gov-'));
  devConnector = server.ready.connectors.find((c) => c.environmentLabel === 'dev')?.id ?? '';
  for (const user of server.ready.users) secrets.push(user.accessToken, user.cliToken);
  counter = createServer((_req, res) => {
    counted += 1;
    res.writeHead(500).end();
  });
  await new Promise<void>((resolve) => counter.listen(0, '127.0.0.1', resolve));
  counterUrl = `http://127.0.0.1:${(counter.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => counter?.close(resolve));
  expect(outputs.length).toBeGreaterThan(0);
  for (const output of outputs) for (const secret of secrets) expect(output).not.toContain(secret);
});

let folders = 0;
const freshFolder = async () => {
  folders += 1;
  const folder = join(dir, `f${folders}`);
  await mkdir(folder, { recursive: true });
  return folder;
};

type Role = 'OWNER' | 'ADMIN' | 'STEWARD' | 'MEMBER';
interface GdsOptions extends Omit<RunOptions, 'nodeArgs'> {
  as?: Role;
  token?: string;
}

function gdsEnv(options: GdsOptions): Record<string, string | undefined> {
  return {
    GDS_CONFIG_DIR: join(dir, 'config', 'gds'),
    GDS_SECRET_STORAGE: 'file',
    SERVICE_API_URL: server.url,
    SERVICE_TOKEN: options.token ?? server.user(options.as ?? 'ADMIN').cliToken,
    ...options.env,
  };
}

async function gds(args: string[], options: GdsOptions = {}): Promise<CliResult> {
  const result = await runInProcess(args, { ...options, env: gdsEnv(options) });
  outputs.push(result.stdout, result.stderr);
  return result;
}

/** Every stdout line parsed: a line that is not JSON fails the test. */
function lines(text: string): Array<Record<string, unknown>> {
  const all = text.split('\n');
  expect(all.pop()).toBe('');
  return all.map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** gds started and left running, its stdout read line by line as it comes. */
function startGds(args: string[], options: GdsOptions = {}) {
  const [command, argv] = cliCommand(args);
  const child = spawn(command, argv, {
    cwd: options.cwd ?? repoRoot,
    env: cliEnv(gdsEnv(options)),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  const done = collect(child).then((r) => {
    outputs.push(r.stdout, r.stderr);
    return r;
  });
  return {
    done,
    /** Waits (at most 15 s) until `count` whole lines are out. */
    async lines(count: number) {
      for (let i = 0; i < 300 && stdout.split('\n').length - 1 < count; i += 1) await sleep(50);
      return lines(stdout.slice(0, stdout.lastIndexOf('\n') + 1));
    },
  };
}

const warehouseColumns = (source: string) =>
  server.ready.warehouseObjects.find((o) => o.source === source)?.columns.map((c) => c.name) ?? [];

/** A SQL artifact for a warehouse object of the dev connector. */
async function sqlArtifact(table: string, folder?: string): Promise<string> {
  const path = join(folder ?? (await freshFolder()), `${table}.sql`);
  const columns = warehouseColumns(`analytics_dev.${table}`);
  expect(columns.length).toBeGreaterThan(0);
  await writeFile(
    path,
    `CREATE VIEW analytics_dev.${table} AS SELECT ${columns.join(', ')} FROM raw.${table};\n`,
  );
  return path;
}

const tableRow = async (id: string) =>
  (await server.sql('SELECT id, name, state, active, owner_id FROM gds.tables WHERE id = $1', [id]))[0];

const jobsOf = (tableId: string) =>
  server.sql<{ id: string; status: string }>(
    'SELECT id, status FROM gds.jobs WHERE table_id = $1 ORDER BY created_at',
    [tableId],
  );

const serverTables = async (role: Role = 'ADMIN', query = '') =>
  (await server.request('GET', `/api/tables${query}`, { token: server.user(role).accessToken })).body
    .tables as Array<{
    id: string;
  }>;

describe('gds push', () => {
  let productsId = '';

  it('registers a SQL artifact: governance id, tracking URL and the QUEUED baseline job, as one JSON line', async () => {
    const file = await sqlArtifact('products');
    const r = await gds(['push', file, '--connector', devConnector, '--json']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const [result, ...rest] = lines(r.stdout);
    expect(rest).toEqual([]);
    productsId = String(result?.governanceId);
    expect(result).toMatchObject({
      trackingUrl: expect.stringContaining(productsId),
      job: { status: 'QUEUED' },
    });
    expect(await tableRow(productsId)).toMatchObject({
      name: 'products',
      state: 'QUARANTINED',
      active: true,
    });
    expect((await jobsOf(productsId)).map((j) => j.status)).toEqual(['QUEUED']);
  });

  it('the same name again without --replace: exit 6, the message verbatim and the --replace hint with the id', async () => {
    const r = await gds(['push', await sqlArtifact('products'), '--connector', devConnector]);
    expect(r.code).toBe(6);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain("Error: A governance artifact named 'products' already exists");
    expect(r.stderr).toContain(`--replace ${productsId}`);
    expect((await serverTables()).filter((t) => t.id === productsId)).toHaveLength(1);
  });

  it('with --replace: a new definition version of the same table, in human mode', async () => {
    const same = await gds([
      'push',
      await sqlArtifact('products'),
      '--connector',
      devConnector,
      '--replace',
      productsId,
    ]);
    expect(same).toMatchObject({ code: 0 });
    expect(same.stderr).toBe(`✓ No change: ${productsId} is already definition v1 (QUARANTINED).\n`);
    expect(same.stdout).toBe(`Tracking: ${server.origin}/dashboard/tables/${productsId}\n`);
    // One column fewer: a definition the table does not hold yet.
    const changed = await sqlArtifact('products');
    await writeFile(changed, (await readFile(changed, 'utf8')).replace(/SELECT (\w+), /, 'SELECT '));
    const r = await gds(['push', changed, '--connector', devConnector, '--replace', productsId]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(
      new RegExp(
        `^Replaced ${productsId} \\(QUARANTINED\\)\\nTracking: http.*\\nStatus: +baseline job job_\\S+ QUEUED\\n`,
      ),
    );
    const [row] = await server.sql('SELECT definition_version FROM gds.tables WHERE id = $1', [productsId]);
    expect(row?.definition_version).toBe(2);
  });

  it('- reads the artifact from stdin, --filename naming it (its type); without --filename exit 2, nothing sent', async () => {
    const view = await readFile(await sqlArtifact('products'), 'utf8');
    const viaCounter = { env: { SERVICE_API_URL: counterUrl }, input: view };
    const unnamed = await gds(['push', '-', '--connector', devConnector, '--json'], viaCounter);
    expect(unnamed.code).toBe(2);
    expect(lines(unnamed.stderr)[0]).toMatchObject({
      error: { code: 'filename_required', suggestion: expect.stringContaining('--filename') as string },
    });
    const misnamed = await gds(['push', '-', '--filename', 'products.txt'], viaCounter);
    expect(misnamed.code).toBe(2);
    expect(misnamed.stderr).toContain('Error: Unsupported file type');
    expect(counted).toBe(0);
    // The table holds the view less one column (the test before): the dry run shows the column coming back.
    const args = ['push', '-', '--filename', 'products.sql', '--replace', productsId, '--dry-run'];
    const preview = await gds(args, { input: view });
    expect(preview.code, preview.stderr).toBe(0);
    expect(preview.stdout).toMatch(/^\+.*\S/m);
    const [row] = await server.sql('SELECT definition_version FROM gds.tables WHERE id = $1', [productsId]);
    expect(row?.definition_version).toBe(2);
  });

  it("--replace by a MEMBER on someone else's table: exit 4, the message, the definition unchanged", async () => {
    const args = [
      'push',
      await sqlArtifact('products'),
      '--connector',
      devConnector,
      '--replace',
      productsId,
    ];
    const human = await gds(args, { as: 'MEMBER' });
    expect(human.code).toBe(4);
    expect(human.stdout).toBe('');
    expect(human.stderr).toContain(
      "Error: Only table owners or workspace admins can replace this table's definition",
    );
    const json = await gds([...args, '--json'], { as: 'MEMBER' });
    expect(json.code).toBe(4);
    expect(lines(json.stderr)[0]).toMatchObject({ error: { code: 'replace_forbidden' } });
    // The very definition the table holds (v2, one column fewer): not "No change" but the same refusal.
    const held = await sqlArtifact('products');
    await writeFile(held, (await readFile(held, 'utf8')).replace(/SELECT (\w+), /, 'SELECT '));
    const identical = await gds(['push', held, '--connector', devConnector, '--replace', productsId], {
      as: 'MEMBER',
    });
    expect(identical.code).toBe(4);
    expect(identical.stdout).toBe('');
    expect(identical.stderr).toContain(
      "Only table owners or workspace admins can replace this table's definition",
    );
    const [row] = await server.sql('SELECT definition_version, state FROM gds.tables WHERE id = $1', [
      productsId,
    ]);
    expect(row).toEqual({ definition_version: 2, state: 'QUARANTINED' });
  });

  it('an unknown connector: exit 5, Connector not found', async () => {
    const r = await gds(['push', await sqlArtifact('products'), '--connector', 'con_nope', '--json']);
    expect(r.code).toBe(5);
    expect(r.stdout).toBe('');
    expect(lines(r.stderr)).toEqual([
      {
        error: {
          code: 'connector_not_found',
          message: 'Connector not found',
          suggestion: expect.stringContaining("--connector takes a connector's id or name"),
          details: expect.anything(),
        },
      },
    ]);
  });

  it('refuses locally, exit 2 with nothing sent: unsupported type, malformed file, no source', async () => {
    const folder = await freshFolder();
    await writeFile(join(folder, 'notes.txt'), 'CREATE VIEW a.b AS SELECT x FROM y');
    await writeFile(join(folder, 'broken.yml'), 'table: t\ncolumns:\n  - name: [unclosed\n');
    await writeFile(join(folder, 'nosource.yml'), 'table: t\ncolumns:\n  - name: id\n');
    const viaCounter = { env: { SERVICE_API_URL: counterUrl }, cwd: folder };
    const unsupported = await gds(['push', 'notes.txt', '--connector', devConnector], viaCounter);
    expect(unsupported.code).toBe(2);
    expect(unsupported.stderr).toContain('Error: Unsupported file type');
    const malformed = await gds(['push', 'broken.yml', '--connector', devConnector], viaCounter);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toMatch(/Error: broken\.yml:\d+:\d+: YAML syntax error/);
    const sourceless = await gds(['push', 'nosource.yml', '--connector', devConnector, '--json'], viaCounter);
    expect(sourceless.code).toBe(2);
    expect(lines(sourceless.stderr)[0]).toMatchObject({ error: { code: 'source_required' } });
    expect(counted).toBe(0);
  });

  it('without --connector, the connector whose schema holds the source; none such is exit 7', async () => {
    const folder = await freshFolder();
    await server.sql('CREATE TABLE analytics_dev.referrals (referral_id integer, channel text)');
    await writeFile(
      join(folder, 'referrals.yml'),
      'table: referrals\nsource: analytics_dev.referrals\ncolumns:\n  - referral_id\n  - channel\n',
    );
    const pushed = await gds(['push', 'referrals.yml', '--json'], { cwd: folder });
    expect(pushed.code).toBe(0);
    const registered = lines(pushed.stdout)[0] as { governanceId: string };
    const status = await gds(['status', registered.governanceId, '--json']);
    expect(lines(status.stdout)[0]).toMatchObject({ environmentLabel: 'dev' });
    await writeFile(
      join(folder, 'nowhere.yml'),
      'table: nowhere\nsource: no_such_schema.t\ncolumns:\n  - id\n',
    );
    const orphan = await gds(['push', 'nowhere.yml', '--json'], { cwd: folder });
    expect(orphan.code).toBe(7);
    expect(lines(orphan.stderr)[0]).toMatchObject({ error: { code: 'connector_required' } });
  });

  it('--wait: returns once the baseline job ends, exit 0, the ended job in the JSON line', async () => {
    const file = await sqlArtifact('productsdim');
    const run = startGds([
      'push',
      file,
      '--connector',
      devConnector,
      '--wait',
      '--interval',
      '0.1',
      '--json',
    ]);
    let jobs: Array<{ id: string; status: string }> = [];
    for (let i = 0; i < 300 && jobs.length === 0; i += 1) {
      await sleep(50);
      jobs = await server.sql(
        `SELECT j.id, j.status FROM gds.jobs j JOIN gds.tables t ON t.id = j.table_id WHERE t.name = 'productsdim' AND t.active`,
      );
    }
    expect(jobs.map((j) => j.status)).toEqual(['QUEUED']);
    await server.jobs.runPending();
    const r = await run.done;
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const [result, ...rest] = lines(r.stdout);
    expect(rest).toEqual([]);
    expect(result).toMatchObject({ job: { id: jobs[0]?.id, status: 'SUCCEEDED', gate: 1 } });
  });
});

describe('gds push --wait when the baseline job does not succeed', () => {
  const production = () => server.ready.connectors.find((c) => c.environmentLabel === 'production')?.id ?? '';

  async function pushAndWait(table: string) {
    const folder = await freshFolder();
    const column = warehouseColumns('analytics_prod.orders')[0] ?? '';
    await writeFile(
      join(folder, 'p.yml'),
      `table: ${table}\nsource: analytics_prod.orders\ncolumns:\n  - name: ${column}\n`,
    );
    const run = startGds(
      ['push', 'p.yml', '--connector', production(), '--wait', '--interval', '0.1', '--json'],
      {
        as: 'OWNER',
        cwd: folder,
      },
    );
    let jobs: Array<{ id: string; status: string }> = [];
    for (let i = 0; i < 300 && jobs.length === 0; i += 1) {
      await sleep(50);
      jobs = await server.sql(
        `SELECT j.id, j.status FROM gds.jobs j JOIN gds.tables t ON t.id = j.table_id WHERE t.name = $1 AND t.active`,
        [table],
      );
    }
    expect(jobs, jobs.length === 0 ? (await run.done).stderr : '').toHaveLength(1);
    return { run, jobId: jobs[0]?.id ?? '' };
  }

  it('FAILED (the warehouse object went away before it ran): exit 1, the job as it ended on stdout', async () => {
    const { run, jobId } = await pushAndWait('prod_orders_failing');
    await server.sql('ALTER TABLE analytics_prod.orders RENAME TO orders_away');
    try {
      await server.jobs.runPending();
    } finally {
      await server.sql('ALTER TABLE analytics_prod.orders_away RENAME TO orders');
    }
    const r = await run.done;
    expect(r.code).toBe(1);
    expect(lines(r.stdout)).toEqual([
      expect.objectContaining({ job: expect.objectContaining({ id: jobId, status: 'FAILED' }) }),
    ]);
    expect(lines(r.stderr)).toEqual([
      {
        error: {
          code: 'job_failed',
          message: expect.stringContaining(`The baseline job ${jobId} ended FAILED`),
          suggestion: expect.any(String),
          details: { jobId, status: 'FAILED' },
        },
      },
    ]);
    await server.sql('UPDATE gds.tables SET active = false WHERE name = $1', ['prod_orders_failing']);
  });

  it('CANCELLED: exit 1', async () => {
    const { run, jobId } = await pushAndWait('prod_orders_cancelled');
    const cancelled = await server.request('POST', `/api/gate-jobs/${jobId}/cancel`, {
      token: server.user('OWNER').accessToken,
    });
    expect(cancelled.status).toBe(200);
    const r = await run.done;
    expect(r.code).toBe(1);
    expect(lines(r.stderr)[0]).toMatchObject({ error: { code: 'job_cancelled' } });
    await server.sql('UPDATE gds.tables SET active = false WHERE name = $1', ['prod_orders_cancelled']);
  });
});

describe('gds status', () => {
  it('shows state, certification, drift and jobs in human mode', async () => {
    const customers = server.table('customers').id;
    const r = await gds(['status', customers]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toContain(`customers (${customers})`);
    expect(r.stdout).toMatch(/State: +CERTIFIED/);
    expect(r.stdout).toMatch(/Schema drift: +none/);
    expect(r.stdout).toMatch(/Jobs: +none active/);
  });

  it('--watch --json: one line per change, QUEUED then RUNNING then none, and exit 0', async () => {
    const registered = await server.request('POST', '/api/artifacts', {
      token: server.user('ADMIN').accessToken,
      body: {
        filename: 'categorydim.sql',
        content: await readFile(await sqlArtifact('categorydim'), 'utf8'),
        connectorId: devConnector,
      },
    });
    expect(registered.status).toBe(202);
    const id = registered.body.governanceId as string;
    const watch = startGds(['status', id, '--watch', '--interval', '0.1', '--json']);
    expect(
      (await watch.lines(1)).map((s) => (s.activeJobs as Array<{ status: string }>).map((j) => j.status)),
    ).toEqual([['QUEUED']]);
    await server.jobs.startPending();
    expect((await watch.lines(2))[1]?.activeJobs).toMatchObject([{ status: 'RUNNING' }]);
    await server.jobs.runPending();
    const r = await watch.done;
    expect(r.code).toBe(0);
    const all = lines(r.stdout);
    expect(all.map((s) => (s.activeJobs as Array<{ status: string }>).map((j) => j.status))).toEqual([
      ['QUEUED'],
      ['RUNNING'],
      [],
    ]);
    for (const status of all) expect(status).toMatchObject({ id, name: 'categorydim', state: 'QUARANTINED' });
  });

  it('an unknown table: exit 5', async () => {
    const r = await gds(['status', 'tbl_nope', '--json']);
    expect(r.code).toBe(5);
    expect(lines(r.stderr)[0]).toMatchObject({ error: { code: expect.any(String) } });
  });
});

describe('gds list and gds quarantine list', () => {
  it("list --json: the server's tables, one line each, with id, name, mode, state, gate", async () => {
    const r = await gds(['list', '--json']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const listed = lines(r.stdout);
    expect(listed.map((t) => t.id)).toEqual((await serverTables()).map((t) => t.id));
    for (const t of listed)
      expect(Object.keys(t)).toEqual(expect.arrayContaining(['id', 'name', 'mode', 'state', 'gate']));
  });

  it('quarantine list: only QUARANTINED tables; piped, one tab-separated row per table', async () => {
    const json = await gds(['quarantine', 'list', '--json']);
    const listed = lines(json.stdout);
    expect(listed.length).toBeGreaterThan(0);
    expect(new Set(listed.map((t) => t.state))).toEqual(new Set(['QUARANTINED']));
    expect(listed.map((t) => t.id)).toEqual(
      (await serverTables('ADMIN', '?state=QUARANTINED')).map((t) => t.id),
    );
    const human = await gds(['quarantine', 'list']);
    expect(human.code).toBe(0);
    const rows = human.stdout
      .trimEnd()
      .split('\n')
      .map((row) => row.split('\t'));
    expect(rows.map((row) => row[0])).toEqual(listed.map((t) => t.id));
    expect(rows.map((row) => row[3])).toEqual(listed.map(() => 'QUARANTINED'));
    expect(human.stdout).toContain(server.table('orders').id);
    expect(human.stdout).not.toContain(server.table('customers').id);
  });
});

describe('gds connectors list', () => {
  it("--json: the workspace's connectors, one line each", async () => {
    const r = await gds(['connectors', 'list', '--json']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(
      lines(r.stdout)
        .map((c) => c.id)
        .sort(),
    ).toEqual(server.ready.connectors.map((c) => c.id).sort());
  });
});

describe('gds delete', () => {
  let stagesId = '';
  beforeAll(async () => {
    const r = await gds([
      'push',
      await sqlArtifact('stg_pipedrive__stages'),
      '--connector',
      devConnector,
      '--json',
    ]);
    expect(r.code).toBe(0);
    stagesId = String(lines(r.stdout)[0]?.governanceId);
  });

  it('without a terminal and without --yes: exit 2, nothing sent, the table stays', async () => {
    const r = await gds(['delete', stagesId], { env: { SERVICE_API_URL: counterUrl } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--yes');
    expect(counted).toBe(0);
    expect(await tableRow(stagesId)).toMatchObject({ active: true });
  });

  it('a Mode B table: exit 7 with the message verbatim', async () => {
    const r = await gds(['delete', server.table('crm_contacts').id, '--yes']);
    expect(r.code).toBe(7);
    expect(r.stderr).toContain('CLI delete is restricted to warehouse-connected governance artifacts');
    expect(await tableRow(server.table('crm_contacts').id)).toMatchObject({ active: true });
  });

  it("a MEMBER on someone else's table: exit 4 with the message verbatim", async () => {
    const r = await gds(['delete', stagesId, '--yes', '--json'], { as: 'MEMBER' });
    expect(r.code).toBe(4);
    expect(lines(r.stderr)[0]).toMatchObject({
      error: { message: expect.stringContaining('Only table owners or workspace admins can delete') },
    });
    expect(await tableRow(stagesId)).toMatchObject({ active: true });
  });

  it('the owner with --yes: gone from the list, the warehouse object untouched', async () => {
    const before = await server.sql('SELECT count(*)::int AS n FROM analytics_dev.stg_pipedrive__stages');
    const r = await gds(['delete', stagesId, '--yes', '--json']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(lines(r.stdout)).toEqual([
      {
        id: stagesId,
        governanceId: expect.any(String),
        state: 'SOFT_DELETED',
        deletedAt: expect.any(String),
      },
    ]);
    expect((await serverTables()).map((t) => t.id)).not.toContain(stagesId);
    expect(await server.sql('SELECT count(*)::int AS n FROM analytics_dev.stg_pipedrive__stages')).toEqual(
      before,
    );
  });
});

describe('gds quarantine open', () => {
  it('writes <table>.sql in the current folder, prints the path, refuses to overwrite, --force replaces', async () => {
    const folder = await freshFolder();
    const orders = server.table('orders').id;
    const r = await gds(['quarantine', 'open', orders], { cwd: folder });
    expect(r.code).toBe(0);
    const path = join(folder, 'orders.sql');
    expect(r.stdout).toBe(`${path}\n`);
    const ddl = await readFile(path, 'utf8');
    expect(ddl).toMatch(/orders/);
    await writeFile(path, 'my edits\n');
    const again = await gds(['quarantine', 'open', orders, '--json'], { cwd: folder });
    expect(again.code).toBe(2);
    expect(lines(again.stderr)[0]).toMatchObject({
      error: { code: 'file_exists', message: expect.stringContaining(path) },
    });
    expect(await readFile(path, 'utf8')).toBe('my edits\n');
    const forced = await gds(['quarantine', 'open', orders, '--force', '--json'], { cwd: folder });
    expect(forced.code).toBe(0);
    expect(lines(forced.stdout)).toEqual([{ path, tableId: orders, name: 'orders', state: 'QUARANTINED' }]);
    expect(await readFile(path, 'utf8')).toBe(ddl);
  });

  it('-o writes the file named', async () => {
    const folder = await freshFolder();
    const r = await gds(['quarantine', 'open', server.table('orders').id, '-o', 'sql-orders.sql'], {
      cwd: folder,
    });
    expect(r.code).toBe(0);
    expect(await readFile(join(folder, 'sql-orders.sql'), 'utf8')).toMatch(/orders/);
  });
});

describe('gds definitions push', () => {
  it('with a MANAGEMENT token: only the governance id on stdout; --replace with it', async () => {
    const issued = await server.issueToken('ADMIN', {
      name: 'ci-definitions',
      env: '*',
      scopes: ['workspace:write:definition'],
    });
    secrets.push(issued.tokens.accessToken, issued.tokens.refreshToken);
    const token = issued.tokens.accessToken;
    const staging = server.ready.connectors.find((c) => c.environmentLabel === 'staging')?.id ?? '';
    const column = warehouseColumns('analytics_staging.orders')[0] ?? '';
    const folder = await freshFolder();
    await writeFile(
      join(folder, 'def.yml'),
      `table: ci_orders\nsource: analytics_staging.orders\ncolumns:\n  - name: ${column}\n`,
    );
    const r = await gds(['definitions', 'push', 'def.yml', '--connector', staging], {
      token,
      cwd: folder,
    });
    expect(r.code).toBe(0);
    const gid = r.stdout.trim();
    expect(r.stdout).toBe(`${gid}\n`);
    expect(await tableRow(gid)).toMatchObject({ name: 'ci_orders', active: true });
    // Run again without state: the 409 says which table holds the name (a MANAGEMENT token cannot list them).
    const collision = await gds(['definitions', 'push', 'def.yml', '--connector', staging, '--json'], {
      token,
      cwd: folder,
    });
    expect(collision.code).toBe(6);
    expect(JSON.parse(collision.stderr)).toMatchObject({
      error: {
        code: 'name_conflict',
        suggestion: expect.stringContaining(`--replace ${gid}`) as string,
        details: { existingId: gid },
      },
    });
    const replaced = await gds(
      ['definitions', 'push', 'def.yml', '--connector', staging, '--replace', gid, '--json'],
      {
        token,
        cwd: folder,
      },
    );
    expect(replaced.code).toBe(0);
    // The same definition again: the service changes nothing and says so.
    expect(lines(replaced.stdout)).toEqual([
      expect.objectContaining({ governanceId: gid, replaced: true, changed: false }),
    ]);
    const again = await gds(['definitions', 'push', 'def.yml', '--connector', staging, '--replace', gid], {
      token,
      cwd: folder,
    });
    expect(again).toMatchObject({ code: 0, stdout: `${gid}\n` });
    expect(again.stderr).toContain(`✓ No change: ${gid} already holds this definition of ci_orders.`);
    // From stdin, --filename naming it: the same definition.
    const piped = await gds(
      ['definitions', 'push', '-', '--filename', 'def.yml', '--connector', staging, '--replace', gid],
      { token, input: await readFile(join(folder, 'def.yml'), 'utf8') },
    );
    expect(piped).toMatchObject({ code: 0, stdout: `${gid}\n` });
    expect(piped.stderr).toContain(`✓ No change: ${gid} already holds this definition of ci_orders.`);
    // The CLI session draws a short-lived MANAGEMENT token, so it reaches the service and meets the same name.
    const personal = await gds(['definitions', 'push', 'def.yml', '--connector', staging], {
      cwd: folder,
    });
    expect(personal.code).toBe(6);
    expect(personal.stderr).toContain("A governance artifact named 'ci_orders' already exists");
  });
});

describe('gds recertify and gds recertification', () => {
  it('the real dbt run results and manifest with an environment-scoped token: one JSON line, the request filed', async ({
    skip,
  }) => {
    skip(noSharedFixtures !== undefined, noSharedFixtures);
    const [row] = await server.sql(`SELECT id FROM gds.tables WHERE name = 'categorydim' AND active`);
    const categorydim = row?.id as string;
    await server.sql('UPDATE gds.tables SET state = $2 WHERE id = $1', [categorydim, 'CERTIFIED']);
    const issued = await server.issueToken('ADMIN', {
      name: 'ci-recertify',
      env: 'dev',
      scopes: ['workspace:write:recertify'],
    });
    secrets.push(issued.tokens.accessToken, issued.tokens.refreshToken);
    // The real run and manifest as built into analytics_dev, the schema categorydim is over (dbt wrote main).
    const inAnalyticsDev = async (name: string) => {
      const text = await readFile(join(sharedFixturesDir, 'dbt', name), 'utf8');
      const file = join(dir, name);
      await writeFile(
        file,
        text
          .replaceAll('\\"main\\"', '\\"analytics_dev\\"')
          .replaceAll('"schema": "main"', '"schema": "analytics_dev"'),
      );
      return file;
    };
    const runResults = await inAnalyticsDev('duckdb-v6-run_results.json');
    const manifest = await inAnalyticsDev('duckdb-v12-manifest.json');
    const r = await gds(
      [
        'recertify',
        '--run-results',
        runResults,
        '--manifest',
        manifest,
        '--evidence-run-id',
        'run-77',
        '--json',
      ],
      { token: issued.tokens.accessToken },
    );
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const [response, ...rest] = lines(r.stdout);
    expect(rest).toEqual([]);

    expect(response).toMatchObject({ environmentLabel: 'dev' });
    const outcomes = response?.outcomes as Array<{ table: string; outcome: string }>;
    expect(outcomes.find((o) => o.table.toLowerCase() === 'categorydim')).toMatchObject({
      outcome: 'recert_filed',
    });

    const listed = await gds(['recertification', 'list', '--table', categorydim, '--json']);
    expect(listed.code).toBe(0);
    const [request] = lines(listed.stdout);
    expect(request).toMatchObject({ tableId: categorydim, cause: 'ingest', status: 'OPEN' });

    const dismissed = await gds([
      'recertification',
      'dismiss',
      String(request?.id),
      '--reason',
      'rebuilt, nothing changed',
    ]);
    expect(dismissed).toMatchObject({ code: 0, stdout: '' });
    expect(dismissed.stderr).toContain(`✓ Dismissed ${String(request?.id)}`);
    const [stored] = await server.sql('SELECT status FROM gds.recertification_requests WHERE id = $1', [
      request?.id,
    ]);
    expect(stored?.status).toBe('DISMISSED');
  });

  it('--tables in human mode: the outcomes table and the counts on stderr', async () => {
    // CERTIFIED here too, so this holds when the dbt test above skipped (no ../shared/fixtures).
    await server.sql(`UPDATE gds.tables SET state = 'CERTIFIED' WHERE name = 'categorydim' AND active`);
    const issued = await server.issueToken('ADMIN', {
      name: 'ci-recertify-any',
      env: '*',
      scopes: ['workspace:write:recertify'],
    });
    secrets.push(issued.tokens.accessToken, issued.tokens.refreshToken);
    const r = await gds(['recertify', '--tables', 'categorydim,no_such_table', '--env', 'dev'], {
      token: issued.tokens.accessToken,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^categorydim\trecert_filed\t/m);
    expect(r.stdout).toMatch(/^no_such_table\tnot_governed\t/m);
    expect(r.stderr).toContain('Environment dev: 2 submitted, 1 governed.');
  });
});

/** gds on a pseudo-terminal; `until` waits (at most 15 s) for text on it, `type` writes keys. */
function inTerminal(args: string[], options: GdsOptions = {}) {
  // A pty of `script` without a terminal above it is 0 columns wide, which sends ora's redraw into a loop.
  const [command, argv] = cliCommand(args);
  const line = `stty cols 100 rows 40; ${[command, ...argv].map((a) => `'${a}'`).join(' ')}`;
  const { child, result } = runInTerminal(line, gdsEnv(options));
  let seen = '';
  child.stdout?.on('data', (chunk: Buffer) => (seen += chunk.toString('utf8')));
  const done = result.then((r) => {
    outputs.push(r.stdout, r.stderr);
    return r;
  });
  return {
    done,
    async until(text: string) {
      for (let i = 0; i < 300 && !seen.includes(text); i += 1) await sleep(50);
      expect(seen).toContain(text);
    },
    type: (keys: string) => child.stdin?.write(keys),
  };
}

describe('on a terminal', () => {
  let queuedTable = '';
  beforeAll(async () => {
    const registered = await server.request('POST', '/api/artifacts', {
      token: server.user('ADMIN').accessToken,
      body: {
        filename: 'terminal.yml',
        content: `table: terminal_orders\nsource: analytics_staging.customers\ncolumns:\n  - name: ${warehouseColumns('analytics_staging.customers')[0] ?? ''}\n`,
        connectorId: server.ready.connectors.find((c) => c.environmentLabel === 'staging')?.id,
      },
    });
    expect(registered.status).toBe(202);
    queuedTable = registered.body.governanceId as string;
  });

  it('status --watch: a spinner while a job is QUEUED; Ctrl-C exits 130 with the cursor shown', async () => {
    const watch = inTerminal(['status', queuedTable, '--watch', '--interval', '0.2']);
    await watch.until('Waiting for 1 active job');
    watch.type('\u0003');
    const r = await watch.done;
    expect(r.code).toBe(130);
    expect(r.stdout).toContain(`terminal_orders (${queuedTable})`);
    expect(r.stdout).toContain('\u001b[?25h');
    expect((await jobsOf(queuedTable)).map((j) => j.status)).toEqual(['QUEUED']);
  });

  it('delete asks on the terminal: n keeps the table (exit 1), y deletes it', async () => {
    const no = inTerminal(['delete', queuedTable]);
    await no.until('(y/N)');
    no.type('n\r');
    expect((await no.done).code).toBe(1);
    expect(await tableRow(queuedTable)).toMatchObject({ active: true });
    const yes = inTerminal(['delete', queuedTable]);
    await yes.until(`Delete terminal_orders (${queuedTable}, QUARANTINED)?`);
    yes.type('y\r');
    const r = await yes.done;
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Deleted ${queuedTable}`);
    expect(await tableRow(queuedTable)).toMatchObject({ active: false });
  });
});

describe('push --wait on a terminal', () => {
  it('a spinner on stderr while the job is QUEUED, then the SUCCEEDED line; exit 0', async () => {
    const folder = await freshFolder();
    const column = warehouseColumns('analytics_staging.customers')[0] ?? '';
    const file = join(folder, 'tty.yml');
    await writeFile(
      file,
      `table: tty_customers\nsource: analytics_staging.customers\ncolumns:\n  - name: ${column}\n`,
    );
    const staging = server.ready.connectors.find((c) => c.environmentLabel === 'staging')?.id ?? '';
    const push = inTerminal(['push', file, '--connector', staging, '--wait', '--interval', '0.1']);
    await push.until('QUEUED');
    await server.jobs.runPending();
    const r = await push.done;
    expect(r.code).toBe(0);
    // The state is coloured as in tables (red for QUARANTINED); the words are the same.
    expect(r.stdout.replaceAll(/\u001b\[[0-9;]*m/g, '')).toMatch(/Registered tbl_\w+ \(QUARANTINED\)/);
    // The output ends with where the job ended (the spinner's last line), said once.
    const plain = r.stdout.replaceAll('\u001b[?25h', '').trimEnd();
    expect(plain.split(/\r?\n/).at(-1)).toMatch(/Baseline job job_\w+ SUCCEEDED$/);
    expect(plain.split('SUCCEEDED')).toHaveLength(2);
    // ora hid the cursor while it spun, and showed it again when it stopped.
    expect(r.stdout).toMatch(/\u001b\[\?25l[\s\S]*Baseline job job_\w+ QUEUED[\s\S]*\u001b\[\?25h/);
  });
});

describe('help that teaches', () => {
  it.each([
    'list',
    'status',
    'push',
    'delete',
    'connectors list',
    'quarantine list',
    'quarantine open',
    'recertification list',
    'recertification dismiss',
    'definitions push',
    'recertify',
  ])('gds %s --help: description and examples', async (command) => {
    const r = await runInProcess([...command.split(' '), '--help']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toContain('DESCRIPTION');
    expect(r.stdout).toMatch(new RegExp(`EXAMPLES\\n[\\s\\S]*gds ${command}\\b`));
  });

  it('gds --help lists the new topics and commands', async () => {
    const r = await runInProcess(['--help']);
    for (const topic of ['connectors', 'definitions', 'quarantine', 'recertification'])
      expect(r.stdout).toMatch(new RegExp(`\\n {2}${topic} +\\S`));
    for (const command of ['list', 'status', 'push', 'delete', 'recertify'])
      expect(r.stdout).toMatch(new RegExp(`\\n {2}${command} +\\S`));
  });
});
