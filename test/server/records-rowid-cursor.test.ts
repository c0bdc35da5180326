// The records of a keyless warehouse table page by physical row id, and their cursor carries the 32-bit
// transaction ids the listing's start could not see. A cursor made from a real one with a transaction id past
// 32 bits is one the service did not give: 400 `invalid_query` naming the cursor, as every list answers one
// (docs/server.md), on both engines. It was the database's 400 `invalid_input` (22003) on PGlite, and a page
// read against another transaction on PostgreSQL.
import { describe, expect, it } from 'vitest';
import { ENGINES, useEngineServer } from '../helpers/engines.js';
import { pushDevDefinition } from '../helpers/push.js';
import { needs } from '../helpers/skip.js';

const PAST_32_BITS = '4294967296';

const keyOf = (cursor: string) =>
  (JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { after: string }).after;
const cursorOf = (key: string) => Buffer.from(JSON.stringify({ after: key })).toString('base64url');

describe.each(ENGINES)('a keyless table’s records cursor ($engine)', (engine) => {
  const server = useEngineServer(engine);

  const firstPage = async () => {
    const s = server();
    await s.sql('CREATE TABLE analytics_dev.rowid_keyless (id integer, name text)');
    await s.sql(
      `INSERT INTO analytics_dev.rowid_keyless SELECT n, 'row ' || n FROM generate_series(1, 3) AS n`,
    );
    const pushed = await pushDevDefinition(s, 'rowid_keyless', ['id', 'name']);
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(202);
    const tableId = pushed.body.tableId as string;
    const { tokens } = await s.issueToken('OWNER', {
      name: 'rowid cursor',
      env: 'dev',
      scopes: [{ tableId, permissions: ['read'] }],
    });
    const path = `/api/tables/${tableId}/records?limit=2`;
    const first = await s.request('GET', path, { token: tokens.accessToken });
    expect(first.status).toBe(200);
    return { path, token: tokens.accessToken, key: keyOf(first.body.nextCursor as string) };
  };

  it(
    'a transaction id past 32 bits is 400 invalid_query; the cursor given reads the last page',
    needs(engine.skip),
    async () => {
      const s = server();
      const { path, token, key } = await firstPage();
      expect(key).toMatch(/^rowid:\d+:\d+:[\d,]*:\(\d+,\d+\)$/);
      const made = [
        key.replace(/^(rowid:\d+:)\d+/, `$1${PAST_32_BITS}`),
        key.replace(/^(rowid:\d+:\d+:)[\d,]*/, `$1${PAST_32_BITS}`),
      ];
      const answers = [];
      for (const cursor of made) {
        const response = await s.request('GET', `${path}&cursor=${cursorOf(cursor)}`, { token });
        answers.push({
          status: response.status,
          code: response.body.error?.code,
          parameter: response.body.error?.details?.parameter,
        });
      }
      expect(answers).toEqual(made.map(() => ({ status: 400, code: 'invalid_query', parameter: 'cursor' })));
      const last = await s.request('GET', `${path}&cursor=${cursorOf(key)}`, { token });
      expect(last.status).toBe(200);
      expect(last.body.records.map((r: { name: string }) => r.name)).toEqual(['row 3']);
    },
  );
});
