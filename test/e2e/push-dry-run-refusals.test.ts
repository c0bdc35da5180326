// `gds push --dry-run` says what the push would say: a replacement the service refuses (here 404
// `replace_environment_mismatch`: the connector is in another environment than the replaced table) is the
// same refusal under --dry-run, with the same exit code and error line, and neither writes anything. The
// dry run asks the service (POST /api/artifacts/dry-run) rather than knowing the rule itself; what it is
// allowed to do is still previewed as a diff, and an unknown connector is the same 404 both ways.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../cli/helpers/cli-process.js';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { ENGINES } from '../helpers/engines.js';
import { runAs, runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import { needs } from '../helpers/skip.js';

describe.each(ENGINES)('push --dry-run against push on $engine', ({ postgres, skip }) => {
  let server: TestServer;
  let dir = '';
  let orders = '';
  const connector: Record<string, string> = {};

  beforeAll(async () => {
    if (skip !== undefined) return;
    [server] = await Promise.all([
      startTestServer({ jobs: 'manual', ...(postgres ? { database: 'postgres' as const } : {}) }),
      ensureBuilt(),
    ]);
    dir = await mkdtemp(join(tmpdir(), 'gds-push-dry-run-'));
    orders = server.table('orders').id;
    for (const c of server.ready.connectors) connector[c.environmentLabel] = c.id;
  });
  afterAll(async () => {
    await server?.close();
  });

  const gds = (args: string[]): Promise<CliResult> => runAs(server, 'ADMIN', dir, args);

  const artifact = async (schema: string): Promise<string> => {
    const path = join(dir, `orders-${schema}.yml`);
    const columns = ['id', 'total', 'placed_on'].map((c) => `  - name: ${c}`);
    await writeFile(
      path,
      ['table: orders', `source: ${schema}.orders`, 'columns:', ...columns, ''].join('\n'),
    );
    return path;
  };

  /** The --json error line, less which request answered it (the dry run's own path and id). */
  const refusal = (stderr: string) => {
    const { error } = JSON.parse(stderr) as { error: { details?: Record<string, unknown> } };
    const { request: _request, requestId: _requestId, ...details } = error.details ?? {};
    return { ...error, details };
  };

  /** What a refused write could have left behind: the table's definition, its audit entries, its jobs. */
  const written = async () => ({
    table: await server.sql(
      'SELECT environment_label, connector_id, definition_version, state FROM gds.tables WHERE id = $1',
      [orders],
    ),
    audit: await server.sql('SELECT count(*)::int AS n FROM gds.audit_log WHERE table_id = $1', [orders]),
    jobs: await server.sql('SELECT count(*)::int AS n FROM gds.jobs WHERE table_id = $1', [orders]),
  });

  it(
    'refuses a replacement from another environment as the push does: 404, exit 5, nothing written',
    needs(skip),
    async () => {
      const file = await artifact('analytics_prod');
      const args = ['push', file, '--connector', connector.production ?? '', '--replace', orders];
      const before = await written();
      const dry = await gds([...args, '--dry-run', '--json']);
      expect(await written()).toEqual(before);
      const real = await gds([...args, '--json']);
      expect(dry.code, dry.stderr).toBe(5);
      expect(real.code).toBe(5);
      expect(dry.stdout).toBe('');
      expect(refusal(dry.stderr)).toEqual(refusal(real.stderr));
      expect(refusal(dry.stderr)).toMatchObject({ code: 'replace_environment_mismatch' });
      const human = await gds([...args, '--dry-run']);
      expect(human.code).toBe(5);
      expect(human.stdout).toBe('');
      expect(human.stderr).toContain(`gds env promote ${orders} --to production`);
      // The real push's refusal is audited as a refused attempt; the dry run's is not.
      const after = await written();
      expect(after.table).toEqual(before.table);
      expect(after.jobs).toEqual(before.jobs);
    },
  );

  it('refuses an unknown connector as the push does: exit 5, nothing written', needs(skip), async () => {
    const file = await artifact('analytics_dev');
    const args = ['push', file, '--connector', 'con_missing', '--replace', orders, '--json'];
    const before = await written();
    const dry = await gds([...args, '--dry-run']);
    const real = await gds(args);
    expect(dry.code, dry.stderr).toBe(5);
    expect(refusal(dry.stderr)).toEqual(refusal(real.stderr));
    expect(await written()).toEqual(before);
  });

  it('previews a replacement the service would take, writing nothing', needs(skip), async () => {
    const file = await artifact('analytics_dev');
    const before = await written();
    const dry = await gds([
      'push',
      file,
      '--connector',
      connector.dev ?? '',
      '--replace',
      orders,
      '--dry-run',
    ]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^\+ {2}- name: placed_on$/m);
    expect(await written()).toEqual(before);
  });
  it(
    'previews offline when the service cannot be reached, saying it was not asked',
    needs(skip),
    async () => {
      const file = await artifact('analytics_dev');
      const offline = await runInProcess(['push', file, '--dry-run', '--base', 'http://127.0.0.1:9'], {
        env: {
          GDS_CONFIG_DIR: join(dir, 'config-offline'),
          GDS_SECRET_STORAGE: 'file',
          SERVICE_TOKEN: 'cli_x',
        },
      });
      expect(offline.code, offline.stderr).toBe(0);
      expect(offline.stdout).toMatch(/^\+ {2}- name: placed_on$/m);
      expect(offline.stderr).toContain('The service was not reached');
      expect(offline.stderr).toContain('whether the service would take the push was not asked');
    },
  );
});
