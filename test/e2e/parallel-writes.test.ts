// CI runs the same gds command on several branches at once. Five `gds gate apply T -f same.yml`
// processes started together: one applies, four say "No change", and the service holds one version
// (and, the table being CERTIFIED, at most one recertification request), on PGlite and on PostgreSQL.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli } from '../cli/helpers/cli-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import { needs, noPostgres } from '../helpers/skip.js';

const GATE = 'customPredicates:\n  - name: id_present\n    sql: id IS NOT NULL\n    severity: HARD_FAIL\n';

for (const database of ['pglite', 'postgres'] as const) {
  describe(
    `five gds gate apply processes at once on ${database}`,
    needs(database === 'postgres' ? noPostgres : undefined),
    () => {
      let server: TestServer;
      let dir: string;

      beforeAll(async () => {
        [server] = await Promise.all([startTestServer({ database, jobs: 'manual' }), ensureBuilt()]);
        dir = await mkdtemp(join(tmpdir(), 'gds-e2e-parallel-'));
        await writeFile(join(dir, 'gate1.yml'), GATE);
      });

      afterAll(async () => {
        await server?.close();
        if (dir) await rm(dir, { recursive: true, force: true });
      });

      it('one "Applied", four "No change", one version and one recertification request on the server', async () => {
        const table = server.table('customers').id;
        await server.sql(`UPDATE gds.tables SET state = 'CERTIFIED' WHERE id = $1`, [table]);
        const token = server.user('OWNER').cliToken;
        const results = await Promise.all(
          Array.from({ length: 5 }, () =>
            runCli(['gate', 'apply', table, '-f', join(dir, 'gate1.yml')], {
              env: {
                GDS_CONFIG_DIR: join(dir, 'config'),
                GDS_SECRET_STORAGE: 'file',
                SERVICE_API_URL: server.url,
                SERVICE_TOKEN: token,
              },
            }),
          ),
        );
        for (const r of results) expect(r, r.stderr).toMatchObject({ code: 0 });
        const applied = results.filter((r) => r.stderr.startsWith('✓ Applied '));
        const unchanged = results.filter((r) => r.stderr.startsWith('✓ No change'));
        expect(applied).toHaveLength(1);
        expect(applied[0]?.stdout).toBe('');
        expect(applied[0]?.stderr).toContain('as gate1.yml v1.');
        for (const r of unchanged) expect(r.stdout).toBe('');
        expect(unchanged).toHaveLength(4);
        for (const r of unchanged)
          expect(r.stderr).toBe(`✓ No change: gate1.yml of ${table} is already v1.\n`);
        const versions = await server.sql('SELECT version FROM gds.gate1_versions WHERE table_id = $1', [
          table,
        ]);
        expect(versions).toEqual([{ version: 1 }]);
        const requests = await server.sql(
          `SELECT id FROM gds.recertification_requests WHERE table_id = $1 AND status = 'OPEN'`,
          [table],
        );
        expect(requests).toHaveLength(1);
      });

      it('ten gds definitions push of one new name: one registers, nine exit 6 naming its id and --replace', async () => {
        const definer = (
          await server.issueToken('ADMIN', {
            name: 'ci-definer',
            env: '*',
            scopes: ['workspace:write:definition'],
          })
        ).tokens.accessToken;
        const connector = server.ready.connectors.find((c) => c.name === 'warehouse-dev')?.id ?? '';
        await writeFile(
          join(dir, 'categorydim.yml'),
          'table: categorydim\nsource: analytics_dev.categorydim\ncolumns:\n  - { name: category_id, type: text }\n',
        );
        const results = await Promise.all(
          Array.from({ length: 10 }, () =>
            runCli(
              ['definitions', 'push', join(dir, 'categorydim.yml'), '--connector', connector, '--json'],
              {
                env: {
                  GDS_CONFIG_DIR: join(dir, 'config'),
                  GDS_SECRET_STORAGE: 'file',
                  SERVICE_API_URL: server.url,
                  SERVICE_TOKEN: definer,
                },
              },
            ),
          ),
        );
        const registered = results.filter((r) => r.code === 0);
        expect(registered).toHaveLength(1);
        const id = (JSON.parse(registered[0]?.stdout ?? '{}') as { governanceId: string }).governanceId;
        expect(id).toMatch(/^tbl_/);
        const refused = results.filter((r) => r.code !== 0);
        expect(refused.map((r) => r.code)).toEqual(Array(9).fill(6));
        for (const r of refused) {
          expect(r.stdout).toBe('');
          const { error } = JSON.parse(r.stderr.trim()) as {
            error: { code: string; suggestion: string; details: { existingId: string } };
          };
          expect(error.code).toBe('name_conflict');
          expect(error.details.existingId).toBe(id);
          expect(error.suggestion).toContain(`--replace ${id}`);
        }
      });
    },
  );
}
