// CI credentials that last: a person signed in creates a CLI token with `gds auth token create --name ci`
// (printed whole once, one --json line with `token`), `gds tokens list` shows it masked, and the README's CI
// commands (plan, apply, recertify) run with SERVICE_TOKEN holding only that token after the server's clock
// moved 2 hours (past every access token) and 31 days (past every refresh token): recertify draws the
// 60-minute MANAGEMENT token it needs on the CLI token, and leaves no token behind. `gds tokens revoke ci`
// ends it. gds runs in the test process (runInProcess), each command with SERVICE_TOKEN alone in its environment
// as a CI job's, against the in-process server, whose clock moves through the file `--clock-offset-file` names.
import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { sharedFixturesDir } from '../helpers/fixtures.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import { needs, noSharedFixtures } from '../helpers/skip.js';
import { loadDbtProject } from '../../src/services/dbt-project.js';

const JAFFLE = join(sharedFixturesDir, 'real/dbt-projects/manoty_jaffle_duckdb');
const SCHEMA = 'analytics_dev';
const DAY = 24 * 60 * 60;

let server: TestServer;
let dir: string;
let project: string;
let connector: string;
let offsetFile: string;
const outputs: string[] = [];

beforeAll(async () => {
  if (noSharedFixtures !== undefined) return;
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-ci-credentials-'));
  offsetFile = join(dir, 'clock-offset');
  server = await startTestServer({ clockOffsetFile: offsetFile });
  project = join(dir, 'jaffle');
  await cp(JAFFLE, project, { recursive: true });
  // The run as built where the tables are registered (--schema analytics_dev; dbt wrote main): a rebuilt
  // relation signals only the table over it.
  for (const file of ['run_results.json', 'manifest.json'].map((f) => join(project, 'target', f))) {
    const text = await readFile(file, 'utf8');
    await writeFile(
      file,
      text
        .replaceAll('\\"main\\"', `\\"${SCHEMA}\\"`)
        .replaceAll('"schema": "main"', `"schema": "${SCHEMA}"`),
    );
  }
  connector = server.ready.connectors.find((c) => c.environmentLabel === 'dev')?.id ?? '';
  const declared = await loadDbtProject(project, {});
  for (const declaration of declared.declarations) {
    const columns = declaration.columns.map((c) => `"${c.name.toLowerCase()}" text`).join(', ');
    await server.sql(`CREATE TABLE IF NOT EXISTS ${SCHEMA}."${declaration.name}" (${columns})`);
  }
});

afterAll(async () => {
  await server?.close();
});

async function gds(args: string[], token: string): Promise<CliResult> {
  const result = await runInProcess(args, {
    env: {
      GDS_CONFIG_DIR: join(dir, 'config'),
      GDS_SECRET_STORAGE: 'file',
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: token,
    },
    cwd: project,
  });
  outputs.push(result.stdout, result.stderr);
  return result;
}

const jsonLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe(
  'a CLI token created by a person runs the README’s CI commands for months',
  needs(noSharedFixtures),
  () => {
    it(
      'create, list masked, plan / apply / recertify after 2 hours and 31 days, revoke',
      { timeout: 300_000 },
      async () => {
        const admin = server.user('ADMIN');
        // A CLI token does not make another: refused before anything is sent.
        const fromCli = await gds(['auth', 'token', 'create', '--name', 'ci'], admin.cliToken);
        expect(fromCli.code).toBe(3);
        expect(fromCli.stderr).toContain('needs a browser sign-in');

        const created = await gds(['auth', 'token', 'create', '--name', 'ci', '--json'], admin.accessToken);
        expect(created.code).toBe(0);
        const [line] = jsonLines(created.stdout);
        expect(jsonLines(created.stdout)).toHaveLength(1);
        const ci = String(line?.token);
        expect(ci).toMatch(/^cli_/);
        expect(line).toMatchObject({ name: 'ci', userId: admin.userId });

        const listed = await gds(['tokens', 'list', '--json'], ci);
        expect(listed.code).toBe(0);
        const row = jsonLines(listed.stdout).find((t) => t.name === 'ci');
        expect(row).toMatchObject({ kind: 'cli', issuedBy: admin.email, revokedAt: null });
        expect(String(row?.token)).toMatch(/^cli_.{4}….{4}$/);
        expect(listed.stdout).not.toContain(ci);
        const tokensBefore = (await server.sql('SELECT count(*)::int AS n FROM gds.integration_tokens'))[0].n;

        const projectArgs = ['--dbt', project, '--connector', connector, '--schema', SCHEMA];
        try {
          await writeFile(offsetFile, String(2 * 60 * 60));
          const plan = await gds(['plan', ...projectArgs, '--exit-code'], ci);
          expect(plan.code).toBe(1);
          expect(plan.stdout).toContain('+ create stg_orders');

          await writeFile(offsetFile, String(31 * DAY));
          const apply = await gds(['apply', ...projectArgs, '--yes', '--json'], ci);
          expect(apply.code).toBe(0);
          const steps = jsonLines(apply.stdout).filter((l) => 'outcome' in l);
          expect(steps.filter((s) => s.outcome === 'failed')).toEqual([]);

          // The MANAGEMENT token recertify draws is for one environment: without --env, nothing is sent.
          const noEnv = await gds(['recertify', '--run-results', 'target/run_results.json', '--json'], ci);
          expect(noEnv.code).toBe(2);
          expect(JSON.parse(noEnv.stderr.trim()).error).toMatchObject({ code: 'env_required' });
          expect(noEnv.stdout).toBe('');
          const recertify = await gds(
            [
              'recertify',
              '--run-results',
              'target/run_results.json',
              '--manifest',
              'target/manifest.json',
              '--env',
              'dev',
              '--json',
            ],
            ci,
          );
          expect(recertify.stderr).toBe('');
          expect(recertify.code).toBe(0);
          const [answer] = jsonLines(recertify.stdout);
          expect(answer).toMatchObject({ environmentLabel: 'dev' });
          expect(Number(answer?.governed)).toBeGreaterThan(0);
          // The MANAGEMENT token recertify drew is kept nowhere: no integration token was made.
          expect((await server.sql('SELECT count(*)::int AS n FROM gds.integration_tokens'))[0].n).toBe(
            tokensBefore,
          );

          // A records command draws the DATA-API token of its one table the same way.
          const rows = await gds(['records', 'list', 'crm_contacts', '--limit', '1', '--json'], ci);
          expect(rows.code, rows.stderr).toBe(0);
          expect(jsonLines(rows.stdout)).toHaveLength(1);

          const revoked = await gds(['tokens', 'revoke', 'ci', '--yes'], ci);
          expect(revoked.code).toBe(0);
          expect(revoked.stderr).toContain('✓ Revoked "ci"');
          const after = await gds(['plan', ...projectArgs], ci);
          expect(after.code).toBe(3);
        } finally {
          await writeFile(offsetFile, '');
        }
        for (const output of outputs) expect(output.replace(created.stdout, '')).not.toContain(ci);
      },
    );
  },
);
