// The JSON FIELDS a command's help lists, and that `--json a,b` is checked against
// (src/cli/json-fields.ts), are the keys of the records it prints. Every command of the tree is in one of
// the three lists of json-fields.ts (a new command in none of them fails here); each command with a fixed
// list runs against the reference server under --json, every record it prints has only listed keys (and
// every line of its stderr is JSON too), and between its runs every listed key is printed. Commands whose records are a table's rows print the
// table's columns. gds runs in the test process (runInProcess), but for the device login, whose code is read
// from its stderr while it waits.
import { cp, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/commands/index.js';
import { JSON_FIELDS, VARYING_JSON_FIELDS, NO_JSON_RECORDS } from '../../src/cli/json-fields.js';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { cliCommand, cliEnv, collect, ensureBuilt } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { sharedFixturesDir } from '../helpers/fixtures.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import { noSharedFixtures } from '../helpers/skip.js';
import { loadDbtProject } from '../../src/services/dbt-project.js';
import { spawn } from 'node:child_process';
import { PRICE_POSITIVE_GATE, PRODUCTS_DEFINITION } from './products.js';

let server: TestServer;
let dir: string;
/** What earlier steps learnt (ids, tokens) for later ones. */
const seen: Record<string, string> = {};
/** The keys printed by each command, over all its runs. */
const printed = new Map<string, Set<string>>();

beforeAll(async () => {
  [server] = await Promise.all([
    startTestServer({ jobs: 'manual', deviceFlow: { intervalSeconds: 1 } }),
    ensureBuilt(),
  ]);
  dir = await mkdtemp(join(tmpdir(), 'gds-json-fields-'));
  await writeFile(join(dir, 'products.yml'), PRODUCTS_DEFINITION);
  await writeFile(join(dir, 'price.yml'), PRICE_POSITIVE_GATE);
  await writeFile(join(dir, 'broken.yml'), 'customPredicates:\n  - name: x\n    sql: price >\n');
  await writeFile(join(dir, 'evidence.txt'), 'reviewed\n');
  await writeFile(join(dir, 'aliases.yml'), 'ls: list\nhi: "!echo hi"\n');
  await writeFile(
    join(dir, 'contacts.ndjson'),
    '{"id":"j1","email":"j1@example.com","full_name":"J One"}\n{"id":"j2","email":42}\n',
  );
  const staging = server.ready.connectors.find((c) => c.environmentLabel === 'staging')?.id ?? '';
  await writeFile(
    join(dir, 'def.yml'),
    'table: customers_ci\nsource: analytics_staging.customers\ncolumns:\n  - { name: id, type: text }\n',
  );
  await writeFile(
    join(dir, 'ltv.yml'),
    'customPredicates:\n  - name: ltv\n    sql: lifetime_value >= 0\n    severity: SOFT_FAIL\n',
  );
  seen.staging = staging;
  if (noSharedFixtures === undefined) {
    // The jaffle-shop project, and its stg_orders relation in the dev warehouse, for plan and apply.
    await cp(JAFFLE, join(dir, 'jaffle'), { recursive: true });
    const declared = await loadDbtProject(join(dir, 'jaffle'), {});
    const orders = declared.declarations.find((d) => d.name === 'stg_orders');
    const columns = (orders?.columns ?? []).map((c) => `"${c.name.toLowerCase()}" text`).join(', ');
    await server.sql(`CREATE TABLE analytics_dev.stg_orders (${columns})`);
  }
  const management = await server.issueToken('OWNER', {
    name: 'ci',
    env: '*',
    scopes: ['workspace:write:definition', 'workspace:write:recertify'],
  } as never);
  seen.management = (management as unknown as { tokens: { accessToken: string } }).tokens.accessToken;
});

afterAll(async () => {
  await server?.close();
});

interface Step {
  /** The command's id (`gate:get`). */
  id: string;
  args: () => string[];
  env?: () => Record<string, string | undefined>;
  input?: () => string;
  /** The exit code expected (0 unless said). */
  code?: number;
  /** Runs after the step, with the records printed. */
  after?: (records: Array<Record<string, unknown>>) => Promise<void> | void;
  /** Needs the shared fixtures (the dbt project). */
  fixtures?: boolean;
  /** Run meanwhile: the job worker, for a command that waits on a job. */
  during?: () => Promise<void>;
}

const sessionDir = () => join(dir, 'session');
const asSession = () => ({
  GDS_CONFIG_DIR: sessionDir(),
  SERVICE_TOKEN: undefined,
  SERVICE_API_URL: undefined,
});
const asData = () => ({ SERVICE_TOKEN: seen.data });
const asManagement = () => ({ SERVICE_TOKEN: seen.management });
const file = (name: string) => join(dir, name);
const JAFFLE = join(sharedFixturesDir, 'real/dbt-projects/manoty_jaffle_duckdb');
const project = () => [
  '--dbt',
  join(dir, 'jaffle'),
  '--connector',
  server.ready.connectors.find((c) => c.environmentLabel === 'dev')?.id ?? '',
  '--schema',
  'analytics_dev',
  '--select',
  'stg_orders',
];

/** In the order they run: each step may use what an earlier one printed. */
const steps: Step[] = [
  { id: 'list', args: () => ['list'] },
  { id: 'quarantine:list', args: () => ['quarantine', 'list'] },
  { id: 'status', args: () => ['status', 'customers'] },
  { id: 'status', args: () => ['status', 'customers', '--web'] },
  { id: 'connectors:list', args: () => ['connectors', 'list'] },
  { id: 'members:list', args: () => ['members', 'list'] },
  { id: 'whoami', args: () => ['whoami'] },
  { id: 'config:set', args: () => ['config', 'set', 'gate3_required', 'true'] },
  { id: 'config:list', args: () => ['config', 'list'] },
  { id: 'config:history', args: () => ['config', 'history', 'gate3_required'] },
  { id: 'config:set', args: () => ['config', 'set', 'gate3_required', 'false'] },
  { id: 'gate:submit', args: () => ['gate', 'submit', 'customers', '--if-not-certified'] },
  // A table of one's own: pushed, checked, its gate applied, submitted, rejected, deleted.
  { id: 'push', args: () => ['push', file('products.yml'), '--dry-run'] },
  {
    id: 'push',
    args: () => ['push', file('products.yml')],
    after: ([r]) => {
      seen.products = String(r?.tableId);
      seen.baseline = String((r?.job as { id?: string } | undefined)?.id);
    },
  },
  { id: 'gate:cancel', args: () => ['gate', 'cancel', seen.baseline ?? ''] },
  {
    id: 'push',
    args: () => ['push', file('products.yml'), '--replace', seen.products ?? '', '--wait'],
    during: runJobs,
    after: ([r]) => {
      seen.products = String(r?.tableId);
    },
  },
  { id: 'gate:validate', args: () => ['gate', 'validate', '-f', file('price.yml')] },
  { id: 'gate:validate', args: () => ['gate', 'validate', '-f', file('broken.yml')], code: 2 },
  { id: 'gate:apply', args: () => ['gate', 'apply', seen.products ?? '', '-f', file('price.yml')] },
  { id: 'gate:apply', args: () => ['gate', 'apply', seen.products ?? '', '-f', file('price.yml')] },
  { id: 'gate:diff', args: () => ['gate', 'diff', seen.products ?? '', '-f', file('price.yml')] },
  { id: 'gate:get', args: () => ['gate', 'get', seen.products ?? ''] },
  { id: 'gate:get', args: () => ['gate', 'get', seen.products ?? '', '-o', file('got.yml')] },
  { id: 'gate:suggest', args: () => ['gate', 'suggest', 'customers'] },
  { id: 'gate:run', args: () => ['gate', 'run', seen.products ?? ''] },
  {
    id: 'gate:run',
    args: () => ['gate', 'run', seen.products ?? '', '--gate', '2'],
    after: ([r]) => {
      seen.job = String(r?.id);
    },
  },
  { id: 'gate:status', args: () => ['gate', 'status', seen.job ?? '', '--gate', '2'], during: runJobs },
  { id: 'gate:result', args: () => ['gate', 'result', seen.job ?? ''] },
  { id: 'gate:jobs', args: () => ['gate', 'jobs', seen.products ?? ''] },
  { id: 'gate:submit', args: () => ['gate', 'submit', seen.products ?? '', '--idempotency-key', 'fields-1'] },
  // The same key again: the first answer, replayed.
  { id: 'gate:submit', args: () => ['gate', 'submit', seen.products ?? '', '--idempotency-key', 'fields-1'] },
  { id: 'review', args: () => ['review'] },
  { id: 'reject', args: () => ['reject', seen.products ?? '', '--reason', 'prices unchecked'] },
  { id: 'env:promote', args: () => ['env', 'promote', 'orders', '--to', 'staging', '--dry-run'] },
  {
    id: 'env:promote',
    args: () => ['env', 'promote', 'orders', '--to', 'staging', '--bundle-out', file('bundle.json')],
  },
  { id: 'env:promote', args: () => ['env', 'promote', 'orders', '--to', 'staging'] },
  { id: 'quarantine:open', args: () => ['quarantine', 'open', 'orders', '-o', file('orders.sql')] },
  {
    id: 'definitions:push',
    args: () => ['definitions', 'push', file('def.yml'), '--connector', seen.staging ?? ''],
    env: asManagement,
  },
  { id: 'delete', args: () => ['delete', seen.products ?? '', '--yes'] },
  // Certification with a signed-in steward.
  { id: 'auth:login', args: () => ['auth', 'login', '--base', server.url, '--no-browser'], env: asSession },
  { id: 'auth:status', args: () => ['auth', 'status'], env: asSession },
  { id: 'auth:token', args: () => ['auth', 'token'], env: asSession },
  { id: 'gate:apply', args: () => ['gate', 'apply', 'customers', '-f', file('ltv.yml')] },
  { id: 'contract:set-intent', args: () => ['contract', 'set-intent', 'customers', '--intent', 'METRIC'] },
  {
    id: 'contract:set-intent',
    args: () => ['contract', 'set-intent', 'customers', '--meaning', 'People who bought', '--dry-run'],
  },
  { id: 'recertification:list', args: () => ['recertification', 'list'] },
  { id: 'gate:submit', args: () => ['gate', 'submit', 'customers'] },
  {
    id: 'certify',
    args: () => ['certify', 'customers', '--evidence-file', file('evidence.txt')],
    env: asSession,
  },
  { id: 'versions:list', args: () => ['versions', 'list', 'customers'] },
  {
    id: 'versions:restore',
    args: () => ['versions', 'restore', 'customers', '--to', '1', '--reason', 'back to the reviewed one'],
  },
  {
    id: 'recertification:dismiss',
    args: () => ['recertification', 'dismiss', '--table', 'customers', '--reason', 'same rows'],
  },
  { id: 'recertify', args: () => ['recertify', '--tables', 'customers', '--env', 'dev'], env: asManagement },
  { id: 'audit:list', args: () => ['audit', 'list', '-L', '20'] },
  // Tokens, and a DATA-API token's records.
  {
    id: 'tokens:issue',
    args: () => ['tokens', 'issue', '--name', 'rows', '--env', 'dev', '--table', 'crm_contacts:read,write'],
    after: ([r]) => {
      const tokens = r?.tokens as { accessToken: string; refreshToken: string };
      seen.data = tokens.accessToken;
      seen.refresh = tokens.refreshToken;
      seen.integration = String(r?.id);
    },
  },
  { id: 'tokens:refresh', args: () => ['tokens', 'refresh'], input: () => seen.refresh ?? '' },
  {
    id: 'auth:token:create',
    args: () => ['auth', 'token', 'create', '--name', 'json-fields'],
    env: () => ({ SERVICE_TOKEN: server.user('OWNER').accessToken }),
  },
  { id: 'tokens:list', args: () => ['tokens', 'list'] },
  { id: 'tokens:list', args: () => ['tokens', 'list', '--cli'] },
  {
    id: 'records:list',
    args: () => ['records', 'list', 'crm_contacts', '-L', '2'],
    env: asData,
    after: ([r]) => {
      seen.record = String(r?.id);
    },
  },
  { id: 'records:get', args: () => ['records', 'get', 'crm_contacts', seen.record ?? ''], env: asData },
  {
    id: 'records:create',
    args: () => [
      'records',
      'create',
      'crm_contacts',
      '--data',
      '{"email":"new@example.com","full_name":"N"}',
    ],
    env: asData,
  },
  {
    id: 'records:update',
    args: () => ['records', 'update', 'crm_contacts', seen.record ?? '', '--data', '{"full_name":"Renamed"}'],
    env: asData,
  },
  { id: 'records:export', args: () => ['records', 'export', 'crm_contacts'], env: asData },
  {
    id: 'records:export',
    args: () => ['records', 'export', 'crm_contacts', '-o', file('export.ndjson')],
    env: asData,
  },
  {
    id: 'records:import',
    args: () => ['records', 'import', 'crm_contacts', '-f', file('contacts.ndjson'), '--ignore-ids'],
    env: asData,
    code: 7,
  },
  {
    id: 'records:delete',
    args: () => ['records', 'delete', 'crm_contacts', seen.record ?? '', '--yes'],
    env: asData,
  },
  { id: 'api', args: () => ['api', '/api/me'] },
  // A dbt project (the shared fixtures' jaffle shop), planned then applied.
  { id: 'plan', args: () => ['plan', ...project()], fixtures: true },
  { id: 'apply', args: () => ['apply', ...project(), '--yes'], fixtures: true },
  { id: 'tokens:revoke', args: () => ['tokens', 'revoke', seen.integration ?? '', '--yes'] },
  { id: 'tokens:revoke', args: () => ['tokens', 'revoke', 'json-fields', '--yes'] },
  // The credentials commands, on a config folder of their own.
  {
    id: 'auth:set',
    args: () => [
      'auth',
      'set',
      '--token',
      server.user('OWNER').cliToken,
      '--base',
      server.url,
      '--profile',
      'ci',
    ],
    env: () => ({ ...asSession(), GDS_PROFILE: undefined }),
  },
  { id: 'auth:switch', args: () => ['auth', 'switch', '--profile', 'ci'], env: asSession },
  { id: 'auth:revoke', args: () => ['auth', 'revoke', '--yes'], env: asSession },
  { id: 'auth:logout', args: () => ['auth', 'logout'], env: asSession },
  // gds's own settings (settings.json in the config folder).
  { id: 'settings:set', args: () => ['settings', 'set', 'pager', 'less -R'] },
  { id: 'settings:get', args: () => ['settings', 'get', 'pager'] },
  { id: 'settings:list', args: () => ['settings', 'list'] },
  { id: 'settings:unset', args: () => ['settings', 'unset', 'pager'] },
  // Command aliases (kept with the settings).
  { id: 'alias:set', args: () => ['alias', 'set', 'ls', 'list --state CERTIFIED'] },
  { id: 'alias:import', args: () => ['alias', 'import', file('aliases.yml'), '--clobber'] },
  { id: 'alias:list', args: () => ['alias', 'list'] },
  { id: 'alias:delete', args: () => ['alias', 'delete', 'ls'] },
];

/** Runs the jobs queued so far; called again and again (every 50 ms) until the command waiting on them ends. */
async function runJobs(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 50));
  await server.jobs.runPending();
}

async function run(step: Step): Promise<CliResult> {
  const env = {
    GDS_CONFIG_DIR: join(dir, 'config'),
    GDS_SECRET_STORAGE: 'file',
    SERVICE_API_URL: server.url,
    SERVICE_TOKEN: server.user('OWNER').cliToken,
    ...step.env?.(),
  };
  const args = [...step.args(), '--json'];
  if (step.id === 'auth:login') return approvedLogin(args, env);
  const running = runInProcess(args, { env, ...(step.input === undefined ? {} : { input: step.input() }) });
  if (step.during === undefined) return running;
  let done = false;
  void running.finally(() => {
    done = true;
  });
  while (!done) await step.during();
  return running;
}

/** `gds auth login --no-browser`, the steward approving the code on the verification page. */
async function approvedLogin(args: string[], env: Record<string, string | undefined>): Promise<CliResult> {
  const [command, argv] = cliCommand(args);
  const child = spawn(command, argv, { env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  const result = collect(child);
  let seenErr = '';
  const code = await new Promise<string>((resolve) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      seenErr += chunk.toString('utf8');
      const match = /([A-Z]{4}-[A-Z]{4})/.exec(seenErr);
      if (match?.[1]) resolve(match[1]);
    });
    void result.then(() => resolve(''));
  });
  const response = await fetch(`${server.origin}/device`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ user_code: code, email: 'steward@example.com', action: 'approve' }),
  });
  expect(response.status).toBe(200);
  return result;
}

function ndjson(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('JSON FIELDS are the keys of the records printed', () => {
  it('every command of the tree has a field list, prints a table’s rows, or prints no records', () => {
    const classified = [
      ...Object.keys(JSON_FIELDS),
      ...Object.keys(VARYING_JSON_FIELDS),
      ...Object.keys(NO_JSON_RECORDS),
    ];
    expect([...classified].sort()).toEqual(Object.keys(COMMANDS).sort());
    expect(new Set(classified).size).toBe(classified.length);
  });

  it('every command with a field list or of rows is run here', () => {
    const run = new Set(steps.map((s) => s.id));
    for (const id of [...Object.keys(JSON_FIELDS), ...Object.keys(VARYING_JSON_FIELDS)]) {
      expect(run.has(id), id).toBe(true);
    }
  });

  it.for(
    steps.map((step, index): [string, Step] => [`${index + 1}. gds ${step.id.replaceAll(':', ' ')}`, step]),
  )('%s', async ([, step], context) => {
    if (step.fixtures === true && noSharedFixtures !== undefined) return context.skip(noSharedFixtures);
    const r = await run(step);
    expect(r.code, r.stderr).toBe(step.code ?? 0);
    const records = ndjson(r.stdout);
    expect(records.length, r.stderr).toBeGreaterThan(0);
    // Every line of stderr is JSON too ({"warning":…}, the sign-in code's {"signIn":…}).
    for (const line of r.stderr.split('\n').filter((l) => l !== ''))
      expect(() => JSON.parse(line) as unknown, line).not.toThrow();
    const keys = printed.get(step.id) ?? new Set<string>();
    printed.set(step.id, keys);
    for (const record of records) {
      for (const key of Object.keys(record)) keys.add(key);
      const listed = JSON_FIELDS[step.id];
      if (listed !== undefined) expect(listed).toEqual(expect.arrayContaining(Object.keys(record)));
    }
    await step.after?.(records);
  });

  /** Fields these runs cannot make a command print, and why. */
  const notPrintedHere: Record<string, string[]> = {
    apply: ['reason', 'error', 'recertificationRequested'], // every action succeeds, on tables never certified
    // A refused or owned-elsewhere table's reason, and a table adopted or migrated: not in this project.
    // A table waiting for review with a stale proof: none is rebuilt here.
    plan: ['reason', 'adopt', 'migrate', 'staleSubmission'],
  };

  it('between its runs, each command printed every field of its list', () => {
    for (const id of new Set(steps.map((s) => s.id))) {
      const listed = JSON_FIELDS[id];
      if (listed === undefined) continue;
      const onFixtures = steps.every((s) => s.id !== id || s.fixtures === true);
      if (onFixtures && noSharedFixtures !== undefined) continue;
      const expected = listed.filter((field) => !(notPrintedHere[id] ?? []).includes(field));
      expect([...(printed.get(id) ?? [])].sort(), id).toEqual(expected.sort());
    }
  });

  it('--json a,b: a listed field this kind of record lacks is null; a field not listed is exit 2', async () => {
    const env = { SERVICE_API_URL: server.url, SERVICE_TOKEN: server.user('ADMIN').cliToken };
    const r = await runInProcess(['status', 'customers', '--json', 'name,url'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(ndjson(r.stdout)).toEqual([{ name: 'customers', url: null }]);
    const unknown = await runInProcess(['status', 'customers', '--json', 'name,link'], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toContain(`Available fields: ${JSON_FIELDS.status?.join(', ')}.`);
  });

  it('the commands of rows print the table’s columns: the keys of `records list`', () => {
    const columns = [...(printed.get('records:list') ?? [])].sort();
    expect(columns).toContain('id');
    expect(columns).toContain('email');
    for (const id of ['records:get', 'records:update'])
      expect([...(printed.get(id) ?? [])].sort(), id).toEqual(columns);
    // A new record holds the columns given (and its id).
    expect(columns).toEqual(expect.arrayContaining([...(printed.get('records:create') ?? [])]));
    expect(printed.get('records:create')).toContain('id');
  });
});
