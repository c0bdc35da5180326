// `npm run demo [-- --json]`: the reference server on its embedded default, and the real gds CLI through
// the lifecycle a data developer lives, each step announced. Everything happens in a temporary folder
// (config, secrets in a 0600 file, written files) that is removed at the end; the server stops with it.
//
// The demo plays two parts besides the developer's: the pipeline that builds a table in the warehouse
// (and later fixes its bad rows), and the person who approves the sign-in code in the browser.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from '../src/server/app.js';
import type { RunningServer } from '../src/server/app.js';
import { demoGate1 } from './demo-gate1.js';

const json = process.argv.includes('--json');
const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const node = process.execPath;
const cliEntry = join(repoRoot, 'bin/run.js');
const signInEmail = 'steward@example.com';

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

class Demo {
  step = 0;
  constructor(
    readonly server: RunningServer,
    readonly env: NodeJS.ProcessEnv,
    readonly cwd: string,
  ) {}

  announce(title: string, detail?: string): void {
    this.step += 1;
    if (json) return emit({ step: this.step, title, ...(detail ? { detail } : {}) });
    process.stdout.write(`\n\u25b8 ${this.step}. ${title}\n`);
    if (detail) process.stdout.write(`  ${detail}\n`);
  }

  note(text: string, data?: unknown): void {
    if (json) return emit({ step: this.step, note: text, ...(data === undefined ? {} : { data }) });
    process.stdout.write(`  ${text}\n`);
  }

  /**
   * Runs `gds …`, shows it and its output, and fails the demo unless the exit code is the expected one.
   * `secret`: the output holds tokens shown once; it is read under --json and not shown.
   */
  async gds(
    args: string[],
    {
      expect = 0,
      env = {},
      secret = false,
    }: { expect?: number; env?: NodeJS.ProcessEnv; secret?: boolean } = {},
  ): Promise<CliRun> {
    const argv = json || secret ? [...args, '--json'] : args;
    const run = await runCli(argv, { ...this.env, ...env }, this.cwd);
    if (secret) {
      if (json)
        emit({
          step: this.step,
          command: ['gds', ...argv],
          exitCode: run.code,
          output: '(tokens, not shown)',
        });
      else
        process.stdout.write(
          `  $ gds ${argv.map(shellWord).join(' ')}\n    (tokens shown once, kept by the demo, not printed)\n`,
        );
    } else if (json) {
      const lines = run.stdout.split('\n').filter((line) => line !== '');
      emit({ step: this.step, command: ['gds', ...argv], exitCode: run.code, output: lines.map(parseLine) });
    } else {
      process.stdout.write(`  $ gds ${argv.map(shellWord).join(' ')}\n`);
      for (const line of (run.stdout + run.stderr).trimEnd().split('\n'))
        process.stdout.write(`    ${line}\n`);
      if (run.code !== 0) process.stdout.write(`    (exit ${run.code})\n`);
    }
    if (run.code !== expect) {
      throw new Error(`gds ${args.join(' ')} exited ${run.code}, expected ${expect}:\n${run.stderr}`);
    }
    return run;
  }

  /** SQL on the embedded database, one statement at a time: the warehouse lives there too. */
  async sql(...statements: string[]): Promise<Record<string, unknown>[]> {
    let rows: Record<string, unknown>[] = [];
    for (const statement of statements) rows = await this.server.db.query<Record<string, unknown>>(statement);
    return rows;
  }
}

async function main(): Promise<void> {
  const home = await mkdtemp(join(tmpdir(), 'gds-demo-'));
  const cwd = join(home, 'project');
  await mkdir(cwd);
  const server = await createServer({ port: 0, deviceFlow: { intervalSeconds: 1, expiresInSeconds: 120 } });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GDS_CONFIG_DIR: join(home, 'config'),
    GDS_SECRET_STORAGE: 'file',
    XDG_CACHE_HOME: join(home, 'cache'),
    SERVICE_TOKEN: undefined,
    SERVICE_API_URL: undefined,
    NO_COLOR: '1',
  };
  const demo = new Demo(server, env, cwd);
  try {
    await lifecycle(demo, server, cwd);
    if (json) emit({ done: true, steps: demo.step });
    else process.stdout.write('\nThe whole lifecycle ran against the reference server. Cleaned up.\n');
  } finally {
    await server.close();
    await rm(home, { recursive: true, force: true });
  }
}

async function lifecycle(demo: Demo, server: RunningServer, cwd: string): Promise<void> {
  const dev = server.ready.connectors.find((c) => c.environmentLabel === 'dev');
  if (!dev) throw new Error('the reference server seeded no dev connector');
  const warehouseObject = `${dev.schema}.newsletter_signups`;

  demo.announce('The reference server is running', `${server.url} (embedded PostgreSQL, seeded workspace)`);

  demo.announce('Sign in with the browser flow', `the demo approves the code as ${signInEmail}`);
  await signIn(demo, server, cwd);
  await demo.gds(['whoami']);

  demo.announce('The pipeline builds a table in the warehouse', warehouseObject);
  await demo.sql(
    `CREATE TABLE ${warehouseObject} (
       signup_id integer PRIMARY KEY, email text NOT NULL, plan text NOT NULL, amount numeric NOT NULL)`,
    `INSERT INTO ${warehouseObject} VALUES
       (1, 'ada@example.com', 'pro', 12), (2, 'grace@example.com', 'free', 0), (3, 'not-an-email', 'pro', 12),
       (4, 'linus@example', 'team', 30), (5, 'margaret@example.com', 'pro', -12)`,
  );
  demo.note('5 rows, two malformed e-mails and a negative amount among them');

  demo.announce('Push the SQL artifact and watch the baseline job');
  await writeFile(
    join(cwd, 'newsletter_signups.sql'),
    `-- Newsletter sign-ups, as the marketing models expose them.\nCREATE OR REPLACE VIEW ${warehouseObject} AS\n` +
      `SELECT signup_id, email, plan, amount\n  FROM staging.signups;\n`,
  );
  const pushed = await demo.gds(['push', 'newsletter_signups.sql', '--connector', dev.id, '--wait']);
  const tableId = governanceIdOf(pushed.stdout, server);
  await demo.gds(['status', tableId]);

  demo.announce('Write, validate and apply the Gate 1 rules');
  await writeFile(join(cwd, 'gate1.yml'), demoGate1);
  await demo.gds(['gate', 'validate', '-f', 'gate1.yml']);
  await demo.gds(['gate', 'apply', tableId, '-f', 'gate1.yml']);

  demo.announce('Run Gate 1 (a dry run): it fails for real on the bad rows');
  await demo.gds(['gate', 'run', tableId], { expect: 1 });

  demo.announce('The pipeline fixes the data upstream, and Gate 1 passes');
  await demo.sql(
    `UPDATE ${warehouseObject} SET email = 'sam@example.com' WHERE signup_id = 3`,
    `UPDATE ${warehouseObject} SET email = 'linus@example.org' WHERE signup_id = 4`,
    `UPDATE ${warehouseObject} SET amount = 12 WHERE signup_id = 5`,
  );
  await demo.gds(['gate', 'run', tableId]);

  demo.announce('Submit for review, then certify as the steward');
  await demo.gds(['gate', 'submit', tableId]);
  await demo.gds(['certify', tableId, '--note', 'Checked with marketing: e-mails and amounts are clean.']);

  demo.announce('Query the published certified view', 'certified_dev.newsletter_signups, with SQL');
  const rows = await demo.sql('SELECT * FROM certified_dev.newsletter_signups ORDER BY signup_id');
  demo.note(`${rows.length} certified rows`, rows);
  if (!json) for (const row of rows) demo.note(`  ${JSON.stringify(row)}`);
  await demo.gds(['versions', 'list', tableId]);

  demo.announce('The pipeline reruns and sends its dbt run results', 'a recertification signal');
  const issued = await demo.gds(
    ['tokens', 'issue', '--name', 'dbt-pipeline', '--env', 'dev', '--scope', 'workspace:write:recertify'],
    { secret: true },
  );
  const pipelineToken = accessTokenOf(issued.stdout);
  await writeFile(join(cwd, 'run_results.json'), JSON.stringify(dbtRunResults(), null, 2));
  await demo.gds(['recertify', '--run-results', 'run_results.json'], {
    env: { SERVICE_TOKEN: pipelineToken, SERVICE_API_URL: server.url },
  });
  await demo.gds(['recertification', 'list']);

  demo.announce('Read the audit log');
  await demo.gds(['audit', 'list', '--limit', '12']);
}

/** `gds auth login --no-browser`: reads the code from stderr and approves it, as the person would. */
async function signIn(demo: Demo, server: RunningServer, cwd: string): Promise<void> {
  const argv = ['auth', 'login', '--base', server.url, '--no-browser', ...(json ? ['--json'] : [])];
  const child = spawn(node, [cliEntry, ...argv], { cwd, env: demo.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const code = await new Promise<string>((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      const match = /code ([A-Z]{4}-[A-Z]{4})/.exec(stderr);
      if (match?.[1]) resolve(match[1]);
    });
    child.on('close', () => reject(new Error(`gds auth login ended before showing a code:\n${stderr}`)));
  });
  demo.note(`gds shows the code ${code}; approving it at ${server.origin}/device`);
  const form = new URLSearchParams({ user_code: code, email: signInEmail, action: 'approve' });
  const approval = await fetch(`${server.origin}/device`, { method: 'POST', body: form });
  if (!approval.ok) throw new Error(`approving the code failed: ${approval.status}`);
  const exitCode = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (json) emit({ step: demo.step, command: ['gds', ...argv], exitCode, output: lines(stdout) });
  else {
    process.stdout.write(`  $ gds ${argv.join(' ')}\n`);
    for (const line of (stderr + stdout).trimEnd().split('\n')) process.stdout.write(`    ${line}\n`);
  }
  if (exitCode !== 0) throw new Error(`gds auth login exited ${exitCode}:\n${stderr}`);
}

function runCli(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<CliRun> {
  const child = spawn(node, [cliEntry, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The pushed table's id: from the --json line, or the only table of that name on the server. */
function governanceIdOf(stdout: string, server: RunningServer): string {
  for (const line of lines(stdout)) {
    const id = (line as { governanceId?: string }).governanceId;
    if (id) return id;
  }
  const match = /\b(tbl_[A-Za-z0-9_-]+)\b/.exec(stdout);
  if (match?.[1]) return match[1];
  throw new Error(`no governance id in the push output of ${server.url}:\n${stdout}`);
}

function accessTokenOf(stdout: string): string {
  for (const line of lines(stdout)) {
    const token = (line as { tokens?: { accessToken?: string } }).tokens?.accessToken;
    if (token) return token;
  }
  throw new Error('gds tokens issue printed no access token');
}

/** A dbt run_results.json (schema v6) for one invocation that rebuilt the model behind the table. */
function dbtRunResults(): unknown {
  const now = new Date().toISOString();
  return {
    metadata: {
      dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json',
      dbt_version: '1.10.11',
      generated_at: now,
      invocation_id: '5a0d8c1e-demo-4f2b-9d1e-000000000001',
      env: {},
    },
    results: [
      {
        status: 'success',
        timing: [],
        thread_id: 'Thread-1',
        execution_time: 0.42,
        adapter_response: { _message: 'CREATE VIEW', code: 'CREATE VIEW' },
        message: 'CREATE VIEW',
        failures: null,
        unique_id: 'model.marketing.newsletter_signups',
        compiled: true,
        relation_name: '"analytics"."analytics_dev"."newsletter_signups"',
      },
    ],
    elapsed_time: 1.3,
    args: { which: 'run' },
  };
}

function lines(stdout: string): unknown[] {
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map(parseLine);
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return line;
  }
}

function emit(event: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

function shellWord(word: string): string {
  return /^[\w./:@=,+-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

main().catch((error: unknown) => {
  process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
