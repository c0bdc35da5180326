// `env promote`'s errors name its own flags. Promoting products to staging, whose
// warehouse has no products object, is refused by the service in push's words ("pass --source"): gds
// says what promote can do instead, and never advises a flag env promote does not have. gds runs in the
// test process (runInProcess).
import { mkdtemp, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addIdleEnvironment } from '../helpers/idle-environment.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import { PRODUCTS_DEFINITION } from './products.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
});

afterAll(async () => {
  await server?.close();
});

/** gds's environment for `role`'s CLI token, its settings under `dir`. */
const cliEnv = (dir: string, role: 'OWNER' | 'STEWARD' | 'MEMBER' = 'OWNER') => ({
  SERVICE_API_URL: server.url,
  SERVICE_TOKEN: server.user(role).cliToken,
  GDS_CONFIG_DIR: join(dir, 'config'),
});
/** The `{"error":…}` line gds wrote last on stderr under --json. */
const lastError = (stderr: string) =>
  (
    JSON.parse(stderr.trim().split('\n').at(-1) ?? '{}') as {
      error: { code: string; message: string; suggestion: string | null };
    }
  ).error;

describe('env promote refusals', () => {
  it('a target without the warehouse object: no advice to pass --source', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gds-e2e-promote-'));
    const file = join(dir, 'products.yml');
    await writeFile(file, PRODUCTS_DEFINITION);
    const env = {
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user('OWNER').cliToken,
      GDS_CONFIG_DIR: join(dir, 'config'),
    };
    const pushed = await runInProcess(['push', file, '--json'], { env });
    expect(pushed.code, pushed.stderr).toBe(0);
    const tableId = String((JSON.parse(pushed.stdout) as { governanceId: string }).governanceId);
    const human = await runInProcess(['env', 'promote', tableId, '--to', 'staging'], { env });
    expect(human.code).not.toBe(0);
    expect(human.stderr).not.toContain('--source');
    expect(human.stderr).toContain('--to');
    const json = await runInProcess(['env', 'promote', tableId, '--to', 'staging', '--json'], { env });
    const { error } = JSON.parse(json.stderr.trim().split('\n').at(-1) ?? '') as {
      error: { message: string; suggestion: string };
    };
    expect(`${error.message} ${error.suggestion}`).not.toContain('--source');
  });
});

describe('env promote --dry-run checks the target, writes nothing', () => {
  let dir: string;
  const env = (role: 'OWNER' | 'MEMBER' = 'OWNER') => cliEnv(dir, role);
  const stagingTables = async () =>
    Number(
      (
        await server.sql(
          "SELECT count(*)::int AS n FROM gds.tables WHERE active AND environment_label = 'staging'",
        )
      )[0]?.n,
    );

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gds-e2e-promote-dry-'));
    const file = join(dir, 'products.yml');
    await writeFile(file, PRODUCTS_DEFINITION);
    await runInProcess(['push', file, '--json'], { env: env() });
  });

  it('a target environment without the warehouse object: refused as the promotion would be', async () => {
    const before = await stagingTables();
    const r = await runInProcess(['env', 'promote', 'products', '--to', 'staging', '--dry-run', '--json'], {
      env: env(),
    });
    expect(r.code).toBe(7);
    expect(r.stdout).toBe('');
    expect(lastError(r.stderr).code).toBe('unknown_source');
    expect(await stagingTables()).toBe(before);
  });

  it('an environment that does not exist: refused', async () => {
    const r = await runInProcess(['env', 'promote', 'orders', '--to', 'nowhere', '--dry-run'], {
      env: env(),
    });
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('nowhere');
  });

  it('a caller who may not act in the target environment: exit 4', async () => {
    const r = await runInProcess(['env', 'promote', 'orders', '--to', 'staging', '--dry-run'], {
      env: env('MEMBER'),
    });
    expect(r.code).toBe(4);
    expect(r.stdout).toBe('');
  });

  it('a target that takes it: the diff of what would change, exit 0, nothing written; then no change once promoted', async () => {
    const before = await stagingTables();
    const preview = await runInProcess(
      ['env', 'promote', 'orders', '--to', 'staging', '--dry-run', '--json'],
      {
        env: env(),
      },
    );
    expect(preview.code, preview.stderr).toBe(0);
    const answer = JSON.parse(preview.stdout.trim()) as { changed: boolean; diff: string };
    expect(answer.changed).toBe(true);
    expect(answer.diff).toContain('analytics_staging.orders');
    expect(await stagingTables()).toBe(before);
    const promoted = await runInProcess(['env', 'promote', 'orders', '--to', 'staging', '--json'], {
      env: env(),
    });
    expect(promoted.code, promoted.stderr).toBe(0);
    const again = await runInProcess(['env', 'promote', 'orders', '--to', 'staging', '--dry-run', '--json'], {
      env: env(),
    });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout.trim())).toMatchObject({ changed: false });
  });
});

describe('env promote names the environment that is wrong', () => {
  let dir: string;
  const env = (role: 'OWNER' | 'STEWARD' = 'OWNER') => cliEnv(dir, role);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gds-e2e-promote-env-'));
  });

  it('a mistyped --to: an unknown environment, did you mean the one near it, exit 5', async () => {
    for (const mode of [[], ['--bundle-in', '-']]) {
      const bundle =
        mode.length === 0
          ? undefined
          : (
              await runInProcess(['env', 'promote', 'orders', '--to', 'staging', '--bundle-out', '-'], {
                env: env(),
              })
            ).stdout;
      const r = await runInProcess(['env', 'promote', 'orders', '--to', 'prod', ...mode, '--json'], {
        env: env(),
        ...(bundle === undefined ? {} : { input: bundle }),
      });
      expect(r.code, r.stderr).toBe(5);
      expect(r.stdout).toBe('');
      const error = lastError(r.stderr);
      expect(error.code).toBe('environment_not_found');
      expect(error.message).toContain('prod');
      expect(error.message).not.toContain('connectorId');
      expect(error.suggestion).toContain('Did you mean production?');
    }
  });

  it('an environment without an active connector: says how a CLI user gets one, never connectorId', async () => {
    // qa is the owner's to act in: what is left to say is that it has no active connector.
    await addIdleEnvironment(server, 'qa', ['owner@example.com']);
    const r = await runInProcess(['env', 'promote', 'orders', '--to', 'qa', '--json'], { env: env() });
    expect(r.code, r.stderr).toBe(7);
    const error = lastError(r.stderr);
    expect(error.code).toBe('no_connector_for_environment');
    expect(`${error.message} ${error.suggestion}`).not.toContain('connectorId');
    expect(`${error.message} ${error.suggestion}`).toContain('gds connectors list');
  });

  it('a target outside the caller scope: the message names the target, not the table', async () => {
    const r = await runInProcess(['env', 'promote', 'orders', '--to', 'production'], { env: env('STEWARD') });
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toContain('production, the environment you promote to, is outside your scope');
    expect(r.stderr).not.toContain('this table is in production');
  });
});

describe('env promote of a Mode B (custody) table', () => {
  it('is refused (exit 7) with what to do instead, promoting and bundling alike, nothing written', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gds-e2e-promote-custody-'));
    const bundle = join(dir, 'crm.bundle.json');
    const tables = async () => (await server.sql('SELECT count(*)::int AS n FROM gds.tables'))[0]?.n;
    const before = await tables();
    for (const mode of [[], ['--bundle-out', bundle]]) {
      const r = await runInProcess(['env', 'promote', 'crm_contacts', '--to', 'staging', ...mode, '--json'], {
        env: cliEnv(dir),
      });
      expect(r.code, r.stderr).toBe(7);
      expect(r.stdout).toBe('');
      const error = lastError(r.stderr);
      expect(error.code).toBe('not_promotable');
      expect(error.message).toContain('Mode B');
      expect(error.message).toContain('spec-deviations');
      expect(error.suggestion).toContain('gds gate get crm_contacts -o gate1.yml');
      expect(error.suggestion).toContain('staging');
    }
    await expect(stat(bundle)).rejects.toThrow();
    expect(await tables()).toBe(before);
  });
});
