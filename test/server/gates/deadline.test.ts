// Bounded work: every database statement has the server's deadline (queryTimeoutMs). A predicate the
// allow-list accepts can still be slow on enough rows; at the deadline the statement is stopped (on
// PGlite by ending the worker thread that runs it, on PostgreSQL by statement_timeout), the gate run
// answers 422 naming the deadline, and nothing committed is lost. Meanwhile every other request is
// answered, those that read the database too: on PostgreSQL over the pool's other connections, on
// PGlite because the checks run in the sandbox over a copy of the rows (gates/snapshot.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { postgresTestUrl, startTestServer } from '../../helpers/server.js';
import { needs, NO_POSTGRES } from '../../helpers/skip.js';
import { arrangeSlowOrders } from './slow-gate.js';

const DEADLINE_MS = 2000;

const target = postgresTestUrl();
const engines = [
  { name: 'PGlite', database: 'pglite' as const },
  {
    name: 'skip' in target ? `PostgreSQL (skipped: ${target.skip})` : 'PostgreSQL',
    database: 'postgres' as const,
    skip: 'skip' in target,
  },
];

describe.each(engines)('a gate run past the deadline on $name', ({ database, skip }) => {
  let server: TestServer;
  let orders: string;
  let token: string;
  let dataToken: string;

  beforeAll(async () => {
    if (skip) return;
    server = await startTestServer({ database, queryTimeoutMs: DEADLINE_MS });
    token = server.user('OWNER').accessToken;
    orders = await arrangeSlowOrders(server);
    const issued = await server.issueToken('OWNER', {
      name: 'reader',
      env: 'dev',
      scopes: ['customers', 'crm_contacts'].map((name) => ({
        tableId: server.table(name).id,
        permissions: ['read'],
      })),
    });
    dataToken = issued.tokens.accessToken;
  });

  afterAll(async () => {
    await server?.close();
  });

  it(
    'answers 422 naming the deadline, while other requests are answered, and loses nothing committed',
    { ...needs(skip ? NO_POSTGRES : undefined) },
    async () => {
      const finished: string[] = [];
      const timed = async <T>(name: string, call: Promise<T>) => {
        const started = performance.now();
        const result = await call;
        finished.push(name);
        return { name, result, ms: Math.round(performance.now() - started) };
      };
      const hostile = timed(
        'hostile',
        server.request('POST', `/api/tables/${orders}/gate-runs`, { token, body: {} }),
      );
      await new Promise((resolve) => setTimeout(resolve, DEADLINE_MS / 4)); // the predicate is running
      const records = (name: string) => `/api/tables/${server.table(name).id}/records`;
      const others = await Promise.all([
        timed('openid', server.request('GET', '/.well-known/openid-configuration')),
        timed('tables', server.request('GET', '/api/tables', { token })),
        timed('status', server.request('GET', `/api/tables/${orders}/status`, { token })),
        timed('warehouse records', server.request('GET', records('customers'), { token: dataToken })),
        timed('service records', server.request('GET', records('crm_contacts'), { token: dataToken })),
      ]);
      const run = await hostile;
      console.info(
        `${database}: ${others.map((o) => `${o.name} ${o.ms} ms`).join(', ')}; hostile run ${run.ms} ms`,
      );
      expect(others.map((o) => o.result.status)).toEqual([200, 200, 200, 200, 200]);
      expect(finished.at(-1)).toBe('hostile'); // everything else was answered while the checks ran
      expect(run.result.status).toBe(422);
      expect(run.result.body.error).toMatchObject({
        code: 'query_deadline',
        details: { timeoutMs: DEADLINE_MS },
      });
      expect(run.result.body.error.message).toMatch(/deadline of 2 s/);
      // Committed before the stop: the rows and the rules are still there.
      expect(
        (await server.sql("SELECT count(*)::int AS n FROM analytics_dev.orders WHERE id LIKE 'bulk-%'"))[0].n,
      ).toBe(20000);
      const rules = await server.request('GET', `/api/tables/${orders}/gate1`, { token });
      expect(rules.status).toBe(200);
      expect(JSON.stringify(rules.body)).toContain('length(replace(lpad(status, 1000');
    },
  );
});
