// A gate run that only the deadline stops: the seeded `orders` table grown to 20,000 rows, and a
// custom predicate the checker allows (the replace() growth is exactly its bound) that builds about a
// million characters per row.
import { expect } from 'vitest';
import type { TestServer } from '../../helpers/server.js';

const SLOW_RULES = `customPredicates:
  - name: slow
    sql: length(replace(lpad(status, 1000, 'a'), 'a', '${'x'.repeat(1000)}')) > 0
    severity: HARD_FAIL
`;

/** Makes every gate run of `orders` slow (as its owner); returns the table id. */
export async function arrangeSlowOrders(server: TestServer): Promise<string> {
  const orders = server.table('orders').id;
  // In statements of 1,000 rows: each stays far inside the short deadline these tests give the server, however
  // loaded the machine (one statement of 20,000 rows once ran past 3 s under a loaded CI).
  for (let from = 1; from <= 20_000; from += 1_000) {
    await server.sql(
      `INSERT INTO analytics_dev.orders (id, order_id, customer_id, amount, status)
       SELECT 'bulk-' || g, g, 1, 1, 'open' FROM generate_series(${from}, ${from + 999}) AS g`,
    );
  }
  const rules = await server.request('PUT', `/api/tables/${orders}/gate1`, {
    token: server.user('OWNER').accessToken,
    body: { content: SLOW_RULES },
  });
  expect(rules.status).toBe(200);
  return orders;
}
