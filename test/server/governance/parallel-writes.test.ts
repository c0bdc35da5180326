// Pipelines run the same write in parallel: five or twenty identical writes of one kind started together
// must leave what one write leaves (one new version, at most one recertification request on a CERTIFIED
// table), and the others answer `changed: false` with that version. The server decides it inside the
// writing transaction, serialized per table, on PGlite and on PostgreSQL. A write computed from a version
// that has since moved answers 412 `precondition_failed` naming the current one (`If-Match`).
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
      });

      afterAll(async () => {
        await server?.close();
      });

      /**
       * Recertification requests filed on the table, counted as signals: a repeated cause updates the one
       * open request (its count) instead of filing another, so this grows by one per request-filing write.
       */
      const requests = async (tableId: string) => {
        const [row] = await server.sql<{ n: number; open: number }>(
          `SELECT COALESCE(sum(signal_count), 0)::int AS n, count(*) FILTER (WHERE status = 'OPEN')::int AS open
           FROM gds.recertification_requests WHERE table_id = $1`,
          [tableId],
        );
        expect(row?.open ?? 0).toBeLessThanOrEqual(1);
        return row?.n ?? 0;
      };

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

        it('a write computed from an older version answers 412 precondition_failed naming the current one', async () => {
          const [{ v: current } = { v: 0 }] = await server.sql<{ v: number }>(
            'SELECT gate1_version AS v FROM gds.tables WHERE id = $1',
            [customers],
          );
          const stale = await server.request('PUT', `/api/tables/${customers}/gate1`, {
            token: owner,
            body: { content: GATE.replace('id_present', 'id_present_stale') },
            headers: { 'if-match': String(current - 1) },
          });
          expect(stale.status).toBe(412);
          expect(stale.body.error).toMatchObject({
            code: 'precondition_failed',
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

      const count = async (sql: string, params: unknown[]) =>
        (await server.sql<{ n: number }>(sql, params))[0]?.n ?? 0;

      const definition = (table: string, source: string, context: string) =>
        `table: ${table}\nsource: ${source}\ndecision_context: ${context}\ncolumns:\n  - { name: id, type: text }\n`;

      const devConnector = () => server.ready.connectors.find((c) => c.name === 'warehouse-dev')?.id;

      describe('definition replacement (POST /api/artifacts and /api/workspace/definitions with replaceId)', () => {
        let products: string;
        let definer: string;

        beforeAll(async () => {
          const pushed = await server.request('POST', '/api/artifacts', {
            token: owner,
            body: {
              filename: 'products.yml',
              content: definition('products', 'analytics_dev.products', 'v1'),
            },
          });
          expect(pushed.status).toBe(202);
          products = pushed.body.governanceId;
          definer = (
            await server.issueToken('ADMIN', {
              name: 'ci-definer',
              env: '*',
              scopes: ['workspace:write:definition'],
            })
          ).tokens.accessToken;
        });

        for (const [n, path] of [
          [5, '/api/artifacts'],
          [20, '/api/artifacts'],
          [5, '/api/workspace/definitions'],
          [20, '/api/workspace/definitions'],
        ] as const) {
          it(`${n} identical replacements through ${path} on a CERTIFIED table: one version, one request`, async () => {
            await server.sql(`UPDATE gds.tables SET state = 'CERTIFIED' WHERE id = $1`, [products]);
            const [{ v: before } = { v: 0 }] = await server.sql<{ v: number }>(
              'SELECT definition_version AS v FROM gds.tables WHERE id = $1',
              [products],
            );
            const requestsBefore = await requests(products);
            const body = {
              filename: 'products.yml',
              content: definition('products', 'analytics_dev.products', `${path} ${n}`),
              replaceId: products,
              ...(path === '/api/workspace/definitions'
                ? { mimeType: 'yaml', connectorId: devConnector() }
                : {}),
            };
            const token = path === '/api/artifacts' ? owner : definer;
            const answers = await parallel(n, () =>
              server.request('POST', path, { token, body, headers: { 'if-match': String(before) } }),
            );
            const statuses = answers.map((a) => a.status).sort();
            expect(statuses).toEqual([...Array(n - 1).fill(200), 202]);
            expect(answers.filter((a) => a.body.changed === false)).toHaveLength(n - 1);
            expect(new Set(answers.map((a) => a.body.definitionVersion))).toEqual(new Set([before + 1]));
            expect((await requests(products)) - requestsBefore).toBe(1);
          });
        }

        for (const path of ['/api/artifacts', '/api/workspace/definitions'] as const) {
          it(`a replacement through ${path} computed from an older definition version answers 412 precondition_failed`, async () => {
            const [{ v: current } = { v: 0 }] = await server.sql<{ v: number }>(
              'SELECT definition_version AS v FROM gds.tables WHERE id = $1',
              [products],
            );
            const stale = await server.request('POST', path, {
              token: path === '/api/artifacts' ? owner : definer,
              body: {
                filename: 'products.yml',
                content: definition('products', 'analytics_dev.products', 'stale'),
                replaceId: products,
                ...(path === '/api/workspace/definitions'
                  ? { mimeType: 'yaml', connectorId: devConnector() }
                  : {}),
              },
              headers: { 'if-match': `"${current - 1}"` },
            });
            expect(stale.status).toBe(412);
            expect(stale.body.error).toMatchObject({
              code: 'precondition_failed',
              details: { currentVersion: current, expectedVersion: current - 1 },
            });
            const [{ v: after } = { v: 0 }] = await server.sql<{ v: number }>(
              'SELECT definition_version AS v FROM gds.tables WHERE id = $1',
              [products],
            );
            expect(after).toBe(current);
          });
        }
      });

      describe('contract intent (PATCH .../semantic-contract)', () => {
        const intentAudits = () =>
          count(
            `SELECT count(*)::int AS n FROM gds.audit_log WHERE table_id = $1 AND action = 'CONTRACT_INTENT_SET'`,
            [customers],
          );

        for (const n of [5, 20]) {
          it(`${n} identical intents: one revision, one audit entry, the others changed: false`, async () => {
            const live = await server.request('GET', `/api/tables/${customers}/semantic-contract`, {
              token: owner,
            });
            const revision: number = live.status === 200 ? live.body.contract.revision : 0;
            const auditsBefore = await intentAudits();
            const body = { intent: 'METRIC', meaning: `parallel ${n}` };
            const answers = await parallel(n, () =>
              server.request('PATCH', `/api/tables/${customers}/semantic-contract`, {
                token: owner,
                body,
                headers: { 'if-match': String(revision) },
              }),
            );
            expect(answers.map((a) => a.status)).toEqual(Array(n).fill(200));
            expect(answers.filter((a) => a.body.changed === true)).toHaveLength(1);
            expect(new Set(answers.map((a) => a.body.contract.revision))).toEqual(new Set([revision + 1]));
            expect((await intentAudits()) - auditsBefore).toBe(1);
          });
        }

        it('an intent computed from an older revision answers 412 precondition_failed', async () => {
          const live = await server.request('GET', `/api/tables/${customers}/semantic-contract`, {
            token: owner,
          });
          const revision: number = live.body.contract.revision;
          const stale = await server.request('PATCH', `/api/tables/${customers}/semantic-contract`, {
            token: owner,
            body: { meaning: 'stale' },
            headers: { 'if-match': String(revision - 1) },
          });
          expect(stale.status).toBe(412);
          expect(stale.body.error).toMatchObject({
            code: 'precondition_failed',
            details: { currentVersion: revision, expectedVersion: revision - 1 },
          });
        });
      });

      describe('promotion (POST .../promotions)', () => {
        const promotedAudits = () =>
          count(`SELECT count(*)::int AS n FROM gds.audit_log WHERE action = 'TABLE_PROMOTED'`, []);

        for (const n of [5, 20]) {
          it(`${n} identical promotions: one landing, one audit entry, the others changed: false`, async () => {
            const orders = server.table('orders').id;
            // Each round promotes something new: other rules on the source table.
            const applied = await server.request('PUT', `/api/tables/${orders}/gate1`, {
              token: owner,
              body: { content: GATE.replace('id_present', `promoted_${n}`) },
            });
            expect(applied.status).toBe(200);
            const [target] = await server.sql<{ id: string }>(
              `SELECT id FROM gds.tables WHERE name = 'orders_staging' AND active`,
            );
            const before = await promotedAudits();
            const answers = await parallel(n, () =>
              server.request('POST', `/api/tables/${orders}/promotions`, {
                token: owner,
                body: { to: 'staging', ...(target ? { replaceId: target.id } : {}) },
              }),
            );
            const statuses = answers.map((a) => a.status).sort();
            expect(statuses).toEqual([...Array(n - 1).fill(200), 202]);
            expect(answers.filter((a) => a.body.changed === false)).toHaveLength(n - 1);
            expect(new Set(answers.map((a) => a.body.tableId)).size).toBe(1);
            expect((await promotedAudits()) - before).toBe(1);
            expect(
              await count(
                `SELECT count(*)::int AS n FROM gds.tables WHERE name = 'orders_staging' AND active`,
                [],
              ),
            ).toBe(1);
            expect(
              await count(
                `SELECT count(*)::int AS n FROM gds.gate1_versions WHERE table_id = $1 AND content LIKE $2`,
                [answers[0]?.body.tableId, `%promoted_${n}%`],
              ),
            ).toBe(1);
          });
        }
      });

      describe('registration races answer 409 naming the table registered', () => {
        for (const [path, name] of [
          ['/api/workspace/definitions', 'categorydim'],
          ['/api/artifacts', 'productsdim'],
        ] as const) {
          it(`10 parallel registrations of ${name} through ${path}: one 202, nine 409 with details.existingId`, async () => {
            const token =
              path === '/api/artifacts'
                ? owner
                : (
                    await server.issueToken('ADMIN', {
                      name: `race-${name}`,
                      env: '*',
                      scopes: ['workspace:write:definition'],
                    })
                  ).tokens.accessToken;
            const body = {
              filename: `${name}.yml`,
              content: definition(name, `analytics_dev.${name}`, 'race'),
              mimeType: 'yaml',
              connectorId: devConnector(),
            };
            const answers = await parallel(10, () => server.request('POST', path, { token, body }));
            const registered = answers.filter((a) => a.status === 202);
            expect(registered).toHaveLength(1);
            const id = registered[0]?.body.governanceId as string;
            const refused = answers.filter((a) => a.status !== 202);
            expect(refused.map((a) => a.status)).toEqual(Array(9).fill(409));
            for (const r of refused) {
              expect(r.body.error).toMatchObject({ code: 'name_conflict', details: { existingId: id } });
            }
            expect(
              await count(`SELECT count(*)::int AS n FROM gds.tables WHERE lower(name) = $1 AND active`, [
                name,
              ]),
            ).toBe(1);
          });
        }
      });
    },
  );
}
