// §2.11: "The 6 baseline Gate 1 predicates always run on certification". A warehouse changes outside the
// service: rows written straight into it after `gate submit` leave the proof fresh (no data-plane write
// bumped the data version), so certify runs the checks again on the data as it is now and refuses (422,
// naming the failed checks) when one fails: no version, no view, no TABLE_CERTIFIED, still PENDING_REVIEW.
// On PGlite and, when GDS_TEST_DATABASE_URL is set, on a real PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { pushDevDefinition } from '../../helpers/push.js';
import { postgresTestUrl, startTestServer } from '../../helpers/server.js';
import { needs, NO_POSTGRES } from '../../helpers/skip.js';
import { submit } from './arrange.js';

const postgres = postgresTestUrl();
const targets = [
  { name: 'PGlite', database: 'pglite' as const, skip: false },
  {
    name: 'skip' in postgres ? `PostgreSQL (skipped: ${postgres.skip})` : 'PostgreSQL',
    database: 'postgres' as const,
    skip: 'skip' in postgres,
  },
];

describe.each(targets)('certify-time checks on $name', ({ database, skip }) => {
  let server: TestServer;
  let tableId: string;

  beforeAll(async () => {
    if (skip) return;
    server = await startTestServer({ database, jobs: 'manual' });
    const pushed = await pushDevDefinition(server, 'categorydim', ['category_id', 'category_name']);
    expect(pushed.status).toBe(202);
    tableId = pushed.body.tableId;
  });

  afterAll(async () => {
    await server?.close();
  });

  const certify = () =>
    server.request('POST', `/api/tables/${tableId}/semantic-contract/certify`, {
      token: server.user('STEWARD').accessToken,
      body: { note: 'looks fine' },
    });

  const certifiedTrail = async () => ({
    state: (await server.sql('SELECT state FROM gds.tables WHERE id = $1', [tableId]))[0]?.state,
    versions: (
      await server.sql('SELECT count(*)::int AS n FROM gds.contract_versions WHERE table_id = $1', [tableId])
    )[0]?.n,
    certifiedAudit: (
      await server.sql(
        `SELECT count(*)::int AS n FROM gds.audit_log WHERE table_id = $1 AND action = 'TABLE_CERTIFIED'`,
        [tableId],
      )
    )[0]?.n,
    view: (await server.sql(`SELECT to_regclass('certified_dev.categorydim')::text AS v`))[0]?.v,
  });

  it(
    'refuses with 422 naming the failed checks when rows written outside the service break them after submit',
    needs(skip ? NO_POSTGRES : undefined),
    async () => {
      const proof = await submit(server, tableId);
      expect(proof).toMatchObject({ passed: true, failedPredicates: [] });
      await server.sql(
        `INSERT INTO analytics_dev.categorydim (category_id, category_name) VALUES (4, NULL), (5, NULL), (6, NULL)`,
      );

      const refused = await certify();
      expect(refused.status, JSON.stringify(refused.body)).toBe(422);
      expect(refused.body.error.code).toBe('checks_failed');
      expect(refused.body.error.message).toContain('null_rate.category_name');
      expect(refused.body.error.details.failedChecks).toEqual([
        { name: 'null_rate.category_name', detail: expect.any(String) },
      ]);
      expect(await certifiedTrail()).toEqual({
        state: 'PENDING_REVIEW',
        versions: 0,
        certifiedAudit: 0,
        view: null,
      });
      const [blocked] = await server.sql(
        `SELECT details FROM gds.audit_log WHERE table_id = $1 AND action = 'CERTIFICATION_BLOCKED'`,
        [tableId],
      );
      expect(blocked?.details.refused.code).toBe('checks_failed');
    },
  );

  it(
    'certifies once the warehouse holds data that passes again',
    needs(skip ? NO_POSTGRES : undefined),
    async () => {
      await server.sql('DELETE FROM analytics_dev.categorydim WHERE category_id IN (4, 5, 6)');
      const certified = await certify();
      expect(certified.status, JSON.stringify(certified.body)).toBe(200);
      expect(await certifiedTrail()).toEqual({
        state: 'CERTIFIED',
        versions: 1,
        certifiedAudit: 1,
        view: 'certified_dev.categorydim',
      });
    },
  );
});
