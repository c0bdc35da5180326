// The gate, certification and contract commands against a real reference server: one table's life from
// push to promotion, what the server stores after each step, exit codes, stdout against stderr, NDJSON. No
// run may print a credential whole (checked at the end). gds runs in the test process (runInProcess), but in
// a shell pipeline.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withProfileLock } from '../../src/auth/config.js';
import { saveProfile } from '../../src/auth/profiles.js';
import { bundleDigest } from '../../src/core/bundle-seal.js';
import type { CliResult, RunOptions } from '../cli/helpers/cli-process.js';
import { cliCommand, cliEnv, collect, ensureBuilt, repoRoot } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import { PRICE_POSITIVE_GATE, PRODUCTS_DEFINITION } from './products.js';

let server: TestServer;
let dir: string;
let ownerToken: string;
let table: string;
const secrets: string[] = [];
const outputs: string[] = [];

const badGate =
  'customPredicates:\n  - name: price_at_least_5\n    sql: price >= 5\n    severity: HARD_FAIL\n';
const goodGate = PRICE_POSITIVE_GATE;
const invalidGate = 'customPredicates:\n  - name: sleepy\n    sql: "pg_sleep(1)"\n    severity: HARD_FAIL\n';
const productsArtifact = PRODUCTS_DEFINITION;

beforeAll(async () => {
  [server] = await Promise.all([startTestServer({ jobs: 'manual' }), ensureBuilt()]);
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-gov-'));
  ownerToken = server.user('OWNER').cliToken;
  for (const user of server.ready.users) secrets.push(user.accessToken, user.cliToken);
  await Promise.all(
    Object.entries({ 'bad.yml': badGate, 'good.yml': goodGate, 'invalid.yml': invalidGate }).map(
      ([name, text]) => writeFile(join(dir, name), text),
    ),
  );
});

afterAll(async () => {
  await server?.close();
  expect(outputs.length).toBeGreaterThan(0);
  for (const output of outputs) {
    for (const secret of secrets) expect(output).not.toContain(secret);
  }
});

const file = (name: string) => join(dir, name);
let folders = 0;
function freshConfigDir(): string {
  folders += 1;
  return join(dir, `c${folders}`, 'gds');
}

interface GdsOptions extends Omit<RunOptions, 'nodeArgs'> {
  configDir?: string;
  /** Run with the OWNER's static CLI token in SERVICE_TOKEN (default true). */
  owner?: boolean;
}

async function gds(args: string[], options: GdsOptions = {}): Promise<CliResult> {
  const result = await runInProcess(args, {
    ...options,
    env: {
      GDS_CONFIG_DIR: options.configDir ?? freshConfigDir(),
      GDS_SECRET_STORAGE: 'file',
      SERVICE_API_URL: server.url,
      ...(options.owner === false ? {} : { SERVICE_TOKEN: ownerToken }),
      ...options.env,
    },
  });
  outputs.push(result.stdout, result.stderr);
  return result;
}

/** Every stdout line of a --json run, parsed (a line that is not JSON fails the test). */
function lines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

function only(result: CliResult): Record<string, unknown> {
  const all = lines(result.stdout);
  expect(all).toHaveLength(1);
  return all[0] ?? {};
}

async function state(tableId: string): Promise<string> {
  const [row] = await server.sql<{ state: string }>('SELECT state FROM gds.tables WHERE id = $1', [tableId]);
  return row?.state ?? 'missing';
}

async function storedGate(tableId: string) {
  return server.request('GET', `/api/tables/${tableId}/gate1`, { token: ownerToken });
}

/** A session profile (as `gds auth login` leaves it) holding a seeded user's session JWT. */
async function sessionProfile(role: 'STEWARD' | 'MEMBER'): Promise<string> {
  const configDir = freshConfigDir();
  const env = { ...process.env, GDS_CONFIG_DIR: configDir, GDS_SECRET_STORAGE: 'file' };
  await withProfileLock(
    'me',
    () =>
      saveProfile(
        'me',
        { kind: 'session', base: server.url },
        { accessToken: server.user(role).accessToken },
        { env },
      ),
    { env },
  );
  return configDir;
}

describe('a table from push to promotion', () => {
  it('push (gds api) registers the artifact QUARANTINED', async () => {
    const connector = server.ready.connectors.find((c) => c.environmentLabel === 'dev');
    await writeFile(
      file('push.json'),
      JSON.stringify({
        filename: 'products.yml',
        content: productsArtifact,
        mimeType: 'yaml',
        connectorId: connector?.id,
      }),
    );
    const pushed = await gds(['api', '-X', 'POST', '/api/artifacts', '--input', file('push.json')]);
    expect(pushed.code, pushed.stderr).toBe(0);
    table = String(only(pushed).tableId);
    expect(await state(table)).toBe('QUARANTINED');
  });

  it('gate apply refuses an invalid file locally: exit 2, the diagnostics, nothing sent or stored', async () => {
    const human = await gds(['gate', 'apply', table, '-f', file('invalid.yml')]);
    expect(human.code).toBe(2);
    expect(human.stdout).toBe('');
    expect(human.stderr).toContain('nothing was sent');
    expect(human.stderr).toContain(`${file('invalid.yml')}:3:`);
    // No request at all: an unreachable service cannot be the reason, and nothing is stored either.
    const offline = await gds(['gate', 'apply', table, '-f', file('invalid.yml'), '--json'], {
      env: { SERVICE_API_URL: 'http://127.0.0.1:9' },
    });
    expect(offline.code).toBe(2);
    expect(lines(offline.stderr)[0]).toMatchObject({ error: { code: 'invalid_gate1' } });
    expect((await storedGate(table)).status).toBe(404);
  });

  it('gate diff before any gate1.yml: the file against an empty one, exit 1, saying so on stderr; gate get exit 5', async () => {
    const diff = await gds(['gate', 'diff', table, '-f', file('bad.yml')]);
    expect(diff.code, diff.stderr).toBe(1);
    expect(diff.stdout).toContain('+customPredicates:');
    expect(diff.stderr).toContain(`Table ${table} has no gate1.yml yet`);
    const json = await gds(['gate', 'diff', table, '-f', file('bad.yml'), '--json']);
    expect(json.code).toBe(1);
    expect(only(json)).toMatchObject({ identical: false });
    expect(lines(json.stderr)).toEqual([
      { warning: { message: expect.stringContaining(`Table ${table} has no gate1.yml yet`) as string } },
    ]);
    expect((await gds(['gate', 'get', table])).code).toBe(5);
  });

  it('gate diff --from/--to of a table without any gate1.yml: exit 5 saying it has none, not "v1 to v0"', async () => {
    const diff = await gds(['gate', 'diff', table, '--from', 'v1', '--to', 'v2']);
    expect(diff.code, diff.stderr).toBe(5);
    expect(diff.stdout).toBe('');
    expect(diff.stderr).toContain(`Table ${table} has no gate1.yml version 1; it has none yet.`);
    expect(diff.stderr).not.toContain('v0');
    const json = await gds(['gate', 'diff', table, '--from', 'v1', '--to', 'v2', '--json']);
    expect(json.code).toBe(5);
    expect(lines(json.stderr)).toEqual([
      {
        error: expect.objectContaining({
          code: 'gate1_version_not_found',
          message: `Table ${table} has no gate1.yml version 1; it has none yet.`,
        }) as unknown,
      },
    ]);
  });

  it('gate apply stores a valid file; gate get prints it byte for byte or writes it (never over a file without --force)', async () => {
    const applied = await gds(['gate', 'apply', table, '-f', '-', '--json'], { input: badGate });
    expect(applied.code, applied.stderr).toBe(0);
    expect(only(applied)).toMatchObject({ tableId: table, version: 1 });
    expect((await storedGate(table)).body).toMatchObject({ version: 1, content: badGate });

    const got = await gds(['gate', 'get', table]);
    expect(got.code).toBe(0);
    expect(got.stdout).toBe(badGate);

    const out = file('got.yml');
    const wrote = await gds(['gate', 'get', table, '-o', out]);
    expect(wrote).toMatchObject({ code: 0, stdout: '' });
    expect(wrote.stderr).toBe(`✓ Wrote gate1.yml v1 of ${table} to ${out}.\n`);
    expect(await readFile(out, 'utf8')).toBe(badGate);
    expect((await stat(out)).mode & 0o777).toBe(0o644);
    await writeFile(out, 'mine\n');
    const refused = await gds(['gate', 'get', table, '-o', out]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('already exists');
    expect(await readFile(out, 'utf8')).toBe('mine\n');
    expect((await gds(['gate', 'get', table, '-o', out, '--force'])).code).toBe(0);
    expect(await readFile(out, 'utf8')).toBe(badGate);
  });

  it('gate get -o into a folder that does not exist: exit 2 naming the path given and the missing folder, nothing written', async () => {
    const out = join(dir, 'missing', 'got.yml');
    const before = await readdir(dir);
    const refused = await gds(['gate', 'get', table, '-o', out]);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain(
      `Cannot write ${out}: the folder ${join(dir, 'missing')} does not exist`,
    );
    expect(refused.stderr).not.toContain('.tmp');
    const json = await gds(['gate', 'get', table, '-o', out, '--json']);
    expect(json.code).toBe(2);
    expect(lines(json.stderr)).toEqual([
      {
        error: expect.objectContaining({
          code: 'output_unwritable',
          message: `Cannot write ${out}: the folder ${join(dir, 'missing')} does not exist`,
        }) as unknown,
      },
    ]);
    expect(await readdir(dir)).toEqual(before);
  });

  it('gate diff: exit 0 against the identical server version, 1 with a diff against another file', async () => {
    const same = await gds(['gate', 'diff', table, '-f', file('bad.yml')]);
    expect(same.code).toBe(0);
    expect(same.stdout).toBe('');
    const different = await gds(['gate', 'diff', table, '-f', file('good.yml')]);
    expect(different.code).toBe(1);
    expect(different.stdout).toContain(`--- ${table}@v1`);
    expect(different.stdout).toContain('+    sql: price > 0');
  });

  it('gate run fails for real on the seeded rows (a price under 5): the proof, then exit 1', async () => {
    const human = await gds(['gate', 'run', table]);
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/price_at_least_5.*FAIL/);
    expect(human.stdout).toContain('FAILED (price_at_least_5)');
    const json = await gds(['gate', 'run', table, '--json']);
    expect(json.code).toBe(1);
    expect(only(json)).toMatchObject({ passed: false, failedPredicates: ['price_at_least_5'], id: null });
    const sampled = await gds(['gate', 'run', table, '--sample', 'head:1', '--json']);
    expect(only(sampled)).toMatchObject({ sample: { spec: 'head:1' }, rowsChecked: 1 });
    expect(await state(table)).toBe('QUARANTINED');
  });

  it('gate apply of the fixed file, then diff of the two server versions (exit 1)', async () => {
    expect((await gds(['gate', 'apply', table, '-f', file('good.yml')])).code).toBe(0);
    const diff = await gds(['gate', 'diff', table, '--from', 'v1', '--to', 'v2', '--json']);
    expect(diff.code).toBe(1);
    expect(only(diff)).toMatchObject({ identical: false });
    const beyond = await gds(['gate', 'diff', table, '--from', 'v1', '--to', 'v9']);
    expect(beyond.code, beyond.stderr).toBe(5);
    expect(beyond.stderr).toContain(`Table ${table} has no gate1.yml version 9; it has 2 (v1 to v2).`);
    expect((await gds(['gate', 'run', table])).code).toBe(0);
  });

  it('Gate 3 without --baseline is refused locally; a Gate 2 job is queued, followed and cancelled', async () => {
    const gate3 = await gds(['gate', 'run', table, '--gate', '3'], {
      env: { SERVICE_API_URL: 'http://127.0.0.1:9' },
    });
    expect(gate3.code).toBe(2);
    expect(gate3.stderr).toContain('--baseline <reportId> is required for Gate 3');

    const queued = await gds(['gate', 'run', table, '--gate', '2']);
    expect(queued.code, queued.stderr).toBe(0);
    const jobId = queued.stdout.trim();
    expect(jobId).toMatch(/^job_/);
    const status = await gds(['gate', 'status', jobId, '--gate', '2', '--json']);
    expect(only(status)).toMatchObject({
      id: jobId,
      status: 'QUEUED',
      gate: 2,
      createdBy: expect.stringMatching(/^usr_/),
      createdByEmail: expect.stringMatching(/@example\.com$/),
    });
    expect((await gds(['gate', 'status', jobId, '--gate', '2'])).stdout).toMatch(
      /Created .* by \S+@example\.com/,
    );
    expect((await gds(['gate', 'status', jobId, '--gate', '3'])).code).toBe(7);
    expect((await gds(['gate', 'result', jobId])).code).toBe(6);
    const cancelled = await gds(['gate', 'cancel', jobId, '--gate', '2', '--json']);
    expect(only(cancelled)).toMatchObject({ id: jobId, status: 'CANCELLED' });
    expect((await gds(['gate', 'result', jobId, '--json'])).code).toBe(0);
    // Nine gds processes, one after another: each starts node and oclif, seconds apiece on a loaded machine.
  });

  it('gate submit moves it to PENDING_REVIEW; reject sends it back; submit again', async () => {
    const submitted = await gds(['gate', 'submit', table, '--json']);
    expect(submitted.code, submitted.stderr).toBe(0);
    expect(only(submitted)).toMatchObject({ kind: 'submit', passed: true, state: 'PENDING_REVIEW' });
    expect(await state(table)).toBe('PENDING_REVIEW');

    expect((await gds(['reject', table])).code).toBe(2);
    const rejected = await gds(['reject', table, '--reason', 'price of p03 looks wrong']);
    expect(rejected.code).toBe(0);
    expect(rejected.stderr).toContain('✓ Rejected');
    expect(rejected.stderr).toContain('QUARANTINED');
    expect(await state(table)).toBe('QUARANTINED');

    expect((await gds(['gate', 'submit', table])).code).toBe(0);
    expect(await state(table)).toBe('PENDING_REVIEW');
  });

  it('certify refuses a static token before any request (exit 3, pointing at gds auth login)', async () => {
    for (const options of [{}, { env: { SERVICE_TOKEN: undefined }, owner: false }] as GdsOptions[]) {
      const configDir = freshConfigDir();
      if (options.owner === false) {
        const set = await gds(['auth', 'set', '--token', ownerToken, '--base', server.url], {
          configDir,
          owner: false,
        });
        expect(set.code).toBe(0);
      }
      const refused = await gds(['certify', table, '--json'], { ...options, configDir });
      expect(refused.code).toBe(3);
      expect(refused.stdout).toBe('');
      expect(lines(refused.stderr)[0]).toMatchObject({ error: { code: 'interactive_auth_required' } });
      const human = await gds(['certify', table], { ...options, configDir });
      expect(human.stderr).toContain('gds auth login');
    }
    expect(await state(table)).toBe('PENDING_REVIEW');
  });

  it('certify with a session profile certifies, the note and the evidence hash in the audit log', async () => {
    const configDir = await sessionProfile('STEWARD');
    const evidence = file('review.txt');
    await writeFile(evidence, 'reviewed with finance\n');
    const certified = await gds(
      ['certify', table, '--note', 'reviewed', '--evidence-file', evidence, '--json'],
      { configDir, owner: false },
    );
    expect(certified.code, certified.stderr).toBe(0);
    expect(only(certified)).toMatchObject({ status: 'CERTIFIED' });
    expect(await state(table)).toBe('CERTIFIED');
    const [audit] = await server.sql<{ details: unknown }>(
      `SELECT details FROM gds.audit_log WHERE table_id = $1 AND action = 'TABLE_CERTIFIED'`,
      [table],
    );
    expect(JSON.stringify(audit?.details)).toContain('reviewed');
  });

  it('versions list shows v1; restore cuts a new version and files a recertification request', async () => {
    const listed = await gds(['versions', 'list', table, '--json']);
    expect(listed.code).toBe(0);
    expect(lines(listed.stdout)).toMatchObject([{ version: 1, kind: 'CERTIFICATION' }]);
    const restore = (reason: string, ...more: string[]) =>
      gds(['versions', 'restore', table, '--to', '1', '--reason', reason, ...more]);
    const restored = await restore('roll back', '--json');
    expect(restored.code, restored.stderr).toBe(0);
    expect(only(restored)).toMatchObject({ version: { version: 2, kind: 'RESTORE', restoredFrom: 1 } });
    const wrongEnv = await restore('x', '--env', 'production');
    expect(wrongEnv.code).toBe(7);
    const human = await gds(['versions', 'list', table]);
    expect(human.stdout).toContain('RESTORE of v1');
    // People by e-mail in human output; JSON keeps the id and adds the e-mail.
    expect(human.stdout).toMatch(/@example\.com/);
    expect(human.stdout).not.toContain('usr_');
    const again = lines((await gds(['versions', 'list', table, '--json'])).stdout);
    expect(again[0]).toMatchObject({
      certifiedBy: expect.stringMatching(/^usr_/),
      certifiedByEmail: expect.stringMatching(/@example\.com$/),
    });
    // status names the restore as one, with the restorer by e-mail, not as a new certification.
    const status = only(await gds(['status', table, '--json'])) as {
      certification: { certifiedBy: string; certifiedByEmail: string; kind: string; restoredFrom: number };
    };
    expect(status.certification).toMatchObject({ kind: 'RESTORE', restoredFrom: 1 });
    expect(status.certification.certifiedBy).toMatch(/^usr_/);
    expect(status.certification.certifiedByEmail).toMatch(/@example\.com$/);
    const shown = await gds(['status', table]);
    expect(shown.stdout).toContain(`v2 restored from v1 by ${status.certification.certifiedByEmail} at `);
    expect(shown.stdout).toContain('(recertification requested)');
    expect(shown.stdout).not.toContain('usr_');
    const humanRestore = await restore('roll back again');
    expect(humanRestore).toMatchObject({ code: 0, stdout: '' });
    expect(humanRestore.stderr).toMatch(
      new RegExp(
        `^✓ Restored v1 of ${table} as v3; state \\w+\\.\\nRecertification request \\w+ filed\\.\\n$`,
      ),
    );
  });

  it('config set, list and history (a bad value is exit 7 and changes nothing)', async () => {
    const set = await gds(['config', 'set', 'gate3_required', 'true', '--json']);
    expect(set.code, set.stderr).toBe(0);
    expect(only(set)).toMatchObject({ key: 'gate3_required', value: 'true' });
    expect((await gds(['config', 'set', 'gate3_required', 'maybe'])).code).toBe(7);
    const listed = await gds(['config', 'list', '--json']);
    expect(lines(listed.stdout)).toContainEqual(
      expect.objectContaining({ key: 'gate3_required', value: 'true' }),
    );
    const history = await gds(['config', 'history', 'gate3_required', '--json']);
    expect(lines(history.stdout)).toMatchObject([
      {
        oldValue: 'false',
        newValue: 'true',
        changedBy: expect.stringMatching(/^usr_/),
        changedByEmail: 'owner@example.com',
      },
    ]);
    const byName = await gds(['config', 'history', 'gate3_required']);
    expect(byName.stdout).toContain('owner@example.com');
    expect(byName.stdout).not.toContain('usr_');
    const audit = await gds([
      'audit',
      'list',
      '--event-type',
      'WORKSPACE_CONFIG_CHANGED',
      '-L',
      '1',
      '--json',
    ]);
    expect(lines(audit.stdout)[0]).toMatchObject({
      userId: expect.stringMatching(/^usr_/),
      userEmail: 'owner@example.com',
    });
    const human = await gds(['config', 'set', 'gate3_required', 'false']);
    expect(human).toMatchObject({ code: 0, stdout: '', stderr: '✓ Set gate3_required to false.\n' });
  });

  it('contract set-intent sets what is given and carries the rest forward; bad values are exit 2', async () => {
    const first = await gds([
      'contract',
      'set-intent',
      table,
      '--intent',
      'metric',
      '--allowed-consumers',
      'HUMAN,AI',
      '--grain-type',
      'entity',
      '--grain-key',
      'id',
      '--json',
    ]);
    expect(first.code, first.stderr).toBe(0);
    expect(only(first)).toMatchObject({
      intent: 'METRIC',
      allowedConsumers: ['HUMAN', 'AI'],
      grainKeyColumns: ['id'],
    });
    const second = await gds(['contract', 'set-intent', table, '--meaning', 'sellable products', '--json']);
    expect(only(second)).toMatchObject({
      intent: 'METRIC',
      meaning: 'sellable products',
      grainType: 'entity',
    });
    const bad = await gds(['contract', 'set-intent', table, '--intent', 'VIBES']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('METRIC, DECISION, OPERATIONAL, EXPLORATORY');
    expect((await gds(['contract', 'set-intent', table, '--grain-key', 'id'])).code).toBe(2);
  });

  it('env promote --bundle-out writes the bundle; a tampered one is refused; the intact one lands in staging', async () => {
    // The staging warehouse holds customers and orders, not products: the seeded customers table travels.
    const customers = server.table('customers').id;
    const stagingTables = async () =>
      (
        await server.sql<{ n: number }>(
          `SELECT count(*)::int AS n FROM gds.tables WHERE environment_label = 'staging' AND active`,
        )
      )[0]?.n;
    const before = await stagingTables();
    const bundle = file('customers.bundle.json');
    const out = await gds(['env', 'promote', customers, '--to', 'staging', '--bundle-out', bundle, '--json']);
    expect(out.code, out.stderr).toBe(0);
    expect((await stat(bundle)).mode & 0o777).toBe(0o600);
    const sealed = JSON.parse(await readFile(bundle, 'utf8')) as {
      sha256: string;
      artifact: { content: string };
    };
    expect(only(out)).toMatchObject({ sha256: sealed.sha256 });
    expect((await gds(['env', 'promote', customers, '--to', 'staging', '--bundle-out', bundle])).code).toBe(
      2,
    );
    const humanBundle = file('customers.human.bundle.json');
    const wrote = await gds(['env', 'promote', 'customers', '--to', 'staging', '--bundle-out', humanBundle]);
    expect(wrote).toMatchObject({ code: 0, stdout: '' });
    expect(wrote.stderr).toMatch(
      new RegExp(`^✓ Wrote the bundle of customers to ${humanBundle} \\(sha256 [0-9a-f]{64}\\)\\.\\n`),
    );
    expect(wrote.stderr).toContain(
      `Register it on staging: gds env promote customers --to staging --bundle-in ${humanBundle}`,
    );

    const tampered = file('tampered.bundle.json');
    sealed.artifact.content = sealed.artifact.content.replace('customers', 'customers_evil');
    await writeFile(tampered, JSON.stringify(sealed));
    const refused = await gds(['env', 'promote', customers, '--to', 'staging', '--bundle-in', tampered]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('does not match its sha256');
    expect(await stagingTables()).toBe(before);

    const landed = await gds([
      'env',
      'promote',
      customers,
      '--to',
      'staging',
      '--bundle-in',
      bundle,
      '--json',
    ]);
    expect(landed.code, landed.stderr).toBe(0);
    const registered = only(landed);
    expect(registered).toMatchObject({ environmentLabel: 'staging' });
    const [row] = await server.sql<{ environment_label: string; state: string }>(
      'SELECT environment_label, state FROM gds.tables WHERE id = $1',
      [registered.tableId],
    );
    expect(row).toEqual({ environment_label: 'staging', state: 'QUARANTINED' });
    expect(await stagingTables()).toBe((before ?? 0) + 1);

    // The line gds prints after --bundle-out names the table; --replace takes the staging table's name
    // (customers_staging), resolved in the target environment as the other promote paths do. The bundle
    // is changed (and sealed again), so landing it needs --replace: the same table, no new one.
    const changed = JSON.parse(await readFile(bundle, 'utf8')) as Record<string, unknown> & {
      artifact: { content: string };
    };
    const definition = JSON.parse(changed.artifact.content) as { columns: { required?: boolean }[] };
    const last = definition.columns[definition.columns.length - 1];
    if (last !== undefined) last.required = !(last.required ?? false);
    changed.artifact.content = `${JSON.stringify(definition, null, 2)}\n`;
    delete changed.sha256;
    const second = file('customers.v2.bundle.json');
    await writeFile(second, JSON.stringify({ ...changed, sha256: bundleDigest(changed) }));
    const again = await gds([
      'env',
      'promote',
      'Customers',
      '--to',
      'staging',
      '--bundle-in',
      second,
      '--replace',
      'customers_staging',
      '--json',
    ]);
    expect(again.code, again.stderr).toBe(0);
    expect(only(again)).toMatchObject({ tableId: registered.tableId, environmentLabel: 'staging' });
    expect(await stagingTables()).toBe((before ?? 0) + 1);
  });

  it('env promote --dest-profile registers with the other profile (the ADMIN), read with the current one', async () => {
    const orders = server.table('orders').id;
    const configDir = freshConfigDir();
    const admin = server.user('ADMIN');
    expect(
      (
        await gds(['auth', 'set', '--token', admin.cliToken, '--base', server.url, '--profile', 'prod'], {
          configDir,
          owner: false,
        })
      ).code,
    ).toBe(0);
    const relayed = await gds(
      ['env', 'promote', orders, '--to', 'production', '--dest-profile', 'prod', '--json'],
      {
        configDir,
      },
    );
    expect(relayed.code, relayed.stderr).toBe(0);
    const promoted = only(relayed);
    expect(promoted).toMatchObject({ environmentLabel: 'production' });
    const [audit] = await server.sql<{ user_id: string }>(
      `SELECT user_id FROM gds.audit_log WHERE table_id = $1 AND action = 'BUNDLE_IMPORTED'`,
      [promoted.tableId],
    );
    expect(audit?.user_id).toBe(admin.userId);
  });

  it('env promote confirms on stderr with ✓ naming the table as given; what it made is on stdout', async () => {
    const promoted = await gds(['env', 'promote', 'orders', '--to', 'staging']);
    expect(promoted.code, promoted.stderr).toBe(0);
    expect(promoted.stderr).toMatch(/^✓ Promoted orders to staging: table tbl_\w+ on connector \S+\.\n/);
    expect(promoted.stdout).toMatch(/^Governance id: \S+\nTracking: {6}http\S+\n/);
    expect(promoted.stdout).not.toContain('Promoted');
  });
});

describe('gate suggest | gate apply', () => {
  it('pipes byte-clean through a real shell: the stored gate1.yml is the suggestion', async () => {
    const orders = server.table('orders').id;
    const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
    const gdsLine = (args: string[]) => cliCommand(args).flat().map(quote).join(' ');
    const line = `${gdsLine(['gate', 'suggest', orders])} 2>${quote(file('justifications.txt'))} | ${gdsLine(['gate', 'apply', orders, '-f', '-'])}`;
    const child = spawn('sh', ['-c', line], {
      cwd: repoRoot,
      env: cliEnv({
        GDS_CONFIG_DIR: freshConfigDir(),
        SERVICE_API_URL: server.url,
        SERVICE_TOKEN: server.user('OWNER').cliToken,
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const piped = await collect(child);
    outputs.push(piped.stdout, piped.stderr);
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stderr).toContain('as gate1.yml v1');
    const suggested = await server.request('POST', `/api/tables/${orders}/gate1/suggestions`, {
      token: ownerToken,
    });
    const stored = await storedGate(orders);
    expect(stored.body.content).toBe(suggested.body.yaml);
    const justifications = await readFile(file('justifications.txt'), 'utf8');
    expect(justifications).toMatch(/^# /);
    expect(stored.body.content).not.toContain('# ');
  });
});

describe('certify refusals from the service', () => {
  it('a MEMBER session is forbidden (exit 4); a stale proof is refused with its reason (exit 7)', async () => {
    const orders = server.table('orders').id;
    expect((await gds(['gate', 'submit', orders])).code).toBe(0);
    expect(await state(orders)).toBe('PENDING_REVIEW');

    const member = await gds(['certify', orders], {
      configDir: await sessionProfile('MEMBER'),
      owner: false,
    });
    expect(member.code).toBe(4);

    // A new gate1.yml version after the submission makes its proof stale.
    const ordersGate =
      'customPredicates:\n  - name: amount_known\n    sql: amount IS NOT NULL\n    severity: WARN\n';
    expect((await gds(['gate', 'apply', orders, '-f', '-'], { input: ordersGate })).code).toBe(0);
    const stale = await gds(['certify', orders, '--json'], {
      configDir: await sessionProfile('STEWARD'),
      owner: false,
    });
    expect(stale.code).toBe(7);
    expect(stale.stdout).toBe('');
    const error = lines(stale.stderr)[0] as { error: { message: string; details: { status: number } } };
    expect(error.error.details.status).toBe(422);
    expect(error.error.message).toMatch(/stale|fresh/i);
    expect(await state(orders)).toBe('PENDING_REVIEW');
  });

  it('checks failing on the data as it is now (rows written outside the service): exit 7 naming them', async () => {
    await writeFile(
      file('categorydim.yml'),
      'table: categorydim\nsource: analytics_dev.categorydim\ncolumns:\n  - category_id\n  - category_name\n',
    );
    const pushed = await gds(['push', file('categorydim.yml'), '--json']);
    expect(pushed.code, pushed.stderr).toBe(0);
    const tableId = String(only(pushed).governanceId);
    expect((await gds(['gate', 'submit', tableId])).code).toBe(0);
    await server.sql(
      'INSERT INTO analytics_dev.categorydim (category_id, category_name) VALUES (4, NULL), (5, NULL), (6, NULL)',
    );
    const steward = { configDir: await sessionProfile('STEWARD'), owner: false };
    const json = await gds(['certify', tableId, '--json'], steward);
    expect(json.code).toBe(7);
    expect(json.stdout).toBe('');
    const error = lines(json.stderr)[0] as { error: { code: string; message: string } };
    expect(error.error.code).toBe('checks_failed');
    expect(error.error.message).toContain('null_rate.category_name');
    const human = await gds(['certify', tableId], steward);
    expect(human.code).toBe(7);
    expect(human.stderr).toContain('Certification blocked: Gate 1 checks fail on the data as it is now');
    expect(human.stderr).toContain('null_rate.category_name');
    expect(await state(tableId)).toBe('PENDING_REVIEW');
  });

  it('a contract changed after the submission (set-intent): exit 7 saying so and to submit again', async () => {
    const orders = server.table('orders').id;
    expect((await gds(['gate', 'submit', orders])).code).toBe(0);
    const intent = await gds([
      'contract',
      'set-intent',
      orders,
      '--grain-type',
      'ONE_PER_ENTITY',
      '--grain-key',
      'order_id',
    ]);
    expect(intent.code, intent.stderr).toBe(0);
    const steward = { configDir: await sessionProfile('STEWARD'), owner: false };
    const json = await gds(['certify', orders, '--json'], steward);
    expect(json.code).toBe(7);
    expect(json.stdout).toBe('');
    const error = lines(json.stderr)[0] as { error: { code: string; details: { status: number } } };
    expect(error.error).toMatchObject({
      code: 'stale_proof',
      details: { status: 422, server: { changedSince: [{ what: 'contract' }] } },
    });
    const human = await gds(['certify', orders], steward);
    expect(human.code).toBe(7);
    expect(human.stdout).toBe('');
    expect(human.stderr).toContain('the semantic contract changed since submission');
    expect(human.stderr).toContain('run gate submit again');
    expect(await state(orders)).toBe('PENDING_REVIEW');
  });
});
