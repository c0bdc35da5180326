// DELETE /api/tables/{id} (`gds delete`, §4.9, §7.3) in §7's order, every refusal before the body is read:
// a table that does not exist (404), outside the person's environments (403), then a person neither its
// owner nor a workspace admin (403 "Only table owners or workspace admins can delete"), whatever body the
// request carries (not JSON, over the request limit); only then a Mode B table (400 "CLI delete is
// restricted to warehouse-connected governance artifacts"), for a person who may delete. A refused delete
// leaves the table as it was, and the audit trail keeps the attempt.
import { describe, expect, it } from 'vitest';
import { REQUEST_BODY_LIMIT_BYTES } from '../../src/core/artifact-bounds.js';
import { ENGINES, useEngineServer } from '../helpers/engines.js';
import { rawAnswer } from '../helpers/raw-answer.js';
import { needs } from '../helpers/skip.js';

const NOT_JSON = '{"reason": [';
const OVERSIZED = JSON.stringify({ pad: 'x'.repeat(REQUEST_BODY_LIMIT_BYTES + 1024) });
const BODIES = [
  ['not JSON', NOT_JSON],
  ['oversized', OVERSIZED],
  ['no body', undefined],
] as const;

describe.each(ENGINES)('DELETE of a table and a caller it refuses on $engine', ({ postgres, skip }) => {
  const server = useEngineServer({ postgres, skip }, { jobs: 'manual' });

  const remove = async (table: string, token: string, body: string | undefined) =>
    body === undefined
      ? (({ status, body: answer }) => ({
          status,
          code: (answer as { error?: { code?: string } }).error?.code,
        }))(await server().request('DELETE', `/api/tables/${table}`, { token }))
      : rawAnswer(`${server().url}/api/tables/${table}`, 'DELETE', token, body);

  /** The table's state and whether it is active, and how many refused deletes the audit trail holds of it. */
  const held = async (table: string) => {
    const [row] = await server().sql<{ state: string; active: boolean; refused: number }>(
      `SELECT state, active,
              (SELECT count(*)::int FROM gds.audit_log a
                WHERE a.table_id = t.id AND a.action = 'DELETE_REFUSED') AS refused
         FROM gds.tables t WHERE id = $1`,
      [table],
    );
    return row;
  };

  it(
    'is 403 for a person neither the table’s owner nor an admin, whatever the body, on a Mode B table too (the role before the mode)',
    needs(skip),
    async () => {
      // The STEWARD owns `customers`, neither `orders` (the MEMBER's) nor `crm_contacts` (Mode B, the ADMIN's),
      // and may act in dev.
      const steward = server().user('STEWARD').accessToken;
      for (const [name, state] of [
        ['orders', 'QUARANTINED'],
        ['crm_contacts', 'CERTIFIED'],
      ] as const) {
        const table = server().table(name).id;
        for (const [what, body] of BODIES) {
          expect(await remove(table, steward, body), `${name} ${what}`).toEqual({
            status: 403,
            code: 'delete_forbidden',
          });
        }
        expect(await held(table)).toEqual({ state, active: true, refused: BODIES.length });
      }
    },
  );

  it('is 400 on a Mode B table for its owner or an admin, with the spec’s message', needs(skip), async () => {
    const crm = server().table('crm_contacts').id;
    const answer = await server().request('DELETE', `/api/tables/${crm}`, {
      token: server().user('OWNER').accessToken,
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      error: {
        code: 'mode_b_delete',
        message: 'CLI delete is restricted to warehouse-connected governance artifacts',
      },
    });
    expect(await held(crm)).toMatchObject({ state: 'CERTIFIED', active: true });
  });

  it(
    'is 404 for a table that does not exist and 403 outside the person’s environments, whatever the body',
    needs(skip),
    async () => {
      // The MEMBER acts in dev alone; `customers_production` is in production.
      const production = server().table('customers_production').id;
      const member = server().user('MEMBER').accessToken;
      for (const [what, body] of BODIES) {
        expect(await remove('tbl_none', member, body), what).toEqual({
          status: 404,
          code: 'table_not_found',
        });
        expect(await remove(production, member, body), what).toEqual({
          status: 403,
          code: 'environment_forbidden',
        });
      }
    },
  );

  it('deletes for the table’s owner', needs(skip), async () => {
    const orders = server().table('orders').id;
    const answer = await server().request('DELETE', `/api/tables/${orders}`, {
      token: server().user('MEMBER').accessToken,
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(await held(orders)).toMatchObject({ active: false });
  });
});
