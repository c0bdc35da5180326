// What a Mode B table holds after the data plane wrote it: a key upserted by two imports at once is one
// record, not two; and every stored date and timestamp is one PostgreSQL reads (the certified view casts
// `data->>'day'` to date and `seen_at` to timestamptz, so one bad value would break every read of the view).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { readWriteToken, startTestServer } from '../helpers/server.js';
import { createModeBTable } from '../helpers/records.js';
import { needs, noPostgres } from '../helpers/skip.js';

describe('two imports at once on one key (PostgreSQL)', needs(noPostgres), () => {
  let server: TestServer;
  let table: string;
  let token: string;

  beforeAll(async () => {
    server = await startTestServer({ database: 'postgres', rateLimit: 1_000_000 });
    table = await createModeBTable(server, 'concurrent');
    token = await readWriteToken(server, table, 'concurrent');
  });

  afterAll(async () => {
    await server?.close();
  });

  it('leaves one record per key: the second waits for the first and updates what it inserted', async () => {
    const rows = Array.from({ length: 200 }, (_, i) => ({ sku: `K${i}`, label: `first ${i}` }));
    const again = rows.map((row) => ({ ...row, label: row.label.replace('first', 'second') }));
    // Several rounds: without a lock the two transactions each see no record of a key and both insert it.
    for (let round = 0; round < 5; round += 1) {
      const bodies = [rows, again].map((batch) =>
        batch.map((row) => ({ ...row, sku: `${row.sku}-${round}` })),
      );
      const answers = await Promise.all(
        bodies.map((body) =>
          server.request('POST', `/api/tables/${table}/import?mode=upsert&key=sku`, {
            token,
            body: { rows: body },
          }),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      const inserted = answers.reduce((sum, a) => sum + (a.body.inserted as number), 0);
      const updated = answers.reduce((sum, a) => sum + (a.body.updated as number), 0);
      expect({ inserted, updated }).toEqual({ inserted: 200, updated: 200 });
    }
    const [counts] = await server.sql<{ records: number; keys: number }>(
      `SELECT count(*)::int AS records, count(DISTINCT data->>'sku')::int AS keys
         FROM gds.records WHERE table_id = $1`,
      [table],
    );
    expect(counts).toEqual({ records: 1_000, keys: 1_000 });
  });
});

describe('dates and timestamps a Mode B table takes', () => {
  let server: TestServer;
  let table: string;
  let token: string;

  beforeAll(async () => {
    server = await startTestServer();
    table = await createModeBTable(server, 'calendar');
    token = await readWriteToken(server, table, 'calendar');
  });

  afterAll(async () => {
    await server?.close();
  });

  const create = (values: Record<string, unknown>, sku = 'refused') =>
    server.request('POST', `/api/tables/${table}/records`, { token, body: { sku, ...values } });

  it.each([
    ['day', '2024-02-30'],
    ['day', '2023-02-29'],
    ['day', '2024-04-31'],
    ['day', '0000-01-01'],
    ['seen_at', '2024-02-30T10:00:00Z'],
    ['seen_at', 'hello 5'],
    ['seen_at', '1'],
    ['seen_at', 'Jan 5'],
    ['seen_at', '2024-06-01T24:30:00Z'],
  ])('refuses %s %s (PostgreSQL cannot read it), naming the column', async (column, value) => {
    const answer = await create({ [column]: value });
    expect(answer.status).toBe(400);
    expect(answer.body.error.details.invalid).toEqual([{ column, expected: expect.any(String) }]);
  });

  it('takes the forms PostgreSQL reads, and the certified view casts every one', async () => {
    const good = [
      { day: '2024-02-29', seen_at: '2024-02-29' },
      { day: '2023-12-31', seen_at: '2024-06-01T12:00:00Z' },
      { day: '0001-01-01', seen_at: '2024-06-01T12:00:00.123456Z' },
      { day: '9999-12-31', seen_at: '2024-06-01 12:00' },
      { day: '2024-01-01', seen_at: '2024-06-01T12:00:00+05:30' },
      { day: '2024-01-01', seen_at: '2024-06-01T12:00:00-0800' },
      { day: '2024-01-01', seen_at: '2024-06-01T23:59:59' },
    ];
    for (const values of good)
      expect((await create(values, 'good')).status, JSON.stringify(values)).toBe(201);
    // Every record of the table, the refused ones' none among them: one unreadable value fails the query.
    const cast = await server.sql<{ day: string; seen_at: string }>(
      `SELECT (data->>'day')::date::text AS day, (data->>'seen_at')::timestamptz::text AS seen_at
         FROM gds.records WHERE table_id = $1 ORDER BY seq`,
      [table],
    );
    expect(cast.map((r) => r.day)).toEqual(good.map((v) => v.day));
  });
});
