// Cheap samples on PGlite and on PostgreSQL (skipped, saying why, without
// GDS_TEST_DATABASE_URL): each run draws its sample once, into a temporary table every check reads, and
// the proof says how (the cost): head:N on a table is a LIMIT in storage order, tail:N a TID range scan of
// its last blocks, chunks:K@N rows numbered in storage order without a sort, random:N TABLESAMPLE on a table large
// enough (a seeded hash of every row otherwise). The rows each spec names are asserted in gate1-run.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import { needs, noPostgres } from '../../helpers/skip.js';

const AMOUNT_RULES = `customPredicates:
  - name: amount_not_negative
    sql: amount >= 0
    severity: HARD_FAIL
`;

interface Proof {
  rowsChecked: number;
  sample: { spec: string; method?: string; seed?: string } | null;
  results: Array<{ name: string; failingRows: number | null; detail: string }>;
}

const engines = [
  { engine: 'PGlite', database: undefined, skip: undefined },
  { engine: 'PostgreSQL', database: 'postgres' as const, skip: noPostgres },
];

describe.each(engines)('samples on $engine', ({ database, skip }) => {
  let server: TestServer;
  let token: string;
  let orders: string;
  let contacts: string;

  beforeAll(async () => {
    if (skip !== undefined) return;
    server = await startTestServer({ jobs: 'manual', ...(database ? { database } : {}) });
    token = server.user('OWNER').accessToken;
    orders = server.table('orders').id;
    contacts = server.table('crm_contacts').id;
    const applied = await server.request('PUT', `/api/tables/${orders}/gate1`, {
      token,
      body: { content: AMOUNT_RULES },
    });
    expect(applied.status).toBe(200);
  });

  afterAll(async () => {
    await server?.close();
  });

  const run = async (tableId: string, sample: string): Promise<Proof> => {
    const response = await server.request('POST', `/api/tables/${tableId}/gate-runs`, {
      token,
      body: { sample },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body as Proof;
  };

  it.each([
    ['head:3', 3, /^the first rows in storage order \(LIMIT; no sort\)$/],
    [
      'tail:4',
      4,
      /^the last rows in storage order \(a TID range scan of the last blocks; no sort of the table\)$/,
    ],
    ['chunks:3@2', 6, /numbered once in storage order up to the last chunk \(no sort\)/],
    ['random:3', 3, /seeded hash of every row, keeping the N lowest \(one pass, no sort/],
  ])('%s of a table reads %i rows, drawn once, and says how', needs(skip), async (spec, rows, method) => {
    const proof = await run(orders, spec);
    expect(proof.rowsChecked).toBe(rows);
    expect(proof.sample?.method).toMatch(method);
    // Every check read the same drawn rows: the declared check counts over that many rows.
    const nulls = proof.results.find((r) => r.name.startsWith('null_rate.'));
    expect(nulls?.detail).toContain(`in ${rows} rows`);
  });

  it(
    'the service rows (Mode B) have no storage order to LIMIT: the method says what it costs',
    needs(skip),
    async () => {
      const head = await run(contacts, 'head:3');
      expect(head.rowsChecked).toBe(3);
      expect(head.sample?.method).toMatch(/natural order \(ORDER BY … LIMIT/);
      const chunks = await run(contacts, 'chunks:2@2');
      expect(chunks.rowsChecked).toBe(4);
      expect(chunks.sample?.method).toMatch(/one sort of every row/);
      const random = await run(contacts, 'random:5');
      expect(random.rowsChecked).toBe(5);
      expect(random.sample?.method).toMatch(/no TABLESAMPLE/);
    },
  );

  it('random:N of a large table: TABLESAMPLE, exactly N rows, a seed per run', needs(skip), async () => {
    await server.sql(
      `INSERT INTO analytics_dev.orders
       SELECT (jsonb_populate_record(NULL::analytics_dev.orders,
                 to_jsonb(o) || jsonb_build_object('id', 'big' || g, 'order_id', 100000 + g))).*
         FROM (SELECT * FROM analytics_dev.orders ORDER BY order_id LIMIT 1) AS o, generate_series(1, 20000) AS g`,
    );
    await server.sql('ANALYZE analytics_dev.orders');
    const first = await run(orders, 'random:50');
    const second = await run(orders, 'random:50');
    for (const proof of [first, second]) {
      expect(proof.rowsChecked).toBe(50);
      expect(proof.sample?.method).toMatch(/^TABLESAMPLE BERNOULLI/);
    }
    expect(first.sample?.seed).not.toBe(second.sample?.seed);
    // A large sample of the same table: more rows than TABLESAMPLE's share, so every row is hashed.
    const big = await run(orders, 'random:15000');
    expect(big.rowsChecked).toBe(15000);
    const tail = await run(orders, 'tail:10');
    expect(tail.rowsChecked).toBe(10);
    await server.sql('DELETE FROM analytics_dev.orders WHERE order_id > 100000');
  });

  it(
    'a grain key a unique index orders: head and tail read through the index; without one, storage order',
    needs(skip),
    async () => {
      const grain = (keys: string[]) =>
        server.sql('UPDATE gds.tables SET grain_key_columns = $2::jsonb WHERE id = $1', [
          orders,
          JSON.stringify(keys),
        ]);
      const [first] = await server.sql<{ id: string }>('SELECT min(id) AS id FROM analytics_dev.orders');
      const [last] = await server.sql<{ id: string }>('SELECT max(id) AS id FROM analytics_dev.orders');
      // The lowest and the highest id fail this check: the rows read are those by id, not storage order.
      await server.request('PUT', `/api/tables/${orders}/gate1`, {
        token,
        body: {
          content: `customPredicates:\n  - name: not_the_ends\n    sql: id NOT IN ('${first?.id}', '${last?.id}')\n    severity: WARN\n`,
        },
      });
      try {
        await grain(['id']); // the primary key
        const head = await run(orders, 'head:2');
        expect(head.sample?.method).toMatch(/read through its unique index/);
        expect(head.results.find((r) => r.name === 'not_the_ends')?.failingRows).toBe(1);
        const tail = await run(orders, 'tail:2');
        expect(tail.sample?.method).toMatch(/read backwards through its unique index/);
        expect(tail.results.find((r) => r.name === 'not_the_ends')?.failingRows).toBe(1);
        await grain(['status']); // no index: the lowest keys would cost a pass over every row
        const ends = async (direction: 'ASC' | 'DESC') =>
          (
            await server.sql<{ id: string }>(
              `SELECT id FROM analytics_dev.orders ORDER BY ctid ${direction} LIMIT 1`,
            )
          )[0]?.id;
        const [firstStored, lastStored] = [await ends('ASC'), await ends('DESC')];
        await server.request('PUT', `/api/tables/${orders}/gate1`, {
          token,
          body: {
            content: `customPredicates:\n  - name: not_the_ends\n    sql: id NOT IN ('${firstStored}', '${lastStored}')\n    severity: WARN\n`,
          },
        });
        const unindexed = await run(orders, 'head:2');
        expect(unindexed.sample?.method).toMatch(/^the first rows in storage order \(LIMIT; no sort\)/);
        expect(unindexed.results.find((r) => r.name === 'not_the_ends')?.failingRows).toBe(1);
        // The rows added and deleted above left dead tuples after the live ones: the last live rows are found.
        const unindexedTail = await run(orders, 'tail:2');
        expect(unindexedTail.rowsChecked).toBe(2);
        expect(unindexedTail.sample?.method).toMatch(/^the last rows in storage order/);
        expect(unindexedTail.results.find((r) => r.name === 'not_the_ends')?.failingRows).toBe(1);
      } finally {
        await grain([]);
        await server.request('PUT', `/api/tables/${orders}/gate1`, {
          token,
          body: { content: AMOUNT_RULES },
        });
      }
    },
  );
});
