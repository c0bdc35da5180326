// The recertification signal (§4.8) in a workspace where two teams' relations share a name in two schemas
// (analytics.purchases, crm.purchases): a signal naming a relation by its schema reaches only a table over that
// relation, never the other team's table of that name; a bare name two tables' relations answer to is
// reported, not guessed. On PGlite and on PostgreSQL (GDS_TEST_DATABASE_URL).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import { holdTableRow } from '../../helpers/row-holder.js';
import { needs, noPostgres } from '../../helpers/skip.js';

const run = (...relations: string[]) => ({
  metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json' },
  results: relations.map((relation, i) => ({
    status: 'success',
    unique_id: `model.team${i}.purchases`,
    relation_name: relation,
  })),
  elapsed_time: 1,
  args: { which: 'run' },
});

describe.each([
  { engine: 'pglite' as const, skip: undefined },
  { engine: 'postgres' as const, skip: noPostgres },
])('recertify across schemas ($engine)', ({ engine, skip }) => {
  describe('', needs(skip), () => {
    let server: TestServer;
    let token: string;
    let connectors: Record<string, string>;

    const register = async (name: string, source: string) => {
      const schema = source.split('.')[0] ?? '';
      const response = await server.request('POST', '/api/artifacts', {
        token: server.user('ADMIN').cliToken,
        body: {
          filename: `${name}.yml`,
          content: `table: ${name}\nsource: ${source}\ncolumns:\n  - name: id\n`,
          connectorId: connectors[schema],
        },
      });
      expect(response.status).toBe(202);
      const id = response.body.governanceId as string;
      await server.sql(`UPDATE gds.tables SET state = 'CERTIFIED' WHERE id = $1`, [id]);
      return id;
    };

    /** Everything a signal could change about a table: state, version, checksum, requests, audit, notices. */
    const footprint = async (id: string) => ({
      table: await server.sql(
        'SELECT state, data_version, definition_checksum FROM gds.tables WHERE id = $1',
        [id],
      ),
      requests: await server.sql(
        'SELECT count(*)::int AS n FROM gds.recertification_requests WHERE table_id = $1',
        [id],
      ),
      audit: await server.sql('SELECT count(*)::int AS n FROM gds.audit_log WHERE table_id = $1', [id]),
      notifications: await server.sql(
        'SELECT count(*)::int AS n FROM gds.notifications WHERE table_id = $1',
        [id],
      ),
    });

    const signal = (body: object) =>
      server.request('POST', '/api/workspace/recertify', {
        token,
        body: { ...body, environmentLabel: 'dev' },
      });

    beforeAll(async () => {
      server = await startTestServer({ database: engine, jobs: 'manual' });
      connectors = {};
      for (const schema of ['analytics', 'crm']) {
        await server.sql(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
        await server.sql(`CREATE TABLE ${schema}.purchases (id integer)`);
        connectors[schema] = `con_${schema}`;
        await server.sql(
          `INSERT INTO gds.connectors (id, workspace_id, name, type, status, environment_label, warehouse_schema, created_at)
           VALUES ($2, $1, $3, 'postgres', 'ACTIVE', 'dev', $4, now())`,
          [server.ready.workspaceId, `con_${schema}`, `${schema}-dev`, schema],
        );
      }
      token = (
        await server.issueToken('ADMIN', {
          name: 'pipeline',
          env: '*',
          scopes: ['workspace:write:recertify'] as never,
        })
      ).tokens.accessToken;
    });

    afterAll(async () => {
      await server?.close();
    });

    it('a rebuilt analytics.purchases with no table over it leaves the crm team’s table purchases untouched', async () => {
      const crm = await register('purchases', 'crm.purchases');
      const before = await footprint(crm);
      for (const body of [
        { runResults: run('"dev"."analytics"."purchases"') },
        {
          runResults: run('"dev"."analytics"."purchases"'),
          manifest: {
            nodes: {
              'model.team0.purchases': {
                resource_type: 'model',
                schema: 'analytics',
                name: 'purchases',
                checksum: { name: 'sha256', checksum: 'c-analytics' },
              },
            },
          },
        },
        { tables: [{ name: 'purchases', schema: 'analytics' }] },
      ]) {
        const response = await signal(body);
        expect(response.status).toBe(200);
        expect(response.body).toEqual({
          environmentLabel: 'dev',
          submitted: 1,
          governed: 0,
          // Said as the relation it was: analytics.purchases, not governed.
          outcomes: [
            { table: 'purchases', schema: 'analytics', outcome: 'not_governed', driftDetected: false },
          ],
        });
      }
      expect(await footprint(crm)).toEqual(before);
    });

    it('with a table over analytics.purchases, only that table hears of its rebuild', async () => {
      const crm =
        (await server.sql<{ id: string }>("SELECT id FROM gds.tables WHERE name = 'purchases'"))[0]?.id ?? '';
      const analytics = await register('analytics_purchases', 'analytics.purchases');
      const before = await footprint(crm);
      const version = async () =>
        Number(
          (await server.sql('SELECT data_version FROM gds.tables WHERE id = $1', [analytics]))[0]
            ?.data_version,
        );
      const start = await version();
      const response = await signal({ runResults: run('"dev"."analytics"."purchases"') });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        governed: 1,
        outcomes: [{ table: 'purchases', schema: 'analytics', outcome: 'recert_filed' }],
      });
      expect(await version()).toBe(start + 1);
      expect(await footprint(crm)).toEqual(before);
    });

    it(
      'a signal of analytics.purchases waits for no lock on the crm team’s table purchases',
      needs(
        engine === 'postgres'
          ? undefined
          : 'PGlite runs one transaction at a time: none commits while another is held',
      ),
      async () => {
        const crm =
          (await server.sql<{ id: string }>("SELECT id FROM gds.tables WHERE name = 'purchases'"))[0]?.id ??
          '';
        // The crm team's table is held (a certify of it committing, say) while analytics' run is signalled.
        const holder = await holdTableRow(server, crm);
        try {
          const answered = signal({ runResults: run('"dev"."analytics"."purchases"') });
          const blocked = holder.waitForBlocked(1).then(() => 'waited on the crm table' as const);
          blocked.catch(() => undefined);
          const first = await Promise.race([answered.then(() => 'answered' as const), blocked]);
          expect(first).toBe('answered');
          expect((await answered).body).toMatchObject({
            governed: 1,
            outcomes: [{ table: 'purchases', schema: 'analytics', outcome: 'recert_filed' }],
          });
        } finally {
          await holder.client.query('ROLLBACK');
          await holder.end();
        }
      },
    );

    it('a run that rebuilt both relations signals both tables, each outcome naming its relation’s schema', async () => {
      const ids = (
        await server.sql<{ id: string }>(
          "SELECT id FROM gds.tables WHERE name IN ('analytics_purchases', 'purchases') AND active ORDER BY name",
        )
      ).map((r) => r.id);
      const versions = async () =>
        (
          await server.sql<{ data_version: number }>(
            'SELECT data_version FROM gds.tables WHERE id = ANY($1) ORDER BY name',
            [ids],
          )
        ).map((r) => Number(r.data_version));
      const before = await versions();
      const response = await signal({
        runResults: run('"dev"."crm"."purchases"', '"dev"."analytics"."purchases"'),
      });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        submitted: 2,
        governed: 2,
        outcomes: [
          { table: 'purchases', schema: 'crm', outcome: 'recert_filed' },
          { table: 'purchases', schema: 'analytics', outcome: 'recert_filed' },
        ],
      });
      expect(await versions()).toEqual(before.map((v) => v + 1));
    });

    it('a bare name two tables’ relations answer to (and no table is named) is reported, not guessed', async () => {
      // Both tables are over a relation named shipments, neither is named shipments: which one a pipeline means
      // by "shipments" is not known, so neither is signalled and the outcome names both relations.
      for (const schema of ['analytics', 'crm'])
        await server.sql(`CREATE TABLE ${schema}.shipments (id integer)`);
      const a = await register('analytics_shipments', 'analytics.shipments');
      const c = await register('crm_shipments', 'crm.shipments');
      const before = [await footprint(a), await footprint(c)];
      const response = await signal({ tables: ['shipments'] });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        environmentLabel: 'dev',
        submitted: 1,
        governed: 0,
        outcomes: [
          {
            table: 'shipments',
            outcome: 'not_governed',
            driftDetected: false,
            ambiguous: ['analytics.shipments', 'crm.shipments'],
          },
        ],
      });
      expect([await footprint(a), await footprint(c)]).toEqual(before);
      // Named with its schema, each is found.
      const named = await signal({ tables: [{ name: 'shipments', schema: 'crm' }] });
      expect(named.body).toMatchObject({
        governed: 1,
        outcomes: [{ table: 'shipments', schema: 'crm', outcome: 'recert_filed' }],
      });
      expect((await footprint(a)).table).toEqual(before[0]?.table);
    });
  });
});
