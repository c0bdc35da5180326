// The seeded orders table of an in-process reference server grown to `rows` rows, keyed by order_id, for the
// gate benches; with the owner's token.
import type { createServer } from '../../../src/server/app.js';

export async function growOrders(
  server: Awaited<ReturnType<typeof createServer>>,
  rows: number,
): Promise<{ orders: string; token: string }> {
  const orders = server.ready.tables.find((t) => t.name === 'orders')?.id ?? '';
  const token = server.ready.users.find((u) => u.role === 'OWNER')?.accessToken ?? '';
  await server.db.query(
    `INSERT INTO analytics_dev.orders
     SELECT 'b' || g, 10000 + g, 1001 + g % 10, (g % 500)::numeric, 'SHIPPED', date '2024-01-01' + g % 365
       FROM generate_series(1, $1::int - 8) AS g`,
    [rows],
  );
  await server.db.query(`UPDATE gds.tables SET grain_key_columns = '["order_id"]' WHERE id = $1`, [orders]);
  return { orders, token };
}

/** Sends a request to the server at `url` as `token`, with a JSON body when one is given. */
export function sender(url: string, token: string) {
  return (method: string, path: string, body?: unknown) =>
    fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
}
