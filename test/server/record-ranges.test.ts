// A record value is checked against its column's storage — int2, int4 and int8
// ranges, numeric(p,s) precision and scale where the column declares them — and refused with 400
// `invalid_record` naming the column and the range, with nothing stored. The storage comes from the
// warehouse's information_schema (a Mode A table's columns) or from the declared type of the artifact.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declaredStorage } from '../../src/server/governance/definitions.js';
import { fractionDigits } from '../../src/server/records/columns.js';
import type { TestServer } from '../helpers/server.js';
import { readWriteToken, startTestServer } from '../helpers/server.js';

let server: TestServer;
let crm: string;
let token: string;

beforeAll(async () => {
  server = await startTestServer();
  crm = server.table('crm_contacts').id;
  token = await readWriteToken(server, crm, 'ranges');
  // crm_contacts is a Mode B table (its columns are the service's own, no endpoint declares them): give it
  // columns of each storage, as a dashboard-made table declaring them would have.
  const columns = [
    { name: 'email', type: 'text', required: true },
    { name: 'full_name', type: 'text', required: true },
    { name: 'small', type: 'integer', required: false, integerBytes: 2 },
    { name: 'regular', type: 'integer', required: false, integerBytes: 4 },
    { name: 'big', type: 'integer', required: false, integerBytes: 8 },
    { name: 'price', type: 'numeric', required: false, precision: 6, scale: 2 },
    { name: 'whole', type: 'numeric', required: false, precision: 3, scale: 0 },
    { name: 'ratio', type: 'numeric', required: false },
  ];
  await server.sql('UPDATE gds.tables SET columns = $2 WHERE id = $1', [crm, JSON.stringify(columns)]);
});

afterAll(async () => {
  await server?.close();
});

const write = (values: Record<string, unknown>) =>
  server.request('POST', `/api/tables/${crm}/records`, {
    token,
    body: { email: 'range@example.com', full_name: 'Range', ...values },
  });

describe('record values within the column’s storage', () => {
  it.each([
    [{ small: 32_768 }, 'small', 'integer (int2)', 'from -32768 to 32767'],
    [{ small: -32_769 }, 'small', 'integer (int2)', 'from -32768 to 32767'],
    [{ regular: 2_147_483_648 }, 'regular', 'integer (int4)', 'from -2147483648 to 2147483647'],
    [{ big: -(2 ** 64) }, 'big', 'integer (int8)', 'from -9223372036854775808 to 9223372036854775807'],
    [{ price: 10_000 }, 'price', 'numeric(6,2)', 'at most 4 digits before the point and 2 after'],
    [{ price: 1.234 }, 'price', 'numeric(6,2)', 'at most 4 digits before the point and 2 after'],
    [{ whole: 1.5 }, 'whole', 'numeric(3,0)', 'at most 3 digits before the point and 0 after'],
    [{ whole: -1000 }, 'whole', 'numeric(3,0)', 'at most 3 digits before the point and 0 after'],
  ])(
    '%o is 400 invalid_record naming %s, %s, %s; nothing stored',
    async (values, column, expected, range) => {
      const response = await write(values);
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_record');
      expect(response.body.error.details.invalid).toEqual([{ column, expected }]);
      expect(response.body.error.message).toContain(
        `${column} (expected ${expected}${range.startsWith('from') ? ' ' : ': '}${range})`,
      );
      const stored = await server.sql(
        `SELECT count(*)::int AS n FROM gds.records WHERE table_id = $1 AND data->>'email' = 'range@example.com'`,
        [crm],
      );
      expect(stored[0].n).toBe(0);
    },
  );

  it('takes every value at the edges of the range, and numbers where no precision is declared', async () => {
    const response = await write({
      small: -32_768,
      regular: 2_147_483_647,
      big: 2 ** 62,
      price: -9999.99,
      whole: 999,
      ratio: 1.2345678901234e-7,
    });
    expect(response.status).toBe(201);
    const patched = await server.request('PATCH', `/api/tables/${crm}/records/${response.body.id}`, {
      token,
      body: { regular: -2_147_483_649 },
    });
    expect(patched.status).toBe(400);
    expect(patched.body.error.code).toBe('invalid_record');
  });

  it('checks every item of a bulk update the same way (all or nothing)', async () => {
    const response = await server.request('POST', `/api/tables/${crm}/bulk-update`, {
      token,
      body: {
        records: [
          { data: { email: 'ok@example.com', full_name: 'Ok', small: 1 } },
          { data: { email: 'no@example.com', full_name: 'No', small: 40_000 } },
        ],
      },
    });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_record');
    const stored = await server.sql(
      `SELECT count(*)::int AS n FROM gds.records WHERE table_id = $1 AND data->>'email' IN ('ok@example.com', 'no@example.com')`,
      [crm],
    );
    expect(stored[0].n).toBe(0);
  });
});

describe('where the storage comes from', () => {
  it('a Mode A table carries it from the warehouse’s information_schema', async () => {
    const [row] = await server.sql('SELECT columns FROM gds.tables WHERE id = $1', [
      server.table('customers').id,
    ]);
    const columns = (typeof row.columns === 'string' ? JSON.parse(row.columns) : row.columns) as Array<
      Record<string, unknown>
    >;
    expect(columns.find((c) => c.name === 'lifetime_value')).toMatchObject({
      type: 'numeric',
      precision: 12,
      scale: 2,
    });
    expect(columns.find((c) => c.name === 'customer_id')).toMatchObject({ type: 'integer', integerBytes: 4 });
  });

  it('an artifact’s declared type gives it where the warehouse has no such column', () => {
    expect(declaredStorage('smallint')).toEqual({ integerBytes: 2 });
    expect(declaredStorage('INT4')).toEqual({ integerBytes: 4 });
    expect(declaredStorage('bigint')).toEqual({ integerBytes: 8 });
    expect(declaredStorage('numeric(10, 2)')).toEqual({ precision: 10, scale: 2 });
    expect(declaredStorage('decimal(5)')).toEqual({ precision: 5, scale: 0 });
    expect(declaredStorage('numeric')).toEqual({});
    expect(declaredStorage('numeric(2,5)')).toEqual({});
    expect(declaredStorage('text')).toEqual({});
    expect(declaredStorage(undefined)).toEqual({});
  });

  it('counts the digits after the point of a number’s exact decimal form', () => {
    expect([1.25, 1e-7, 3e20, 0.1 + 0.2, 100, -2.5].map(fractionDigits)).toEqual([2, 7, 0, 17, 0, 1]);
  });
});
