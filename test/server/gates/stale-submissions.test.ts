// staleSubmissions (GET /api/held-tables' `staleSubmission`, `gds plan --submit`): of the tables given, those
// whose newest submit proof is not at the table's current versions, or that have none; a dry run's proof and
// an older proof do not count. A held-tables read that plans no submission (`staleSubmission=false`) is not
// told, and the service does not work it out.
import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../../src/server/db/handle.js';
import { staleSubmissions } from '../../../src/server/gates/proofs.js';
import { ENGINES, useEngineServer } from '../../helpers/engines.js';
import { needs } from '../../helpers/skip.js';

describe.each(ENGINES)('staleSubmissions on $engine', ({ postgres, skip }) => {
  const server = useEngineServer({ postgres, skip }, { jobs: 'manual' });

  /** A proof of `tableId` at its current versions, `behind` data versions before them. */
  const prove = (tableId: string, id: string, kind: 'run' | 'submit', behind: number) =>
    server().sql(
      `INSERT INTO gds.gate_proofs (id, table_id, kind, passed, results, failed_predicates, sample,
         definition_version, gate1_version, data_version, created_by, created_at)
       SELECT $2, t.id, $3, true, '[]', '[]', NULL, t.definition_version, t.gate1_version, t.data_version - $4,
              $5, now()
         FROM gds.tables t WHERE t.id = $1`,
      [tableId, id, kind, behind, server().user('OWNER').userId],
    );

  it('names the tables without a submission or whose newest one is stale', needs(skip), async () => {
    const db: Queryable = {
      query: (sql, params) => server().sql(sql, params),
      exec: async (sql) => void (await server().sql(sql)),
    };
    const [none, fresh, staleNewest, freshNewest, runOnly] = [
      'customers',
      'orders',
      'customers_production',
      'crm_contacts',
      'legacy_leads',
    ].map((name) => server().table(name).id) as [string, string, string, string, string];
    await prove(fresh, 'prf_a', 'submit', 0);
    await prove(staleNewest, 'prf_b1', 'submit', 0);
    await prove(staleNewest, 'prf_b2', 'submit', 1);
    await prove(freshNewest, 'prf_c1', 'submit', 1);
    await prove(freshNewest, 'prf_c2', 'submit', 0);
    await prove(runOnly, 'prf_d', 'run', 0);
    expect(await staleSubmissions(db, [])).toEqual(new Set());
    expect(await staleSubmissions(db, [none, fresh, staleNewest, freshNewest, runOnly])).toEqual(
      new Set([none, staleNewest, runOnly]),
    );
    expect(await staleSubmissions(db, [fresh, freshNewest])).toEqual(new Set());
  });
  it(
    'is left out of GET /api/held-tables under staleSubmission=false, and answered by default',
    needs(skip),
    async () => {
      const orders = server().table('orders').id;
      await server().sql(`UPDATE gds.tables SET state = 'PENDING_REVIEW' WHERE id = $1`, [orders]);
      const token = server().user('OWNER').accessToken;
      const staleOf = async (query: string) => {
        const page = await server().request('GET', `/api/held-tables?environment=dev${query}`, { token });
        expect(page.status, JSON.stringify(page.body)).toBe(200);
        const rows = (page.body as { tables: Array<Record<string, unknown>> }).tables;
        return rows.find((t) => t['id'] === orders);
      };
      // orders' newest submission (prf_a, above) is at its versions.
      expect(await staleOf('')).toMatchObject({ state: 'PENDING_REVIEW', staleSubmission: false });
      expect(await staleOf('&staleSubmission=true')).toMatchObject({ staleSubmission: false });
      const without = await staleOf('&staleSubmission=false');
      expect(without).toMatchObject({ id: orders, state: 'PENDING_REVIEW' });
      expect(without).not.toHaveProperty('staleSubmission');
      const refused = await server().request('GET', '/api/held-tables?environment=dev&staleSubmission=no', {
        token,
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({
        code: 'invalid_query',
        details: { parameter: 'staleSubmission' },
      });
    },
  );
});
