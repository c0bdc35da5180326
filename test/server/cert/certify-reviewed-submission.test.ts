// Certify pinned to the submission the certifier reviewed (`reviewedProofId`, beyond the spec): a table
// submitted again since is 409 `submission_changed` and nothing changes; without the field certify is the
// spec's; a caller who may not certify learns nothing from it (refused before the body is read).
import { describe, expect, it } from 'vitest';
import { ENGINES, useEngineServer } from '../../helpers/engines.js';
import type { TestServer } from '../../helpers/server.js';
import { needs } from '../../helpers/skip.js';

describe.each(ENGINES)('certify of a reviewed submission on $engine', ({ postgres, skip }) => {
  const server = useEngineServer({ postgres, skip }, { jobs: 'manual' });

  /** `gate submit` as the table's owner: the new submission's proof id. */
  const submit = async (s: TestServer, tableId: string): Promise<string> => {
    s.clock.advance(1000);
    const answer = await s.request('POST', `/api/tables/${tableId}/gate-submissions`, {
      token: s.user('OWNER').accessToken,
      body: {},
    });
    expect(answer.status).toBe(201);
    return answer.body.id as string;
  };
  const certify = (s: TestServer, tableId: string, body?: unknown, token = s.user('STEWARD').accessToken) =>
    s.request('POST', `/api/tables/${tableId}/semantic-contract/certify`, {
      token,
      ...(body === undefined ? {} : { body }),
    });
  const facts = async (s: TestServer, tableId: string) => {
    const [row] = await s.sql<{ state: string; versions: number; open: number }>(
      `SELECT t.state,
              (SELECT count(*)::int FROM gds.contract_versions v WHERE v.table_id = t.id AND v.kind = 'CERTIFICATION') AS versions,
              (SELECT count(*)::int FROM gds.notifications n WHERE n.table_id = t.id AND n.closed_at IS NULL) AS open
         FROM gds.tables t WHERE t.id = $1`,
      [tableId],
    );
    return row;
  };
  /** Two submissions: the one a steward reviewed, the one filed since, and the table's facts after them. */
  const submittedTwice = async (s: TestServer, tableId: string) => {
    const reviewed = await submit(s, tableId);
    const current = await submit(s, tableId);
    return { reviewed, current, before: await facts(s, tableId) };
  };

  it(
    'a submission filed since the reviewed one: 409 submission_changed naming it, nothing certified',
    needs(skip),
    async () => {
      const s = server();
      const orders = s.table('orders').id;
      const { reviewed, current, before } = await submittedTwice(s, orders);
      const refused = await certify(s, orders, { note: 'looked at it', reviewedProofId: reviewed });
      expect(refused.status, JSON.stringify(refused.body)).toBe(409);
      expect(refused.body.error.code).toBe('submission_changed');
      expect(refused.body.error.message).toContain('submitted again');
      expect(refused.body.error.message).toContain('Review the new submission');
      expect(refused.body.error.details).toMatchObject({ tableId: orders, currentProofId: current });
      expect(typeof refused.body.error.details.submittedAt).toBe('string');
      expect(await facts(s, orders)).toEqual({ ...before, state: 'PENDING_REVIEW' });
      // The new submission, once reviewed, certifies.
      const certified = await certify(s, orders, { reviewedProofId: current });
      expect(certified.status, JSON.stringify(certified.body)).toBe(200);
      expect(await facts(s, orders)).toMatchObject({ state: 'CERTIFIED', versions: before!.versions + 1 });
    },
  );

  it(
    'without reviewedProofId certify is as before: the newest submission is certified',
    needs(skip),
    async () => {
      const s = server();
      const customers = s.table('customers').id;
      await submit(s, customers);
      await submit(s, customers);
      const certified = await certify(s, customers, { note: 'reviewed' });
      expect(certified.status, JSON.stringify(certified.body)).toBe(200);
      expect((await facts(s, customers))?.state).toBe('CERTIFIED');
    },
  );

  it(
    'a caller who may not certify is refused before the body: no word of the submission',
    needs(skip),
    async () => {
      const s = server();
      const orders = s.table('orders').id;
      const { reviewed, current, before } = await submittedTwice(s, orders);
      for (const body of [{ reviewedProofId: reviewed }, { reviewedProofId: 42 }]) {
        const member = await certify(s, orders, body, s.user('MEMBER').accessToken);
        expect(member.status, JSON.stringify(member.body)).toBe(403);
        const cli = await certify(s, orders, body, s.user('STEWARD').cliToken);
        expect(cli.status).toBe(401);
        for (const answer of [member, cli]) {
          expect(JSON.stringify(answer.body)).not.toContain(current);
          expect(answer.body.error.code).not.toBe('submission_changed');
        }
      }
      expect(await facts(s, orders)).toEqual(before);
    },
  );

  it('reviewedProofId must be a string (400, nothing certified)', needs(skip), async () => {
    const s = server();
    const orders = s.table('orders').id;
    await submit(s, orders);
    const refused = await certify(s, orders, { reviewedProofId: 42 });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toMatchObject({ field: 'reviewedProofId' });
    expect((await facts(s, orders))?.state).toBe('PENDING_REVIEW');
  });
});
