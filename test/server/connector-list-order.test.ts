// `gds plan` says which promotions would land, and where, by the first ACTIVE connector of the target
// environment in `GET /api/connectors`; the service promotes onto the environment's oldest ACTIVE connector,
// ties by id (targetConnector). The list is in that order, so two connectors of one environment created at
// the same moment are not taken in one order by the plan and the other by the promotion.
import { beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, useEngineServer } from '../helpers/engines.js';
import { needs } from '../helpers/skip.js';

describe.each(ENGINES)('the connector list’s order ($engine)', (engine) => {
  const serverOf = useEngineServer(engine, { jobs: 'manual' });

  beforeAll(async () => {
    if (engine.skip !== undefined) return;
    const server = serverOf();
    // Two connectors of qa made at one moment (each with the orders a promotion lands on). By name, qa-a (con_qa_z) comes first; by id,
    // qa-b (con_qa_a).
    for (const schema of ['analytics_qa_z', 'analytics_qa_a']) {
      await server.sql(`CREATE SCHEMA ${schema}`);
      await server.sql(`CREATE TABLE ${schema}.orders (LIKE analytics_dev.orders)`);
    }
    await server.sql(
      `INSERT INTO gds.connectors (id, workspace_id, name, type, status, environment_label, warehouse_schema,
                                   created_at)
       VALUES ('con_qa_z', $1, 'qa-a', 'postgres', 'ACTIVE', 'qa', 'analytics_qa_z', $2),
              ('con_qa_a', $1, 'qa-b', 'postgres', 'ACTIVE', 'qa', 'analytics_qa_a', $2)`,
      [server.ready.workspaceId, '2026-01-01T00:00:00.000Z'],
    );
    await server.sql(
      `UPDATE gds.memberships SET env_scope = env_scope || '["qa"]'::jsonb
        WHERE workspace_id = $1 AND user_id = $2`,
      [server.ready.workspaceId, server.user('OWNER').userId],
    );
  });

  it(
    'lists the connectors oldest first, ties by id: the first ACTIVE one of an environment is where a promotion lands',
    needs(engine.skip),
    async () => {
      const server = serverOf();
      const token = server.user('OWNER').accessToken;
      const listed = await server.request('GET', '/api/connectors', { token });
      expect(listed.status).toBe(200);
      const qa = listed.body.connectors.filter(
        (c: { environmentLabel: string; status: string }) =>
          c.environmentLabel === 'qa' && c.status === 'ACTIVE',
      );
      expect(qa.map((c: { id: string }) => c.id)).toEqual(['con_qa_a', 'con_qa_z']);

      const promoted = await server.request('POST', `/api/tables/${server.table('orders').id}/promotions`, {
        token,
        body: { to: 'qa' },
      });
      expect(promoted.body.error).toBeUndefined();
      expect(promoted.status).toBe(202);
      expect(promoted.body).toMatchObject({ environmentLabel: 'qa', connectorId: qa[0].id });
      const [landed] = await server.sql('SELECT source FROM gds.tables WHERE id = $1', [
        promoted.body.tableId,
      ]);
      expect(landed).toEqual({ source: 'analytics_qa_a.orders' });
    },
  );
});
