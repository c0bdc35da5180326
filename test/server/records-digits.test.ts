// A Mode B table keeps the digits it is sent: a decimal or an integer a double cannot hold
// (123456789012345678.123456, 9007199254740993) is stored and served as written, or refused, never
// silently rounded, on every write path (create, patch, bulk-update, import).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { createModeBTable } from '../helpers/records.js';
import { startTestServer } from '../helpers/server.js';

let server: TestServer;
let tableId: string;
let token: string;

beforeAll(async () => {
  server = await startTestServer();
  tableId = await createModeBTable(server, 'digits', [
    { name: 'sku', type: 'text', required: true },
    { name: 'amount', type: 'numeric', required: false },
    { name: 'qty', type: 'integer', required: false },
  ]);
  token = (
    await server.issueToken('OWNER', {
      name: 'digits',
      env: 'dev',
      scopes: [{ tableId, permissions: ['read', 'write'] }],
    })
  ).tokens.accessToken;
});

afterAll(async () => {
  await server?.close();
});

/** A request whose body is this JSON text as it is (a test's JSON.stringify would round it first). */
const raw = (method: string, path: string, text: string) =>
  fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(text === '' ? {} : { 'content-type': 'application/json' }),
    },
    ...(text === '' ? {} : { body: text }),
  }).then(async (r) => ({ status: r.status, text: await r.text() }));

/** The answer's text for `sku`'s record: its amount and qty as the service wrote them. */
async function served(sku: string): Promise<string> {
  const { text } = await raw('GET', `/api/tables/${tableId}/records?search=${sku}&limit=100`, '');
  return text;
}

const BIG = '123456789012345678.123456';
const HUGE = '9007199254740993';

/** The values of `sku`'s record as the service serves them, numbers as their text. */
async function valuesOf(sku: string): Promise<{ amount: string; qty: string }> {
  const text = await served(sku);
  const record = new RegExp(`\\{[^{}]*"sku":"${sku}"[^{}]*\\}`).exec(text)?.[0] ?? '';
  return {
    amount: /"amount":(-?[\d.eE+-]+|null)/.exec(record)?.[1] ?? '',
    qty: /"qty":(-?\d+|null)/.exec(record)?.[1] ?? '',
  };
}

describe('digits a double cannot hold, in a Mode B table', () => {
  it('a create keeps a decimal and an int8 above 2^53 to the digit, in its answer and every read', async () => {
    const created = await raw(
      'POST',
      `/api/tables/${tableId}/records`,
      `{"sku":"c-1","amount":${BIG},"qty":${HUGE}}`,
    );
    expect(created.status).toBe(201);
    expect(created.text).toContain(`"amount":${BIG}`);
    expect(await valuesOf('c-1')).toEqual({ amount: BIG, qty: HUGE });
    const id = (JSON.parse(created.text) as { id: string }).id;
    const one = await raw('GET', `/api/tables/${tableId}/records/${id}`, '');
    expect(one.text).toContain(`"amount":${BIG}`);
    expect(one.text).toContain(`"qty":${HUGE}`);
    // A patch of another column leaves them as they are, and its answer shows them so.
    const patched = await raw('PATCH', `/api/tables/${tableId}/records/${id}`, '{"sku":"c-1"}');
    expect(patched.status).toBe(200);
    expect(patched.text).toContain(`"amount":${BIG}`);
  });

  it('bulk-update and import keep them too, and an import on the key keeps the other columns', async () => {
    const bulk = await raw(
      'POST',
      `/api/tables/${tableId}/bulk-update`,
      `{"records":[{"data":{"sku":"b-1","amount":-0.100000000000000000001}}]}`,
    );
    expect(bulk.status).toBe(200);
    expect((await valuesOf('b-1')).amount).toBe('-0.100000000000000000001');
    const imported = await raw(
      'POST',
      `/api/tables/${tableId}/import?mode=upsert&key=sku`,
      `{"rows":[{"sku":"i-1","amount":${BIG},"qty":-${HUGE}}]}`,
    );
    expect(imported.status).toBe(200);
    expect(await valuesOf('i-1')).toEqual({ amount: BIG, qty: `-${HUGE}` });
    const again = await raw(
      'POST',
      `/api/tables/${tableId}/import?mode=upsert&key=sku`,
      `{"rows":[{"sku":"b-1","qty":1}]}`,
    );
    expect(again.status).toBe(200);
    expect(await valuesOf('b-1')).toEqual({ amount: '-0.100000000000000000001', qty: '1' });
  });

  it('an import keyed on a number finds its record however the number is written: no second record', async () => {
    const count = async (amount: string) =>
      (
        await server.sql<{ n: string }>(
          `SELECT count(*)::text AS n FROM gds.records WHERE table_id = $1 AND data -> 'amount' = $2::jsonb`,
          [tableId, amount],
        )
      )[0]?.n;
    const first = await raw(
      'POST',
      `/api/tables/${tableId}/import?mode=upsert&key=amount`,
      `{"rows":[{"sku":"k-1","amount":1.234567890123456789e5}]}`,
    );
    expect(first.status).toBe(200);
    for (const written of ['1.234567890123456789e5', '123456.7890123456789', '123456.78901234567890']) {
      const again = await raw(
        'POST',
        `/api/tables/${tableId}/import?mode=upsert&key=amount`,
        `{"rows":[{"sku":"k-1","amount":${written}}]}`,
      );
      expect(again.status).toBe(200);
      expect(JSON.parse(again.text)).toMatchObject({ inserted: 0, updated: 1 });
    }
    expect(await count('123456.7890123456789')).toBe('1');
    const plain = await raw(
      'POST',
      `/api/tables/${tableId}/import?mode=upsert&key=amount`,
      `{"rows":[{"sku":"k-2","amount":2.50}]}`,
    );
    expect(plain.status).toBe(200);
    const twice = await raw(
      'POST',
      `/api/tables/${tableId}/import?mode=upsert&key=amount`,
      `{"rows":[{"sku":"k-2","amount":25e-1}]}`,
    );
    expect(JSON.parse(twice.text)).toMatchObject({ inserted: 0, updated: 1 });
    expect(await count('2.5')).toBe('1');
  });

  it('refuses an integer past int8 (400), and a decimal past a declared numeric(p,s), whatever its length', async () => {
    const past = await raw(
      'POST',
      `/api/tables/${tableId}/records`,
      '{"sku":"p-1","qty":9223372036854775808}',
    );
    expect(past.status).toBe(400);
    expect(past.text).toContain('from -9223372036854775808 to 9223372036854775807');
    const [row] = await server.sql<{ columns: unknown }>('SELECT columns FROM gds.tables WHERE id = $1', [
      tableId,
    ]);
    const columns = (typeof row?.columns === 'string' ? JSON.parse(row.columns) : row?.columns) as Array<
      Record<string, unknown>
    >;
    await server.sql('UPDATE gds.tables SET columns = $2 WHERE id = $1', [
      tableId,
      JSON.stringify(columns.map((c) => (c.name === 'amount' ? { ...c, precision: 24, scale: 6 } : c))),
    ]);
    try {
      const fits = await raw('POST', `/api/tables/${tableId}/records`, `{"sku":"p-2","amount":${BIG}}`);
      expect(fits.status).toBe(201);
      for (const amount of ['123456789012345678.1234567', '1234567890123456789.123456']) {
        const refused = await raw(
          'POST',
          `/api/tables/${tableId}/records`,
          `{"sku":"p-3","amount":${amount}}`,
        );
        expect(refused.status, amount).toBe(400);
      }
    } finally {
      await server.sql('UPDATE gds.tables SET columns = $2 WHERE id = $1', [
        tableId,
        JSON.stringify(columns),
      ]);
    }
  });

  it('still refuses a body that is not JSON, or sets __proto__', async () => {
    expect((await raw('POST', `/api/tables/${tableId}/records`, '{"sku":')).status).toBe(400);
    const proto = await raw(
      'POST',
      `/api/tables/${tableId}/records`,
      `{"sku":"x","amount":${BIG},"__proto__":{"admin":true}}`,
    );
    expect(proto.status).toBe(400);
  });
});
