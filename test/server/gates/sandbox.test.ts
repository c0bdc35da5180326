// On PGlite the gate checks run in a sandbox database over rows copied out in one snapshot
// (src/server/gates/snapshot.ts). What a user would notice of it: a slow check does not hold another
// member's check (each has a sandbox of its own, up to SANDBOXES); a column type the sandbox cannot make
// is checked in place, with the same answer; and certify, whose checks run before its transaction,
// refuses when the rows change in between instead of certifying data its checks never saw.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { pushDevDefinition } from '../../helpers/push.js';
import { startTestServer } from '../../helpers/server.js';
import { SANDBOXES } from '../../../src/server/db/pglite.js';
import { submit } from '../cert/arrange.js';
import { arrangeSlowOrders } from './slow-gate.js';

const DEADLINE_MS = 3000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('gate checks in the PGlite sandbox', () => {
  let server: TestServer;
  let steward: string;
  let owner: string;
  let orders: string;
  /** A gate run on orders that runs to the deadline (422): it holds a sandbox meanwhile. */
  const slowRun = () => server.request('POST', `/api/tables/${orders}/gate-runs`, { token: owner, body: {} });
  const quickRun = () =>
    server.request('POST', `/api/tables/${server.table('customers').id}/gate-runs`, {
      token: owner,
      body: {},
    });

  beforeAll(async () => {
    server = await startTestServer({ jobs: 'manual', queryTimeoutMs: DEADLINE_MS });
    steward = server.user('STEWARD').accessToken;
    owner = server.user('OWNER').accessToken;
    orders = await arrangeSlowOrders(server);
  });

  afterAll(async () => {
    await server?.close();
  });

  it('runs a check beside a slow one, each in a sandbox of its own', async () => {
    const warm = await Promise.all(Array.from({ length: SANDBOXES }, quickRun)); // every sandbox opened
    expect(warm.map((r) => r.status)).toEqual(Array.from({ length: SANDBOXES }, () => 200));
    const finished: string[] = [];
    const slow = slowRun().then((r) => (finished.push('slow'), r));
    await sleep(300);
    const quick = await quickRun().then((r) => (finished.push('quick'), r));
    expect(quick.status).toBe(200);
    expect((await slow).status).toBe(422);
    expect(finished).toEqual(['quick', 'slow']);
  });

  it('checks a warehouse object whose column type only the warehouse knows (an enum) in place', async () => {
    await server.sql(`CREATE TYPE analytics_dev.mood AS ENUM ('calm', 'stormy')`);
    await server.sql('CREATE TABLE analytics_dev.moods (id integer NOT NULL, mood analytics_dev.mood)');
    await server.sql(`INSERT INTO analytics_dev.moods VALUES (1, 'calm'), (2, NULL), (3, 'stormy')`);
    const pushed = await pushDevDefinition(server, 'moods', ['id', 'mood']);
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(202);
    const run = await server.request('POST', `/api/tables/${pushed.body.tableId}/gate-runs`, {
      token: steward,
      body: {},
    });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(run.body).toMatchObject({ rowsChecked: 3 });
    const nullRate = run.body.results.find((r: { name: string }) => r.name === 'null_rate.mood');
    expect(nullRate).toMatchObject({ failingRows: 1 });
  });

  it('copies values exactly: a column named like the copy alias, and a JSON null that is not SQL NULL', async () => {
    await server.sql('CREATE TABLE analytics_dev.odd (id integer NOT NULL, __gds_row text, doc jsonb)');
    await server.sql(
      `INSERT INTO analytics_dev.odd VALUES (1, 'a', 'null'::jsonb), (2, 'b', '{"k": 1}'), (3, NULL, 'null'::jsonb)`,
    );
    const pushed = await pushDevDefinition(server, 'odd', ['id', '__gds_row', 'doc']);
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(202);
    const run = await server.request('POST', `/api/tables/${pushed.body.tableId}/gate-runs`, {
      token: steward,
      body: {},
    });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    const failing = (name: string) =>
      run.body.results.find((r: { name: string }) => r.name === name)?.failingRows;
    expect(run.body.rowsChecked).toBe(3);
    expect(failing('null_rate.doc')).toBe(0); // 'null'::jsonb IS NULL is false, as in place
    expect(failing('null_rate.__gds_row')).toBe(1);
  });

  it('certifies a view whose output changes by itself (now()): the digest reads its base table', async () => {
    await server.sql('CREATE TABLE analytics_dev.events (id integer NOT NULL, at timestamptz NOT NULL)');
    await server.sql(`INSERT INTO analytics_dev.events VALUES (1, '2026-01-01'), (2, '2026-02-01')`);
    await server.sql(
      `CREATE VIEW analytics_dev.event_ages AS
         SELECT id, extract(epoch FROM now() - at)::numeric AS age_seconds FROM analytics_dev.events`,
    );
    const pushed = await pushDevDefinition(server, 'event_ages', ['id', 'age_seconds']);
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(202);
    const tableId: string = pushed.body.tableId;
    expect(await submit(server, tableId)).toMatchObject({ passed: true });
    const certified = await server.request('POST', `/api/tables/${tableId}/semantic-contract/certify`, {
      token: steward,
      body: { note: 'ages move, rows do not' },
    });
    expect(certified.status, JSON.stringify(certified.body)).toBe(200);
  });

  it('refuses certify (422, nothing certified) when rows change between its checks and its transaction', async () => {
    const pushed = await pushDevDefinition(server, 'categorydim', ['category_id', 'category_name']);
    expect(pushed.status).toBe(202);
    const tableId: string = pushed.body.tableId;
    expect(await submit(server, tableId)).toMatchObject({ passed: true });

    // Slow gate runs on another table hold every sandbox: certify copies its rows out at once, then
    // waits for a sandbox, and the rows change in the meantime.
    const slow = Promise.all(Array.from({ length: SANDBOXES }, slowRun));
    await sleep(500);
    const certify = () =>
      server.request('POST', `/api/tables/${tableId}/semantic-contract/certify`, {
        token: steward,
        body: { note: 'looks fine' },
      });
    const racing = certify();
    await sleep(1000);
    await server.sql(
      `INSERT INTO analytics_dev.categorydim (category_id, category_name) VALUES (7, NULL), (8, NULL), (9, NULL)`,
    );

    const refused = await racing;
    expect((await slow).map((r) => r.status)).toEqual(Array.from({ length: SANDBOXES }, () => 422));
    expect(refused.status, JSON.stringify(refused.body)).toBe(422);
    expect(refused.body.error.code).toBe('data_changed_during_checks');
    expect(refused.body.error.message).toMatch(/Run certify again/);
    const [table] = await server.sql('SELECT state FROM gds.tables WHERE id = $1', [tableId]);
    expect(table.state).toBe('PENDING_REVIEW');
    const [view] = await server.sql(`SELECT to_regclass('certified_dev.categorydim')::text AS v`);
    expect(view.v).toBeNull();

    // Run again, the checks see the rows written meanwhile.
    const again = await certify();
    expect(again.status).toBe(422);
    expect(again.body.error.code).toBe('checks_failed');
    expect(again.body.error.message).toContain('null_rate.category_name');
  });
});
