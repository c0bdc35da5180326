// Digits of a warehouse number survive the data plane: a Mode A table over a view with a numeric(30,6) and a
// bigint above 2^53 is served with the warehouse's own digits (not a double's), and `gds records list|get
// --json`, the table view and `gds records export` (NDJSON and CSV) print them as received, on PGlite and on
// PostgreSQL. Numbers that a double holds exactly stay plain JSON numbers.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { postgresTestUrl, startTestServer } from '../helpers/server.js';
import { pushDevDefinition } from '../helpers/push.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { createModeBTable } from '../helpers/records.js';

const DECIMAL = '123456789012345678.123456';
const BIG = '9007199254740993';
const target = postgresTestUrl();

describe.each([
  ['pglite', undefined],
  ['postgres', 'skip' in target ? target.skip : undefined],
] as const)('warehouse digits on %s', (database, skip) => {
  let server: TestServer;
  let tableId: string;
  let env: Record<string, string>;
  let dir: string;

  beforeAll(async () => {
    if (skip !== undefined) return;
    server = await startTestServer({ rateLimit: 1_000_000, database });
    await server.sql(
      `CREATE TABLE analytics_dev.ledger_base (id integer PRIMARY KEY, amount numeric(30,6), big bigint, small integer, ratio double precision)`,
    );
    await server.sql(
      `INSERT INTO analytics_dev.ledger_base VALUES (1, ${DECIMAL}, ${BIG}, 42, 0.5), (2, 1.5, 7, -3, 0.1)`,
    );
    await server.sql(`CREATE VIEW analytics_dev.ledger AS SELECT * FROM analytics_dev.ledger_base`);
    const pushed = await pushDevDefinition(server, 'ledger', ['id', 'amount', 'big', 'small', 'ratio']);
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(202);
    tableId = pushed.body.governanceId as string;
    const issued = await server.issueToken('OWNER', {
      name: 'ledger',
      env: 'dev',
      scopes: [{ tableId, permissions: ['read'] }],
    });
    env = { SERVICE_TOKEN: issued.tokens.accessToken, SERVICE_API_URL: server.url };
    dir = await mkdtemp(join(tmpdir(), 'gds-precision-'));
  });

  afterAll(async () => {
    if (skip !== undefined) return;
    await rm(dir, { recursive: true, force: true });
    await server?.close();
  });

  const gds = (args: string[]) => runInProcess(['records', ...args], { env });
  const raw = async (path: string) => {
    const response = await fetch(`${server.url}${path}`, {
      headers: { authorization: `Bearer ${env.SERVICE_TOKEN}` },
    });
    expect(response.status).toBe(200);
    return response.text();
  };

  it.skipIf(skip !== undefined)('serves the warehouse digits in list and get answers', async () => {
    const listed = await raw(`/api/tables/${tableId}/records?limit=10`);
    expect(listed).toContain(`"amount":${DECIMAL}`);
    expect(listed).toContain(`"big":${BIG}`);
    // Numbers a double holds stay plain numbers.
    expect(listed).toContain('"small":42');
    expect(listed).toContain('"ratio":0.5');
    expect(listed).toContain('"amount":1.5');
    const got = await raw(`/api/tables/${tableId}/records/1`);
    expect(got).toContain(`"amount":${DECIMAL}`);
    expect(got).toContain(`"big":${BIG}`);
  });

  it.skipIf(skip !== undefined)(
    'prints them as received: records list --json, get --json, the views',
    async () => {
      const listed = await gds(['list', tableId, '--json']);
      expect(listed.stderr).toBe('');
      expect(listed.code).toBe(0);
      const lines = listed.stdout.trim().split('\n');
      expect(lines).toHaveLength(2);
      for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
      expect(lines[0]).toContain(`"amount":${DECIMAL}`);
      expect(lines[0]).toContain(`"big":${BIG}`);
      expect(lines[1]).toContain('"amount":1.5');
      expect(lines[1]).toContain('"small":-3');

      const picked = await gds(['list', tableId, '--jq', '.amount']);
      expect(picked.code, picked.stderr).toBe(0);
      expect(picked.stdout).toBe(`${DECIMAL}\n1.5\n`);
      const shaped = await gds(['list', tableId, '--json', 'id,big']);
      expect(shaped.stdout).toBe(`{"id":"1","big":${BIG}}\n{"id":"2","big":7}\n`);

      const got = await gds(['get', tableId, '1', '--json']);
      expect(got.code).toBe(0);
      expect(got.stdout).toContain(`"amount":${DECIMAL}`);
      expect(got.stdout).toContain(`"big":${BIG}`);

      const table = await gds(['list', tableId]);
      expect(table.code).toBe(0);
      expect(table.stdout).toContain(DECIMAL);
      expect(table.stdout).toContain(BIG);
      const one = await gds(['get', tableId, '1']);
      expect(one.code).toBe(0);
      expect(one.stdout).toMatch(new RegExp(`amount\\s+${DECIMAL.replace('.', '\\.')}\\n`));
      expect(one.stdout).toMatch(new RegExp(`big\\s+${BIG}\\n`));
    },
  );

  it.skipIf(skip !== undefined)('exports them as received, NDJSON and CSV', async () => {
    const ndjson = await gds(['export', tableId]);
    expect(ndjson.stderr).toBe('');
    expect(ndjson.code).toBe(0);
    const lines = ndjson.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain(`"amount":${DECIMAL}`);
    expect(lines[0]).toContain(`"big":${BIG}`);

    const file = join(dir, `ledger-${database}.csv`);
    const csv = await gds(['export', tableId, '--format', 'csv', '--output', file]);
    expect(csv.code, csv.stderr).toBe(0);
    const text = await readFile(file, 'utf8');
    const [header, first, second] = text.trim().split(/\r?\n/);
    expect(header).toBe('id,amount,big,small,ratio');
    expect(first).toBe(`1,${DECIMAL},${BIG},42,0.5`);
    expect(second).toBe('2,1.5,7,-3,0.1');
  });

  it.skipIf(skip !== undefined)(
    'imports them into a Mode B table unchanged, from the NDJSON and the CSV export alike',
    async () => {
      const copies = await Promise.all(
        ['ndjson', 'csv'].map((format) =>
          createModeBTable(server, `ledger_copy_${format}`, [
            { name: 'amount', type: 'numeric', required: false },
            { name: 'big', type: 'integer', required: false },
            { name: 'small', type: 'integer', required: false },
            { name: 'ratio', type: 'numeric', required: false },
          ]),
        ),
      );
      const writer = await server.issueToken('OWNER', {
        name: 'ledger-copies',
        env: 'dev',
        scopes: [tableId, ...copies].map((id) => ({
          tableId: id,
          permissions: ['read', 'write'] as Array<'read' | 'write'>,
        })),
      });
      const as = { env: { ...env, SERVICE_TOKEN: writer.tokens.accessToken } };
      for (const [index, format] of (['ndjson', 'csv'] as const).entries()) {
        const file = join(dir, `ledger-copy-${database}.${format}`);
        const exported = await runInProcess(
          ['records', 'export', tableId, '--format', format, '--output', file],
          as,
        );
        expect(exported.code, exported.stderr).toBe(0);
        const copy = copies[index] ?? '';
        const imported = await runInProcess(['records', 'import', copy, '-f', file, '--ignore-ids'], as);
        expect(imported.code, imported.stderr).toBe(0);
        const back = await runInProcess(['records', 'export', copy], as);
        expect(back.code, back.stderr).toBe(0);
        const lines = back.stdout
          .trim()
          .split('\n')
          .map((line) => line.replace(/,"id":"[^"]*"/, ''));
        expect(lines.sort(), format).toEqual([
          '{"amount":1.5,"big":7,"small":-3,"ratio":0.1}',
          `{"amount":${DECIMAL},"big":${BIG},"small":42,"ratio":0.5}`,
        ]);
      }
    },
  );
});
