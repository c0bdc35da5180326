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

  it('runs a check beside a slow one, each in a sandbox of its own', { timeout: 60_000 }, async () => {
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

  it(
    'refuses certify (422, nothing certified) when rows change between its checks and its transaction',
    { timeout: 60_000 },
    async () => {
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
    },
  );
});
