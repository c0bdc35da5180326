// Pipelines run the same write in parallel: five or twenty identical writes of one kind started together
// must leave what one write leaves (one new version, at most one recertification request on a CERTIFIED
// table), and the others answer `changed: false` with that version. The server decides it inside the
// writing transaction, serialized per table, on PGlite and on PostgreSQL. A write computed from a version
// that has since moved answers 409 `version_conflict` naming the current one (`If-Match`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import { needs, noPostgres } from '../../helpers/skip.js';

const GATE = 'customPredicates:\n  - name: id_present\n    sql: id IS NOT NULL\n    severity: HARD_FAIL\n';

for (const database of ['pglite', 'postgres'] as const) {
  describe(
    `parallel identical writes on ${database}`,
    needs(database === 'postgres' ? noPostgres : undefined),
    () => {
      let server: TestServer;
      let owner: string;
      let customers: string;

      beforeAll(async () => {
        server = await startTestServer({ database, jobs: 'manual' });
        owner = server.user('OWNER').cliToken;
        customers = server.table('customers').id;
      }, 120_000);

      afterAll(async () => {
        await server?.close();
      });

      const requests = async (tableId: string) =>
        (
          await server.sql<{ n: number }>(
            `SELECT count(*)::int AS n FROM gds.recertification_requests WHERE table_id = $1`,
            [tableId],
          )
        )[0]?.n ?? 0;

      const parallel = <T>(n: number, fn: (i: number) => Promise<T>) =>
        Promise.all(Array.from({ length: n }, (_, i) => fn(i)));

      describe('gate1.yml (PUT .../gate1)', () => {
        for (const n of [5, 20]) {
          it(`${n} identical applies on a CERTIFIED table: one version, one recertification request`, async () => {
            await server.sql(`UPDATE gds.tables SET state = 'CERTIFIED' WHERE id = $1`, [customers]);
            const [{ v: before } = { v: 0 }] = await server.sql<{ v: number }>(
              'SELECT gate1_version AS v FROM gds.tables WHERE id = $1',
              [customers],
            );
            const requestsBefore = await requests(customers);
            const body = { content: GATE.replace('id_present', `id_present_${n}`) };
            const answers = await parallel(n, () =>
              server.request('PUT', `/api/tables/${customers}/gate1`, {
                token: owner,
                body,
                headers: { 'if-match': String(before) },
              }),
            );
            expect(answers.map((a) => a.status)).toEqual(Array(n).fill(200));
            const changed = answers.filter((a) => a.body.changed !== false);
            expect(changed).toHaveLength(1);
            expect(new Set(answers.map((a) => a.body.version))).toEqual(new Set([before + 1]));
            const versions = await server.sql<{ n: number }>(
              'SELECT count(*)::int AS n FROM gds.gate1_versions WHERE table_id = $1 AND version > $2',
              [customers, before],
            );
            expect(versions[0]?.n).toBe(1);
            expect((await requests(customers)) - requestsBefore).toBeLessThanOrEqual(1);
          });
        }

        it('a write computed from an older version answers 409 version_conflict naming the current one', async () => {
          const [{ v: current } = { v: 0 }] = await server.sql<{ v: number }>(
            'SELECT gate1_version AS v FROM gds.tables WHERE id = $1',
            [customers],
          );
          const stale = await server.request('PUT', `/api/tables/${customers}/gate1`, {
            token: owner,
            body: { content: GATE.replace('id_present', 'id_present_stale') },
            headers: { 'if-match': String(current - 1) },
          });
          expect(stale.status).toBe(409);
          expect(stale.body.error).toMatchObject({
            code: 'version_conflict',
            details: { currentVersion: current, expectedVersion: current - 1 },
          });
          expect(stale.body.error.message).toContain(`v${current}`);
          const bad = await server.request('PUT', `/api/tables/${customers}/gate1`, {
            token: owner,
            body: { content: GATE },
            headers: { 'if-match': 'yesterday' },
          });
          expect(bad.status).toBe(400);
          expect(bad.body.error.code).toBe('invalid_if_match');
        });
      });
    },
  );
}
