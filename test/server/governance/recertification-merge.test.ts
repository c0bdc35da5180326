// A nightly pipeline signals every dbt run. The steward's queue must not grow with it: one open request
// per table and cause, which a repeated signal updates (count, last seen, the latest evidence as a
// summary), parallel signals included; certifying the table resolves its open requests (RESOLVED, with
// the contract version that resolved them, in the list with all=true and in the audit log). On PGlite and
// on PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import { needs, noPostgres } from '../../helpers/skip.js';
import { submit } from '../cert/arrange.js';

/** What dbt leaves in target/run_results.json after `dbt run` built both models. */
const dbtRun = (invocation: string) => ({
  metadata: {
    dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json',
    dbt_version: '1.10.0',
    invocation_id: invocation,
  },
  results: ['categorydim', 'productsdim'].map((name) => ({
    status: 'success',
    unique_id: `model.shop.${name}`,
    relation_name: `"dev"."analytics_dev"."${name}"`,
    message: null,
    timing: [],
    thread_id: 'Thread-1',
    execution_time: 0.1,
    adapter_response: {},
    failures: null,
  })),
  elapsed_time: 0.5,
  args: { which: 'run' },
});

for (const database of ['pglite', 'postgres'] as const) {
  describe(
    `recertification requests merge and close on ${database}`,
    needs(database === 'postgres' ? noPostgres : undefined),
    () => {
      let server: TestServer;
      let pipeline: string;
      const ids: Record<string, string> = {};

      beforeAll(async () => {
        server = await startTestServer({ database, jobs: 'manual' });
        const connectorId = server.ready.connectors.find((c) => c.name === 'warehouse-dev')?.id;
        for (const [name, column] of [
          ['categorydim', 'category_id'],
          ['productsdim', 'product_id'],
        ]) {
          const pushed = await server.request('POST', '/api/artifacts', {
            token: server.user('ADMIN').cliToken,
            body: {
              filename: `${name}.yml`,
              content: `table: ${name}\nsource: analytics_dev.${name}\ncolumns:\n  - name: ${column}\n`,
              connectorId,
            },
          });
          expect(pushed.status).toBe(202);
          ids[name ?? ''] = pushed.body.governanceId;
          await server.sql(`UPDATE gds.tables SET state = 'CERTIFIED' WHERE id = $1`, [
            pushed.body.governanceId,
          ]);
        }
        pipeline = (
          await server.issueToken('ADMIN', {
            name: 'nightly',
            env: 'dev',
            scopes: ['workspace:write:recertify'],
          })
        ).tokens.accessToken;
      });

      afterAll(async () => {
        await server?.close();
      });

      const requestsOf = (name: string) =>
        server.sql<{
          id: string;
          status: string;
          signal_count: number;
          created_at: Date;
          last_seen_at: Date;
          details: { evidence?: { runId?: string; summary?: string } };
          resolved_version: number | null;
          resolved_by: string | null;
        }>(
          `SELECT id, status, signal_count, created_at, last_seen_at, details, resolved_version, resolved_by
             FROM gds.recertification_requests WHERE table_id = $1 ORDER BY created_at`,
          [ids[name]],
        );

      const signal = (invocation: string, summary: string) =>
        server.request('POST', '/api/workspace/recertify', {
          token: pipeline,
          body: {
            runResults: dbtRun(invocation),
            evidence: { kind: 'dbt', runId: invocation, summary },
          },
        });

      it('a dbt run signalled twice leaves one open request per table, counted twice, with the latest evidence', async () => {
        const first = await signal('run-1', 'first run');
        expect(first.status).toBe(200);
        expect(first.body.outcomes.map((o: { outcome: string }) => o.outcome)).toEqual([
          'recert_filed',
          'recert_filed',
        ]);
        server.clock.advance(60_000);
        const long = 'x'.repeat(10_000);
        const second = await signal('run-2', long);
        expect(second.status).toBe(200);
        for (const name of ['categorydim', 'productsdim']) {
          const requests = await requestsOf(name);
          expect(requests).toHaveLength(1);
          const [request] = requests;
          expect(request).toMatchObject({ status: 'OPEN', signal_count: 2 });
          expect(new Date(request?.last_seen_at ?? 0).getTime()).toBeGreaterThan(
            new Date(request?.created_at ?? 0).getTime(),
          );
          expect(request?.details.evidence?.runId).toBe('run-2');
          // A summary, not the whole evidence: bounded whatever the signal carried.
          expect(request?.details.evidence?.summary?.length).toBeLessThan(2_100);
          expect(request?.details.evidence?.summary).toContain('10000 characters');
        }
        const listed = await server.request(
          'GET',
          `/api/recertification-requests?tableId=${ids.categorydim}`,
          {
            token: server.user('STEWARD').cliToken,
          },
        );
        expect(listed.status).toBe(200);
        expect(listed.body.requests).toEqual([
          expect.objectContaining({ tableId: ids.categorydim, status: 'OPEN', count: 2 }),
        ]);
      });

      it('ten parallel signals of one run still leave one open request per table', async () => {
        const answers = await Promise.all(
          Array.from({ length: 10 }, (_, i) => signal(`parallel-${i}`, 'parallel')),
        );
        expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
        for (const name of ['categorydim', 'productsdim']) {
          const requests = await requestsOf(name);
          expect(requests).toEqual([expect.objectContaining({ status: 'OPEN', signal_count: 12 })]);
        }
      });

      it('certifying the table resolves its open requests with the version that resolved them', async () => {
        const table = ids.categorydim ?? '';
        const [open] = await requestsOf('categorydim');
        await submit(server, table);
        const certified = await server.request('POST', `/api/tables/${table}/semantic-contract/certify`, {
          token: server.user('STEWARD').accessToken,
          body: { note: 'nightly checked' },
        });
        expect(certified.status, JSON.stringify(certified.body)).toBe(200);
        const [{ version } = { version: 0 }] = await server.sql<{ version: number }>(
          'SELECT max(version)::int AS version FROM gds.contract_versions WHERE table_id = $1',
          [table],
        );
        expect(version).toBeGreaterThan(0);
        const steward = server.user('STEWARD');
        expect(await requestsOf('categorydim')).toEqual([
          expect.objectContaining({
            id: open?.id,
            status: 'RESOLVED',
            resolved_version: version,
            resolved_by: steward.userId,
          }),
        ]);
        // The other table's request is untouched.
        expect(await requestsOf('productsdim')).toEqual([expect.objectContaining({ status: 'OPEN' })]);

        const openList = await server.request('GET', `/api/recertification-requests?tableId=${table}`, {
          token: steward.cliToken,
        });
        expect(openList.body.requests).toEqual([]);
        const all = await server.request('GET', `/api/recertification-requests?tableId=${table}&all=true`, {
          token: steward.cliToken,
        });
        expect(all.body.requests).toEqual([
          expect.objectContaining({
            id: open?.id,
            status: 'RESOLVED',
            resolvedVersion: version,
            resolvedBy: steward.userId,
            count: 12,
          }),
        ]);
        const audit = await server.sql<{ details: Record<string, unknown> }>(
          `SELECT details FROM gds.audit_log WHERE table_id = $1 AND action = 'RECERTIFICATION_RESOLVED'`,
          [table],
        );
        expect(audit).toEqual([
          { details: expect.objectContaining({ requestId: open?.id, version, count: 12 }) },
        ]);

        // The next signal opens a new request: the resolved one stays resolved.
        server.clock.advance(60_000);
        await signal('run-3', 'after certification');
        const after = await requestsOf('categorydim');
        expect(after.map((r) => [r.status, r.signal_count])).toEqual([
          ['RESOLVED', 12],
          ['OPEN', 1],
        ]);
      });
    },
  );
}
