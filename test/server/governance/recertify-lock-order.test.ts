// Two recertification signals at once, on PostgreSQL (PGlite runs one transaction at a time, so nothing waits
// there): a signal locks the tables it matched in id order, and one that matches another table only once its
// first locks are taken (a replacement moved that table's source meanwhile) still takes every lock in id
// order. Otherwise it would hold the later table and wait for the earlier one, while a second signal holds
// the earlier and waits for the later: a deadlock, one of them answered 503 database_conflict.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import { holdTableRow } from '../../helpers/row-holder.js';
import { needs, noPostgres } from '../../helpers/skip.js';

describe('recertification signals lock tables in one order, on PostgreSQL', needs(noPostgres), () => {
  let server: TestServer;
  let token: string;

  beforeAll(async () => {
    server = await startTestServer({ database: 'postgres', jobs: 'manual' });
    token = (
      await server.issueToken('ADMIN', {
        name: 'pipeline',
        env: 'dev',
        scopes: ['workspace:write:recertify'] as never,
      })
    ).tokens.accessToken;
  });

  afterAll(async () => {
    await server?.close();
  });

  const signal = (tables: string[]) =>
    server.request('POST', '/api/workspace/recertify', { token, body: { tables } });

  it('a table that matches only once the signal holds a later one is locked in id order: no deadlock, both answer', async () => {
    const [earlier, later] = [server.table('customers'), server.table('orders')].sort((a, b) =>
      a.id < b.id ? -1 : 1,
    );
    await server.sql('CREATE TABLE analytics_dev.moved_here AS SELECT * FROM analytics_dev.orders');
    const holder = await holdTableRow(server, later!.id);
    try {
      // The first signal matches only the later table and waits for it.
      const first = signal([later!.name, 'moved_here']);
      await holder.waitForBlocked(1);
      // Meanwhile the earlier table moves over moved_here (as a replacement would), and a second signal
      // locks the earlier table and waits for the later one behind the first.
      await server.sql(`UPDATE gds.tables SET source = 'analytics_dev.moved_here' WHERE id = $1`, [
        earlier!.id,
      ]);
      const second = signal([earlier!.name, later!.name]);
      await holder.waitForBlocked(2);
      await holder.client.query('ROLLBACK');
      const answers = await Promise.all([first, second]);
      for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answers[0].body.governed).toBe(2);
      expect(answers[1].body.governed).toBe(2);
    } finally {
      await holder.end();
    }
  });
});
