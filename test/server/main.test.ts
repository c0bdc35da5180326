// `npm run server` as a real process: it writes the ready file (0600), serves, prints its URL
// without whole tokens, stops cleanly on SIGTERM, and refuses a ready-file directory others can write or a
// bad option (exit 2, the message and the usage on stderr). Which command lines are refused, and why, is
// checked on the parser itself (parseServerArgs, whose UsageError main prints that way), without a process.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { sharedFixturesDir } from '../helpers/fixtures.js';
import { seededPgliteCopy } from '../helpers/migrated-database.js';
import type { ReadyInfo } from '../helpers/server.js';
import { startServerProcess, waitFor } from '../helpers/server-process.js';
import { needs, noSharedFixtures } from '../helpers/skip.js';
import { parseServerArgs, UsageError } from '../../src/server/options.js';

const dir = mkdtempSync(join(tmpdir(), 'gds-main-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = startServerProcess;

describe('npm run server', () => {
  it('writes the ready file once it listens, serves, and stops on SIGTERM', async () => {
    const readyFile = join(dir, 'ready.json');
    const server = run(['--ready-file', readyFile, '--port', '0']);
    let baseUrl: string | undefined;
    try {
      await waitFor(
        () => existsSync(readyFile) && server.output.stdout.includes('whole tokens'),
        'the ready file',
      );
      expect(statSync(readyFile).mode & 0o777).toBe(0o600);
      const ready = JSON.parse(readFileSync(readyFile, 'utf8')) as ReadyInfo;
      baseUrl = ready.baseUrl;
      // The REST door under its stage; the GraphQL and MCP doors and the dashboard at the origin.
      expect(ready.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      expect(ready.origin).toBe(new URL(ready.baseUrl).origin);
      expect(ready.doors).toEqual({
        rest: ready.baseUrl,
        graphql: `${ready.origin}/graphql`,
        mcp: `${ready.origin}/mcp`,
      });
      expect(ready.dashboardUrl).toBe(`${ready.origin}/dashboard`);
      expect(ready.users.map((u) => u.role)).toEqual([
        'OWNER',
        'ADMIN',
        'STEWARD',
        'MEMBER',
        'PLATFORM_OPERATOR',
      ]);
      expect(ready.connectors.map((c) => c.environmentLabel)).toEqual(['dev', 'staging', 'production']);
      expect(new Set(ready.tables.map((t) => t.mode))).toEqual(new Set(['MODE_A', 'MODE_B']));
      expect(ready.warehouseObjects.map((o) => o.source)).toContain('analytics_dev.customers');
      const members = await fetch(`${ready.baseUrl}/api/workspace/members`, {
        headers: { authorization: `Bearer ${ready.users[0]?.cliToken}` },
      });
      expect(members.status).toBe(200);
      expect(server.output.stdout).toContain(`listening on ${ready.origin}`);
      for (const door of Object.values(ready.doors)) expect(server.output.stdout).toContain(door);
      // The banner: every seeded user with masked tokens, and the next command for a person and for CI.
      for (const user of ready.users) {
        expect(server.output.stdout).toMatch(
          new RegExp(
            `${user.role} +${user.email} +cli token ${user.cliToken.slice(0, 8)}…${user.cliToken.slice(-4)}`,
          ),
        );
      }
      expect(server.output.stdout).toContain(`  gds auth login --base ${ready.baseUrl} --no-browser\n`);
      const ciLine = server.output.stdout
        .split('\n')
        .find((line) => line.includes('export SERVICE_API_URL='));
      const ci = spawnSync('sh', ['-c', `${ciLine ?? 'false'} && echo "$SERVICE_API_URL $SERVICE_TOKEN"`], {
        encoding: 'utf8',
      });
      const admin = ready.users.find((u) => u.role === 'ADMIN');
      expect(ci.stdout).toBe(`${ready.baseUrl} ${admin?.cliToken}\n`);
      for (const user of ready.users) {
        expect(server.output.stdout).not.toContain(user.cliToken);
        expect(server.output.stdout).not.toContain(user.accessToken);
      }
    } finally {
      server.signal('SIGTERM');
    }
    // npm itself dies of the signal; the server's clean stop shows in what it leaves behind.
    await server.closed;
    expect(server.output.stderr).toContain('SIGTERM: stopping');
    expect(server.output.stderr).not.toContain('failed to stop cleanly');
    expect(existsSync(readyFile)).toBe(false);
    await expect(fetch(`${baseUrl}/.well-known/jwks.json`)).rejects.toThrow();
  });

  // The three that start no server run at once.
  it.concurrent(
    'refuses a ready-file directory others can write, with exit code 2, and writes nothing',
    async () => {
      const shared = join(dir, 'shared');
      mkdirSync(shared);
      chmodSync(shared, 0o777);
      const server = run(['--ready-file', join(shared, 'ready.json'), '--port', '0']);
      expect(await server.exited).toBe(2);
      await server.closed;
      expect(server.output.stderr).toContain(`directory ${shared} is writable by its group (mode 777)`);
      expect(server.output.stdout).toBe('');
      expect(readdirSync(shared)).toEqual([]);
    },
  );

  it.concurrent('--help describes every option on its own line, with its default', async () => {
    const server = run(['--help']);
    expect(await server.exited).toBe(0);
    await server.closed;
    const options = server.output.stdout.split('\n').filter((line) => line.startsWith('  --'));
    expect(options.map((line) => /^ {2}--([a-z-]+)/.exec(line)?.[1])).toEqual([
      'port',
      'host',
      'stage',
      'ready-file',
      'data-dir',
      'database-url',
      'rate-limit',
      'refresh-grace',
      'device-interval',
      'workspaces',
      'query-timeout',
      'embedded-row-limit',
      'public-url',
      'trust-proxy',
      'dbt',
      'clock-offset-file',
      'help',
    ]);
    for (const line of options) expect(line).toMatch(/^ {2}--\S+( [A-Z]+)? +\S.* \(default: .+\)$/);
    expect(options[0]).toMatch(/^ {2}--port N +.*\(default: 8787\)$/);
    expect(options[2]).toMatch(/^ {2}--stage NAME +.*\(default: v1\)$/);
    expect(options[3]).toContain(`(default: ${join(tmpdir(), 'gds-server', 'ready.json')})`);
    expect(server.output.stderr).toBe('');
  });

  it.concurrent('refuses a bad option with exit code 2, the message and the usage on stderr', async () => {
    const server = run(['--port', 'eighty']);
    expect(await server.exited).toBe(2);
    await server.closed;
    expect(server.output.stderr).toContain('--port must be an integer');
    expect(server.output.stderr).toContain('usage: npm run server -- [options]');
    expect(server.output.stdout).toBe('');
  });

  it('seeds a full second workspace with --workspaces 2 and lists both in the ready file; --stage names the REST stage', async () => {
    const readyFile = join(dir, 'two', 'ready.json');
    const server = run(['--ready-file', readyFile, '--port', '0', '--workspaces', '2', '--stage', 'prod']);
    try {
      await waitFor(
        () => existsSync(readyFile) && server.output.stdout.includes('whole tokens'),
        'the ready file',
      );
      const ready = JSON.parse(readFileSync(readyFile, 'utf8')) as ReadyInfo;
      expect(ready.baseUrl).toBe(`${ready.origin}/prod`);
      const members = await fetch(`${ready.baseUrl}/api/workspace/members`, {
        headers: { authorization: `Bearer ${ready.users[0]?.cliToken}` },
      });
      expect(members.status).toBe(200);
      expect(ready.workspaces.map((w) => w.workspaceId)).toEqual([
        ready.workspaceId,
        ready.otherWorkspace.workspaceId,
      ]);
      const second = ready.workspaces[1];
      expect(second?.users.map((u) => [u.role, u.workspaceId])).toEqual(
        ['OWNER', 'ADMIN', 'STEWARD', 'MEMBER'].map((role) => [role, second?.workspaceId]),
      );
      expect(second?.connectors.map((c) => c.schema)).toEqual([
        'globex_dev',
        'globex_staging',
        'globex_prod',
      ]);
      for (const user of second?.users ?? []) expect(server.output.stdout).not.toContain(user.cliToken);
    } finally {
      server.signal('SIGTERM');
    }
    await server.closed;
  });

  it(
    "--dbt DIR: the project's tables in the ready file, and the plan to run next in the banner",
    { ...needs(noSharedFixtures) },
    async () => {
      const project = join(sharedFixturesDir, 'real/dbt-projects/manoty_jaffle_duckdb');
      const readyFile = join(dir, 'dbt', 'ready.json');
      // On a seeded copy (--data-dir): the seeding is the tests' above; here, what --dbt adds to it.
      const copy = await seededPgliteCopy();
      onTestFinished(() => copy.remove());
      const server = run([
        ...['--ready-file', readyFile, '--port', '0'],
        ...['--dbt', project, '--data-dir', copy.dataDir],
      ]);
      try {
        await waitFor(
          () => existsSync(readyFile) && server.output.stdout.includes('gds plan --dbt'),
          'the ready file',
        );
        const ready = JSON.parse(readFileSync(readyFile, 'utf8')) as ReadyInfo;
        const connector = ready.connectors.find((c) => c.name === 'dbt-main');
        expect(ready.warehouseObjects.find((o) => o.source === 'main.customer_ltv')?.connectorId).toBe(
          connector?.id,
        );
        expect(ready.dbt?.tables).toHaveLength(17);
        expect(server.output.stdout).toContain(
          `dbt project jaffle_dbt: 17 table(s) created, 0 already there, in schema(s) main of the dev warehouse`,
        );
        expect(server.output.stdout).toContain(
          `  gds plan --dbt ${project} --connector ${connector?.id ?? ''}\n`,
        );
      } finally {
        server.signal('SIGTERM');
      }
      await server.closed;
    },
  );
});

describe("npm run server's command line", () => {
  const refusal = (args: string[]) => {
    try {
      parseServerArgs(args, {});
    } catch (error) {
      if (error instanceof UsageError) return error.message;
      throw error;
    }
    throw new Error(`${args.join(' ')} was accepted`);
  };

  it('refuses a --dbt that is not a folder', () => {
    expect(refusal(['--dbt', join(dir, 'no-such-project')])).toContain(
      'is not a folder: name your dbt project folder',
    );
  });

  it('refuses a bad port, workspace count, device interval or stage', () => {
    expect(refusal(['--port', 'eighty'])).toContain('--port must be an integer');
    expect(refusal(['--device-interval', '0'])).toContain(
      '--device-interval must be an integer from 1 to 60',
    );
    expect(refusal(['--workspaces', '0'])).toContain('--workspaces must be an integer from 1 to 9');
    for (const stage of ['api', 'a/b'])
      expect(refusal(['--stage', stage])).toContain(`--stage must be one path segment of letters, digits`);
  });

  it('refuses a query deadline that is not a positive number of milliseconds', () => {
    expect(refusal(['--query-timeout', '0'])).toContain(
      '--query-timeout must be an integer from 1 to 3600000; got "0"',
    );
  });

  it('refuses a clock offset file that holds something other than whole seconds', () => {
    const file = join(dir, 'clock-offset');
    writeFileSync(file, '31 days');
    expect(refusal(['--clock-offset-file', file])).toContain(
      `--clock-offset-file ${file} must hold a whole number of seconds`,
    );
  });

  it('refuses an embedded row limit that is not a positive number of rows', () => {
    expect(refusal(['--embedded-row-limit', '0'])).toContain(
      '--embedded-row-limit must be an integer from 1 to 1000000000; got "0"',
    );
  });

  it('reads a good command line into the server options and the ready file', () => {
    const parsed = parseServerArgs(
      [
        '--port',
        '0',
        '--workspaces',
        '2',
        '--stage',
        'prod',
        '--device-interval',
        '1',
        '--ready-file',
        join(dir, 'r.json'),
      ],
      { GDS_DATABASE_URL: 'postgres://db/x' },
    );
    expect(parsed).toMatchObject({
      server: {
        port: 0,
        workspaces: 2,
        stage: 'prod',
        deviceFlow: { intervalSeconds: 1 },
        databaseUrl: 'postgres://db/x',
      },
      readyFile: join(dir, 'r.json'),
    });
    expect(parseServerArgs(['--help'], {})).toEqual({ help: true });
  });
});
