// The governance paths once on a real PostgreSQL: push (202, QUARANTINED, baseline job profiling the
// warehouse object), replace of a CERTIFIED table, the recertification signal with the real dbt run,
// recertification requests, and soft delete. CI sets GDS_TEST_DATABASE_URL; without it this file is
// skipped and the last lines of the run say why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSharedFixture } from '../../helpers/fixtures.js';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import { needs, noPostgres, noSharedFixtures } from '../../helpers/skip.js';

describe('governance on PostgreSQL', needs(noPostgres), () => {
  let server: TestServer;
  let devConnector: string;
  let governanceId: string;

  const push = (content: string, replaceId?: string) =>
    server.request('POST', '/api/artifacts', {
      token: server.user('ADMIN').cliToken,
      body: {
        filename: 'categorydim.yml',
        content,
        connectorId: devConnector,
        ...(replaceId ? { replaceId } : {}),
      },
    });

  beforeAll(async () => {
    server = await startTestServer({ database: 'postgres', jobs: 'manual' });
    devConnector = server.ready.connectors.find((c) => c.name === 'warehouse-dev')?.id ?? '';
  });

  afterAll(async () => {
    await server?.close();
  });

  it('registers a definition and profiles its warehouse object in the baseline job', async () => {
    const response = await push(
      'table: categorydim\nsource: analytics_dev.categorydim\ncolumns:\n  - name: category_id\n  - name: category_name\n',
    );
    expect(response.status).toBe(202);
    governanceId = response.body.governanceId;
    expect(response.body.job).toMatchObject({ type: 'gate-baseline-auto', status: 'QUEUED' });
    expect(await server.jobs.runPending()).toEqual([response.body.job.id]);
    const [job] = await server.sql('SELECT status, result FROM gds.jobs WHERE id = $1', [
      response.body.job.id,
    ]);
    expect(job?.status).toBe('SUCCEEDED');
    expect(job?.result).toMatchObject({ rowCount: 3 });
    expect(job?.result.columns[1]).toMatchObject({ name: 'category_name', nullCount: 1, distinctCount: 2 });
  });

  it('replaces a CERTIFIED definition: QUARANTINED, reconciled, a schema_change request', async () => {
    await server.sql(`UPDATE gds.tables SET state = 'CERTIFIED' WHERE id = $1`, [governanceId]);
    const response = await push(
      'table: categorydim\nsource: analytics_dev.categorydim\ncolumns:\n  - name: category_id\n',
      governanceId,
    );
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({
      state: 'QUARANTINED',
      columns: { added: [], removed: ['category_name'] },
    });
    const listed = await server.request('GET', '/api/recertification-requests', {
      token: server.user('STEWARD').cliToken,
    });
    expect(listed.body.requests.map((r: { cause: string }) => r.cause)).toEqual(['schema_change']);
  });

  it('files a recertification from the dbt run for a CERTIFIED table', async ({ skip }) => {
    skip(noSharedFixtures !== undefined, noSharedFixtures);
    await server.sql(`UPDATE gds.tables SET state = 'CERTIFIED' WHERE id = $1`, [governanceId]);
    const token = (
      await server.issueToken('ADMIN', {
        name: 'r',
        env: 'dev',
        scopes: ['workspace:write:recertify'] as never,
      })
    ).tokens.accessToken;
    const response = await server.request('POST', '/api/workspace/recertify', {
      token,
      // The fixture's run as built into analytics_dev, the schema categorydim is over (dbt wrote it in main).
      body: JSON.parse(
        readSharedFixture('dbt/duckdb-v6-run_results.json').replaceAll('\\"main\\"', '\\"analytics_dev\\"'),
      ),
    });
    expect(response.status).toBe(200);
    expect(response.body.outcomes[0]).toEqual({
      table: 'categorydim',
      schema: 'analytics_dev',
      outcome: 'recert_filed',
      driftDetected: false,
      // Made CERTIFIED without its view: the signal found it missing and published it.
      certifiedView: expect.objectContaining({ health: 'missing', republished: true }),
    });
  });

  it('answers two signals naming the same tables in opposite orders both 200 (no deadlock)', async () => {
    const token = (
      await server.issueToken('ADMIN', {
        name: 'both-orders',
        env: 'dev',
        scopes: ['workspace:write:recertify'] as never,
      })
    ).tokens.accessToken;
    const signal = (names: string[]) =>
      server.request('POST', '/api/workspace/recertify', {
        token,
        body: { environmentLabel: 'dev', tables: names.map((name) => ({ name })) },
      });
    for (let round = 0; round < 5; round++) {
      const [forward, backward] = await Promise.all([
        signal(['customers', 'orders']),
        signal(['orders', 'customers']),
      ]);
      expect([forward.status, backward.status]).toEqual([200, 200]);
      // Outcomes stay in each request's own order.
      expect(forward.body.outcomes.map((o: { table: string }) => o.table)).toEqual(['customers', 'orders']);
      expect(backward.body.outcomes.map((o: { table: string }) => o.table)).toEqual(['orders', 'customers']);
    }
  });

  it('soft-deletes the governance record and leaves the warehouse object', async () => {
    const response = await server.request('DELETE', `/api/tables/${governanceId}`, {
      token: server.user('ADMIN').cliToken,
    });
    expect(response.status).toBe(200);
    const [rows] = await server.sql('SELECT count(*)::int AS n FROM analytics_dev.categorydim');
    expect(rows?.n).toBe(3);
  });
});
