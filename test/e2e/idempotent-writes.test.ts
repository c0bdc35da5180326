// A CI job runs the same gds commands on every commit: gate apply, push --replace, env promote and
// recertify (after `dbt docs generate`, which builds nothing). Run ten times in a row they must leave
// the service as the first run did: one gate1.yml version, CERTIFIED tables still CERTIFIED, no
// recertification request, no new audit entry or job. --dry-run previews and sends nothing; promote
// onto a different table already there is refused like a push name collision. gds runs in the test process
// (runInProcess), but where it is interrupted.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { cliCommand, cliEnv, collect, ensureBuilt, repoRoot } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import { PRICE_POSITIVE_GATE, PRODUCTS_DEFINITION } from './products.js';

let server: TestServer;
let dir: string;
let ownerToken: string;
let recertifyToken: string;
let table: string;
let staging: string;
const outputs: string[] = [];

const gate = PRICE_POSITIVE_GATE;
// The same rules as the service will hold them, written another way (what `gate get` may not round-trip).
const gateReformatted =
  '# price rules\ncustomPredicates:\n  - { severity: HARD_FAIL, name: price_positive, sql: "price > 0" }\n';
const artifact = PRODUCTS_DEFINITION;
// What `dbt docs generate` leaves in target/run_results.json: status success, but nothing was built.
const docsGenerate = {
  metadata: {
    dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json',
    dbt_version: '1.10.0',
    invocation_id: 'docs-1',
  },
  results: [
    {
      status: 'success',
      unique_id: 'model.shop.products',
      relation_name: '"dev"."analytics_dev"."products"',
      message: null,
      timing: [],
      thread_id: 'Thread-1',
      execution_time: 0.1,
      adapter_response: {},
      failures: null,
    },
  ],
  elapsed_time: 0.5,
  args: { which: 'generate' },
};

const file = (name: string) => join(dir, name);

async function gds(args: string[], token = ownerToken): Promise<CliResult> {
  const result = await runInProcess(args, {
    env: {
      GDS_CONFIG_DIR: join(dir, 'config'),
      GDS_SECRET_STORAGE: 'file',
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: token,
    },
  });
  outputs.push(result.stdout, result.stderr);
  return result;
}

function only(result: CliResult): Record<string, unknown> {
  const lines = result.stdout.split('\n').filter((l) => l !== '');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
}

/** Everything a repeated run could change, for both tables. */
async function footprint() {
  return server.sql(
    `SELECT t.id, t.state, t.definition_version, t.gate1_version,
            (SELECT count(*)::int FROM gds.gate1_versions v WHERE v.table_id = t.id) AS gate1_versions,
            (SELECT count(*)::int FROM gds.recertification_requests r WHERE r.table_id = t.id) AS requests,
            (SELECT count(*)::int FROM gds.audit_log a WHERE a.table_id = t.id) AS audits,
            (SELECT count(*)::int FROM gds.jobs j WHERE j.table_id = t.id) AS jobs,
            (SELECT updated_at::text FROM gds.contracts c WHERE c.table_id = t.id) AS contract_updated
       FROM gds.tables t WHERE t.id = ANY($1) ORDER BY t.id`,
    [[table, staging]],
  );
}

beforeAll(async () => {
  [server] = await Promise.all([startTestServer({ jobs: 'manual' }), ensureBuilt()]);
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-idem-'));
  ownerToken = server.user('OWNER').cliToken;
  const issued = await server.issueToken('ADMIN', {
    name: 'ci-recertify',
    env: 'dev',
    scopes: ['workspace:write:recertify'],
  });
  recertifyToken = issued.tokens.accessToken;
  await writeFile(file('gate1.yml'), gate);
  await writeFile(file('gate1.reformatted.yml'), gateReformatted);
  await writeFile(file('products.yml'), artifact);
  await writeFile(file('run_results.json'), JSON.stringify(docsGenerate));

  // The staging warehouse gets the products object the promotion points at.
  await server.sql('CREATE TABLE analytics_staging.products AS SELECT * FROM analytics_dev.products');
  const pushed = await gds(['push', file('products.yml'), '--json']);
  expect(pushed.code, pushed.stderr).toBe(0);
  table = String(only(pushed).governanceId);
  const applied = await gds(['gate', 'apply', table, '-f', file('gate1.yml')]);
  expect(applied.code, applied.stderr).toBe(0);
  const promoted = await gds(['env', 'promote', table, '--to', 'staging', '--json']);
  expect(promoted.code, promoted.stderr).toBe(0);
  staging = String(only(promoted).tableId);
  await server.jobs.runPending();
  // Certification itself is another test's subject: both tables are CERTIFIED from here.
  await server.sql(`UPDATE gds.tables SET state = 'CERTIFIED' WHERE id = ANY($1)`, [[table, staging]]);
});

afterAll(async () => {
  await server?.close();
  for (const output of outputs) {
    expect(output).not.toContain(ownerToken);
    expect(output).not.toContain(recertifyToken);
  }
});

describe('a CI loop run ten times', () => {
  it('leaves one gate1.yml version, the tables CERTIFIED, no recertification request, no audit entry', async () => {
    const before = await footprint();
    expect(before.map((t) => [t.state, t.gate1_versions])).toEqual([
      ['CERTIFIED', 1],
      ['CERTIFIED', 1],
    ]);
    for (let run = 1; run <= 10; run += 1) {
      const gateFile = run % 2 === 0 ? file('gate1.reformatted.yml') : file('gate1.yml');
      const applied = await gds(['gate', 'apply', table, '-f', gateFile]);
      expect(applied, `run ${run}`).toMatchObject({ code: 0, stdout: '' });
      expect(applied.stderr).toBe(`✓ No change: gate1.yml of ${table} is already v1.\n`);

      const replaced = await gds(['push', file('products.yml'), '--replace', table]);
      expect(replaced, `run ${run}`).toMatchObject({ code: 0 });
      expect(replaced.stderr).toBe(`✓ No change: ${table} is already definition v1 (CERTIFIED).\n`);
      expect(replaced.stdout).toMatch(/^Tracking: http\S+\n$/);

      const promoted = await gds(['env', 'promote', table, '--to', 'staging', '--json']);
      expect(promoted.code, promoted.stderr).toBe(0);
      expect(only(promoted)).toMatchObject({ changed: false, tableId: staging });

      const recertified = await gds(
        ['recertify', '--run-results', file('run_results.json'), '--json'],
        recertifyToken,
      );
      expect(recertified.code, recertified.stderr).toBe(7);
      expect(recertified.stdout).toBe('');
      const error = JSON.parse(recertified.stderr.trim()) as { error: { code: string; message: string } };
      expect(error.error.code).toBe('nothing_built');
      expect(error.error.message).toContain('built nothing');
    }
    expect(await footprint()).toEqual(before);
  }, 300_000);

  it('says "No change" on stderr with ✓, stdout empty, for env promote and its --dry-run', async () => {
    const promoted = await gds(['env', 'promote', table, '--to', 'staging']);
    expect(promoted).toMatchObject({ code: 0, stdout: '' });
    expect(promoted.stderr).toBe(
      `✓ No change: ${staging} in staging already holds this definition, gate1.yml and contract.\n`,
    );
    const preview = await gds(['env', 'promote', table, '--to', 'staging', '--dry-run']);
    expect(preview).toMatchObject({ code: 0, stdout: '' });
    expect(preview.stderr).toBe(`✓ No change: ${table} is already promoted to staging as it is.\n`);
  });
});

describe('--dry-run', () => {
  it('gate apply, push --replace, env promote and set-intent print the diff as one {changed, diff} line and send nothing', async () => {
    const before = await footprint();
    await writeFile(file('gate1.next.yml'), gate.replace('price > 0', 'price >= 1'));
    await writeFile(file('products.next.yml'), `${artifact}  - { name: currency, type: text }\n`);
    const runs = [
      ['gate', 'apply', table, '-f', file('gate1.next.yml'), '--dry-run', '--json'],
      ['push', file('products.next.yml'), '--replace', table, '--dry-run', '--json'],
      ['contract', 'set-intent', table, '--intent', 'METRIC', '--dry-run', '--json'],
    ];
    for (const args of runs) {
      const preview = await gds(args);
      expect(preview, args.join(' ')).toMatchObject({ code: 0, stderr: '' });
      expect(only(preview)).toMatchObject({ changed: true, diff: expect.stringContaining('+') });
    }
    const same = await gds(['env', 'promote', table, '--to', 'staging', '--dry-run', '--json']);
    expect(same.code, same.stderr).toBe(0);
    expect(only(same)).toEqual({ changed: false, diff: '' });
    const human = await gds(['gate', 'apply', table, '-f', file('gate1.next.yml'), '--dry-run']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('+    sql: price >= 1');
    expect(await footprint()).toEqual(before);
  });
});

describe('env promote onto a table that differs', () => {
  it('is refused with exit 6 naming --replace <id>; --bundle-in of another table is exit 2 naming both', async () => {
    const changed = await server.request('PUT', `/api/tables/${staging}/gate1`, {
      token: ownerToken,
      body: { content: gate.replace('price > 0', 'price > 2') },
    });
    expect(changed.status).toBe(200);
    const before = await footprint();
    const refused = await gds(['env', 'promote', table, '--to', 'staging']);
    expect(refused.code).toBe(6);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain(`--replace ${staging}`);
    expect(await footprint()).toEqual(before);

    const bundle = file('products.bundle.json');
    expect((await gds(['env', 'promote', table, '--to', 'staging', '--bundle-out', bundle])).code).toBe(0);
    const other = server.table('orders').id;
    const mismatch = await gds(['env', 'promote', other, '--to', 'staging', '--bundle-in', bundle]);
    expect(mismatch.code).toBe(2);
    expect(mismatch.stderr).toContain(table);
    expect(mismatch.stderr).toContain(other);
    expect(await footprint()).toEqual(before);

    const replaced = await gds(['env', 'promote', table, '--to', 'staging', '--replace', staging, '--json']);
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(only(replaced)).toMatchObject({ changed: true, tableId: staging });
  });
});

/** `gds gate status <jobId> --gate 2 --watch --json` as a running process, to signal or wait for. */
function watchJob(jobId: string) {
  const [command, argv] = cliCommand([
    'gate',
    'status',
    jobId,
    '--gate',
    '2',
    '--watch',
    '--interval',
    '1',
    '--json',
  ]);
  return spawn(command, argv, {
    cwd: repoRoot,
    env: cliEnv({
      GDS_CONFIG_DIR: join(dir, 'config'),
      GDS_SECRET_STORAGE: 'file',
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: ownerToken,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

describe('proofs and jobs are findable', () => {
  const lines = (text: string) =>
    text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  it('gate result and gate status read the prf_ proof gate submit printed; gate jobs lists finished jobs', async () => {
    const submitted = await gds(['gate', 'submit', table, '--json']);
    expect(submitted.code, submitted.stderr).toBe(0);
    const proofId = String(only(submitted).id);
    expect(proofId).toMatch(/^prf_/);
    const result = await gds(['gate', 'result', proofId, '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(only(result)).toMatchObject({ id: proofId, kind: 'submit', tableId: table });
    const status = await gds(['gate', 'status', proofId, '--gate', '1']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`Proof ${proofId}`);

    const listed = await gds(['gate', 'jobs', table, '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const jobs = lines(listed.stdout);
    expect(jobs.find((j) => j.id === proofId)).toMatchObject({ type: 'gate1-submit', proof: proofId });
    const baseline = jobs.find((j) => j.type === 'gate-baseline-auto');
    expect(baseline).toMatchObject({ status: 'SUCCEEDED', gate: 1 });
    const human = await gds(['gate', 'jobs', table]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(String(baseline?.id));

    const watched = await gds(['gate', 'status', String(baseline?.id), '--gate', '1', '--watch', '--json']);
    expect(watched.code, watched.stderr).toBe(0);
    expect(lines(watched.stdout)).toEqual([
      expect.objectContaining({ id: baseline?.id, status: 'SUCCEEDED' }),
    ]);
  });

  it('gate status --watch follows a queued job: one NDJSON line per change; Ctrl-C exits 130', async () => {
    const queued = await gds(['gate', 'run', table, '--gate', '2', '--json']);
    expect(queued.code, queued.stderr).toBe(0);
    const jobId = String((only(queued).job as { id: string } | undefined)?.id ?? only(queued).id);
    const child = watchJob(jobId);
    const done = collect(child);
    let printed = '';
    child.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
    for (let i = 0; i < 200 && !printed.includes('QUEUED'); i += 1) await sleep(50);
    child.kill('SIGINT');
    const r = await done;
    outputs.push(r.stdout, r.stderr);
    expect(r.code).toBe(130);
    expect(lines(r.stdout)).toEqual([expect.objectContaining({ id: jobId, status: 'QUEUED' })]);

    const follower = watchJob(jobId);
    const followed = collect(follower);
    let seen = '';
    follower.stdout.on('data', (chunk: Buffer) => (seen += chunk.toString('utf8')));
    for (let i = 0; i < 200 && !seen.includes('QUEUED'); i += 1) await sleep(50);
    await server.jobs.runPending();
    const end = await followed;
    outputs.push(end.stdout, end.stderr);
    expect(end.code, end.stderr).toBe(0);
    const statuses = lines(end.stdout).map((l) => l.status);
    expect(statuses[0]).toBe('QUEUED');
    expect(statuses.at(-1)).toBe('SUCCEEDED');
    expect(new Set(statuses).size).toBe(statuses.length);
  });
});

describe('recertify with a manifest that is not one', () => {
  it('sends the signal without it and says so in one JSON warning line on stderr', async () => {
    await writeFile(file('run.json'), JSON.stringify({ ...docsGenerate, args: { which: 'run' } }));
    await writeFile(file('manifest.json'), '{"nodes": {"model.shop.products": ');
    const r = await gds(
      ['recertify', '--run-results', file('run.json'), '--manifest', file('manifest.json'), '--json'],
      recertifyToken,
    );
    expect(r.code, r.stderr).toBe(0);
    const warnings = r.stderr
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { warning: { code: string; message: string } });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.warning.code).toBe('manifest_ignored');
    expect(only(r)).toMatchObject({
      environmentLabel: 'dev',
      outcomes: [expect.objectContaining({ table: 'products' })],
    });
  });
});

// Last: it changes the contract the promotions above compare.
describe('contract set-intent with the values held', () => {
  it('says "No change" on stderr with ✓, stdout empty', async () => {
    const intent = await gds(['contract', 'set-intent', table, '--intent', 'DECISION']);
    expect(intent.code, intent.stderr).toBe(0);
    const again = await gds(['contract', 'set-intent', table, '--intent', 'DECISION']);
    expect(again).toMatchObject({ code: 0, stdout: '' });
    expect(again.stderr).toMatch(
      new RegExp(`^✓ No change: the contract of ${table} already holds these values \\(\\w+\\)\\.\\n$`),
    );
  });
});
