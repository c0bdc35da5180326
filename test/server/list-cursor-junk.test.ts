// A cursor the service did not give (not base64url JSON, a field of the wrong type, a NUL the database cannot
// hold, a number past bigint) is a 400 `invalid_query` naming the cursor, on every list and both engines:
// never a 500, never another code for the same mistake.
import { describe, expect, it } from 'vitest';
import { ENGINES, useEngineServer } from '../helpers/engines.js';
import { pushDevDefinition } from '../helpers/push.js';
import { needs } from '../helpers/skip.js';

const encoded = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

const NOT_OF_TYPE = 'a key not of the key’s type';
const PAST_BIGINT = 'a number past bigint';

const JUNK: Array<[string, string]> = [
  ['not base64url JSON', 'not-a-cursor'],
  ['base64url of no JSON', Buffer.from('after=1').toString('base64url')],
  ['JSON that is no object', encoded(['1'])],
  ['a key of the wrong type', encoded({ after: 1, before: 1 })],
  ['a key holding a NUL', encoded({ after: 'a\u0000b', before: '1\u0000' })],
  // Not a seq (Mode B, the audit log) nor an integer id (a Mode A table keyed by one); a text id takes both.
  [NOT_OF_TYPE, encoded({ after: 'not a key', before: 'not a key' })],
  [PAST_BIGINT, encoded({ after: '9'.repeat(30), before: '9'.repeat(30) })],
];

const TEXT_KEYED = 'the records of a Mode A table keyed by a text id';

/** A warehouse table keyed by an integer id, for a Mode A table whose cursor key the database types. */
const INT_KEYED = 'analytics_dev.cursor_int_keyed';

describe.each(ENGINES)('a cursor the service did not give ($engine)', (engine) => {
  const server = useEngineServer(engine);
  let intKeyed: string | undefined;
  /** Each list, and a token that may read it (the records by an integration token, as the data plane wants). */
  const lists = async () => {
    const s = server();
    if (intKeyed === undefined) {
      await s.sql(`CREATE TABLE ${INT_KEYED} (id integer PRIMARY KEY, name text)`);
      await s.sql(`INSERT INTO ${INT_KEYED} SELECT n, 'row ' || n FROM generate_series(1, 5) AS n`);
      const pushed = await pushDevDefinition(s, 'cursor_int_keyed', ['id', 'name']);
      expect(pushed.status, JSON.stringify(pushed.body)).toBe(202);
      intKeyed = pushed.body.tableId as string;
    }
    const [crm, customers] = [s.table('crm_contacts').id, s.table('customers').id];
    const { tokens } = await s.issueToken('OWNER', {
      name: 'cursor junk',
      env: 'dev',
      scopes: [
        { tableId: crm, permissions: ['read'] },
        { tableId: customers, permissions: ['read'] },
        { tableId: intKeyed, permissions: ['read'] },
      ],
    });
    const owner = s.user('OWNER').accessToken;
    return [
      ['the records of a Mode B table', `/api/tables/${crm}/records?limit=2`, tokens.accessToken],
      [TEXT_KEYED, `/api/tables/${customers}/records?limit=2`, tokens.accessToken],
      [
        'the records of one keyed by an integer',
        `/api/tables/${intKeyed}/records?limit=2`,
        tokens.accessToken,
      ],
      ['the audit log', '/api/workspace/audit-log?limit=2', owner],
      ['the table list', '/api/tables?limit=2', owner],
    ] as const;
  };

  it.each(JUNK)('%s: 400 invalid_query on every list', needs(engine.skip), async (junk, cursor) => {
    const s = server();
    const answers = [];
    for (const [list, path, token] of await lists()) {
      if ((junk === NOT_OF_TYPE || junk === PAST_BIGINT) && list === TEXT_KEYED) continue;
      const response = await s.request('GET', `${path}&cursor=${encodeURIComponent(cursor)}`, { token });
      answers.push({ list, status: response.status, code: response.body.error?.code });
    }
    expect(answers).toEqual(answers.map(({ list }) => ({ list, status: 400, code: 'invalid_query' })));
  });

  it('a cursor the list gave still reads the next page', needs(engine.skip), async () => {
    const s = server();
    for (const [list, path, token] of await lists()) {
      const first = await s.request('GET', path, { token });
      const { nextCursor } = first.body as { nextCursor: string };
      const next = await s.request('GET', `${path}&cursor=${encodeURIComponent(nextCursor)}`, { token });
      expect({ list, status: next.status }).toEqual({ list, status: 200 });
    }
  });
});
