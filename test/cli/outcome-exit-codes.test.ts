// Exit 1 as an answer: `plan --exit-code` (a table would change), `status --exit-status` (the certified view
// is missing or a recertification request is open), `gate run` and `gate submit` (a HARD_FAIL check failed),
// `push --wait` (the baseline job FAILED or was CANCELLED).
// A failure of such a command must not read as that answer, as other commands' failures exit 1 (a status gds
// has no code for, a config file it cannot use, a --jq filter failing on a record, a bug): it ends with 2,
// as gate diff's does (gate-diff-cli.test.ts). Without the flag, plan, status and push end
// such a failure with 1.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';

let dir: string;
let configDir: string;
let base: string;
/** What the stand-in service answers 200 with, by the end of the path; anything else is 410 Gone. */
const answers: Record<string, object> = {
  // A recertification request is open: --exit-status's answer is 1.
  '/api/tables/tbl_open/status': {
    tableId: 'tbl_open',
    state: 'CERTIFIED',
    activeJobs: [],
    openRecertificationRequests: 1,
  },
  '/api/tables/tbl_ok/status': {
    tableId: 'tbl_ok',
    state: 'CERTIFIED',
    activeJobs: [],
    openRecertificationRequests: 0,
  },
  // A HARD_FAIL check failed: gate run's and gate submit's answer is 1.
  '/api/tables/tbl_failed/gate-runs': failedProof('tbl_failed'),
  '/api/tables/tbl_failed/gate-submissions': failedProof('tbl_failed'),
};
/** A push whose baseline job FAILED (push --wait's answer is 1), answered only while `pushing`: elsewhere 410. */
let pushing = false;
const pushAnswers: Record<string, object> = {
  '/api/connectors': {
    connectors: [{ id: 'con_1', name: 'dev', type: 'postgres', status: 'ACTIVE', environmentLabel: 'dev' }],
  },
  '/api/artifacts': {
    governanceId: 'tbl_pushed',
    trackingUrl: 'http://127.0.0.1/t/tbl_pushed',
    job: { id: 'job_failed_1', type: 'gate-baseline-auto', status: 'QUEUED' },
  },
  '/api/gate-jobs/job_failed_1': {
    id: 'job_failed_1',
    tableId: 'tbl_pushed',
    type: 'gate-baseline-auto',
    gate: 1,
    status: 'FAILED',
    params: {},
    createdBy: 'usr_1',
    createdAt: '2026-12-07T00:00:00Z',
    startedAt: '2026-12-07T00:00:01Z',
    finishedAt: '2026-12-07T00:00:02Z',
    error: { message: 'the source is gone' },
  },
};
const standIn = createServer((req, res) => {
  const path = (req.url ?? '').replace(/^\/v1/, '').replace(/\?.*$/, '');
  const answer = answers[path] ?? (pushing ? pushAnswers[path] : undefined);
  if (answer === undefined) res.writeHead(410, { 'content-type': 'application/json' }).end('{}');
  else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
});

function failedProof(tableId: string): object {
  return {
    id: null,
    tableId,
    passed: false,
    failedPredicates: ['not_null_id'],
    results: [],
    rowsChecked: 3,
    sample: null,
  };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gds-outcome-exit-'));
  // A folder where config.json should be: gds cannot use it (config_not_regular_file, exit 1 elsewhere).
  configDir = join(dir, 'config-is-a-folder');
  await mkdir(join(configDir, 'config.json'), { recursive: true });
  await writeFile(
    join(dir, 'orders.yml'),
    'table: orders\nsource: analytics.orders\ncolumns:\n  - name: id\n',
  );
  await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(standIn.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  await new Promise((resolve) => standIn.close(resolve));
});

function errorLine(stderr: string): unknown {
  const lines = stderr.split('\n').filter((line) => line !== '');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] ?? '') as unknown;
}

/** gds with a config file it cannot use and no credentials in the environment. */
function withUnusableConfig(args: string[]) {
  return runInProcess([...args, '--json'], {
    cwd: dir,
    env: { GDS_CONFIG_DIR: configDir, SERVICE_TOKEN: undefined, SERVICE_API_URL: undefined },
  });
}

/** gds against the stand-in service: 410 Gone, a status gds has no exit code for (exit 1 elsewhere), but for
 *  the answers above. */
function againstStandIn(args: string[]) {
  return runInProcess([...args, '--json', '--base', base, '--token', 'cli_standInToken42'], {
    cwd: dir,
    env: { GDS_CONFIG_DIR: join(dir, 'no-config') },
  });
}

const answering: [string, string[]][] = [
  ['plan --exit-code', ['plan', '--dbt', '.', '--exit-code']],
  ['status --exit-status', ['status', 'tbl_42', '--exit-status']],
  ['gate run', ['gate', 'run', 'tbl_42']],
  ['gate submit', ['gate', 'submit', 'tbl_42']],
  // Exit 1: the baseline job FAILED or was CANCELLED (governance-commands.test.ts).
  ['push --wait', ['push', 'orders.yml', '--connector', 'con_1', '--wait']],
];

describe('a failure of a command whose exit 1 is an answer ends with 2', () => {
  for (const [name, args] of answering) {
    it(`${name}: a config file gds cannot use`, async () => {
      const r = await withUnusableConfig(args);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      expect(errorLine(r.stderr)).toMatchObject({ error: { code: 'config_not_regular_file' } });
    });
  }

  for (const [name, args] of answering.filter(([name]) => !name.startsWith('plan'))) {
    it(`${name}: a service answering 410`, async () => {
      const r = await againstStandIn(args);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      expect(JSON.stringify(errorLine(r.stderr))).toMatch(/410 Gone/);
    });
  }
});

// The answer is given, then the --jq filter fails on it: the failure wins, and ends with 2.
describe('a --jq filter failing on the answer ends with 2, not 1', () => {
  for (const args of [
    ['status', 'tbl_open', '--exit-status'],
    ['status', 'tbl_ok', '--exit-status'],
    ['gate', 'run', 'tbl_failed'],
    ['gate', 'submit', 'tbl_failed'],
  ]) {
    it(args.join(' '), async () => {
      const r = await againstStandIn([...args, '--jq', 'error("boom")']);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      expect(errorLine(r.stderr)).toMatchObject({ error: { code: 'jq_failed' } });
    });
  }
});

// A command that failed and said so (one error line) keeps its failure; the --jq filter failing on the record
// it wrote before is a warning, never a second error line under --json.
it('push --wait whose job FAILED, with a --jq filter failing on its record: exit 1, one error line', async () => {
  pushing = true;
  const r = await againstStandIn([
    'push',
    'orders.yml',
    '--connector',
    'con_1',
    '--wait',
    '--jq',
    'error("boom")',
  ]).finally(() => {
    pushing = false;
  });
  expect(r.code, r.stderr).toBe(1);
  expect(r.stdout).toBe('');
  const lines = r.stderr
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { error?: { code?: string }; warning?: unknown });
  expect(lines.filter((line) => line.error !== undefined)).toEqual([
    expect.objectContaining({ error: expect.objectContaining({ code: 'job_failed' }) }),
  ]);
  expect(JSON.stringify(lines.filter((line) => line.warning !== undefined))).toContain('boom');
});

describe('without the flag that makes exit 1 an answer, the failure keeps exit 1', () => {
  it('plan, status and push', async () => {
    for (const args of [
      ['plan', '--dbt', '.'],
      ['status', 'tbl_42'],
      ['push', 'orders.yml', '--connector', 'con_1'],
    ]) {
      const r = await withUnusableConfig(args);
      expect(r.code, r.stderr).toBe(1);
      expect(errorLine(r.stderr)).toMatchObject({ error: { code: 'config_not_regular_file' } });
    }
  });

  it('plan --detailed-exitcode ends every failure with 1, 2 meaning changes', async () => {
    const r = await withUnusableConfig(['plan', '--dbt', '.', '--detailed-exitcode']);
    expect(r.code, r.stderr).toBe(1);
    expect(errorLine(r.stderr)).toMatchObject({ error: { code: 'config_not_regular_file' } });
  });
});

// terraform's spellings, -detailed-exitcode and -detailed-exitcode=true, are usage errors to oclif (a flag of one
// dash, a boolean given a value), yet they ask for --detailed-exitcode: ending them with 2 would say "changes".
describe('plan --detailed-exitcode written as terraform writes it', () => {
  for (const flag of ['-detailed-exitcode', '--detailed-exitcode=true']) {
    it(`${flag}: the usage error ends with 1`, async () => {
      const r = await runInProcess(['plan', '--dbt', '.', flag, '--json'], { cwd: dir });
      expect(r.code, r.stderr).toBe(1);
      expect(errorLine(r.stderr)).toMatchObject({ error: { code: 'usage' } });
    });
  }
});

// A mistyped command or a mistyped --detailed-exitcode is a usage error too, met before plan parses its flags
// (or before any command runs): 2 would say "a table would change" to a step written `|| [ $? -eq 2 ]`.
describe('plan --detailed-exitcode on a mistyped line', () => {
  it.each([
    [['pln', '--dbt', '.', '--detailed-exitcode', '--json'], 'command_not_found'],
    [['--detailed-exitcode', 'plan', '--dbt', '.', '--json'], 'command_not_found'],
    [['plan', '--dbt', '.', '--detailed-exitcod', '--json'], 'usage'],
    [['plan', '--dbt', '.', '--Detailed-exitcode', '--json'], 'usage'],
    [['plan', '--dbt', '.', '--detailed-exit-code', '--json'], 'usage'],
  ])('gds %j: the usage error ends with 1', async (args, code) => {
    const r = await runInProcess(args, { cwd: dir });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toBe('');
    expect(errorLine(r.stderr)).toMatchObject({ error: { code } });
  });

  it.each([
    [['pln', '--dbt', '.', '--json'], 'command_not_found'],
    [['plan', '--dbt', '.', '--exit-cod', '--json'], 'usage'],
    [['plan', '--dbt', '.', '--json', '--', '--detailed-exitcod'], 'usage'],
  ])('gds %j, which asks for no --detailed-exitcode: still 2', async (args, code) => {
    const r = await runInProcess(args, { cwd: dir });
    expect(r.code, r.stderr).toBe(2);
    expect(errorLine(r.stderr)).toMatchObject({ error: { code } });
  });
});

// A word after `--` is an argument, never the flag: it changes no exit code (`gds status -- --exit-status` names
// a table called --exit-status), as --json after `--` makes no JSON.
describe('a flag word after -- does not renumber a failure', () => {
  it('status -- --exit-status: a failure keeps exit 1', async () => {
    const r = await runInProcess(['status', '--json', '--', '--exit-status'], {
      cwd: dir,
      env: { GDS_CONFIG_DIR: configDir, SERVICE_TOKEN: undefined, SERVICE_API_URL: undefined },
    });
    expect(r.code, r.stderr).toBe(1);
    expect(errorLine(r.stderr)).toMatchObject({ error: { code: 'config_not_regular_file' } });
  });

  it('plan -- --detailed-exitcode: the unexpected argument is a usage error, exit 2', async () => {
    const r = await runInProcess(['plan', '--dbt', '.', '--json', '--', '--detailed-exitcode'], { cwd: dir });
    expect(r.code, r.stderr).toBe(2);
    expect(errorLine(r.stderr)).toMatchObject({ error: { code: 'usage' } });
  });
});

// An alias's missing argument is a usage error, met before plan runs: under --detailed-exitcode it ends with 1
// as plan's own usage errors do, never with 2, which says a table would change.
describe('an alias of plan given too few arguments', () => {
  it('ends with 1 when the alias runs plan --detailed-exitcode, else with 2', async () => {
    const env = { GDS_CONFIG_DIR: join(dir, 'alias-config'), GDS_JSON: '1' };
    for (const [name, expansion, code] of [
      ['tfplan', 'plan --dbt $1 --detailed-exitcode', 1],
      ['changes', 'plan --dbt $1 --exit-code', 2],
    ] as const) {
      const set = await runInProcess(['alias', 'set', name, expansion], { cwd: dir, env });
      expect(set.code, set.stderr).toBe(0);
      const r = await runInProcess([name], { cwd: dir, env });
      expect(r.code, r.stderr).toBe(code);
      expect(r.stdout).toBe('');
      expect(errorLine(r.stderr)).toMatchObject({ error: { code: 'alias_arguments_missing' } });
    }
  });
});
