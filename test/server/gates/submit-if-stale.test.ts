// `POST /api/tables/{id}/gate-submissions?ifStale=true` (ours; `gds apply --submit` of a table it planned as a
// stale submission): a table waiting for review on a fresh proof (someone submitted it since the caller
// looked) is left as it is, 200 with that proof and `skipped: 'fresh'`: no scan, no new proof, no second
// steward notification. Checked before the scan, and again under the table's row lock where a submission
// committed during the scan is seen. A stale one is submitted; without the parameter a submission is the
// spec's, always a full scan.
import { beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, useEngineServer } from '../../helpers/engines.js';
import { needs } from '../../helpers/skip.js';
import { holdTableRow } from '../../helpers/row-holder.js';

describe.each(ENGINES)('a submission ifStale on $engine', ({ postgres, skip }) => {
  const server = useEngineServer({ postgres, skip }, { jobs: 'manual' });
  let orders = '';
  let token = '';

  beforeAll(() => {
    if (skip !== undefined) return;
    orders = server().table('orders').id;
    token = server().user('OWNER').accessToken;
  });

  const submit = (query = '', key?: string) =>
    server().request('POST', `/api/tables/${orders}/gate-submissions${query}`, {
      token,
      ...(key === undefined ? {} : { headers: { 'idempotency-key': key } }),
    });

  /** The table's state, its submissions (proofs), its steward notifications and GATE1_SUBMITTED audit entries. */
  const held = async () => {
    const [row] = await server().sql<{ state: string; proofs: number; notified: number; audited: number }>(
      `SELECT t.state,
              (SELECT count(*)::int FROM gds.gate_proofs p WHERE p.table_id = t.id AND p.kind = 'submit') AS proofs,
              (SELECT count(*)::int FROM gds.notifications n WHERE n.table_id = t.id) AS notified,
              (SELECT count(*)::int FROM gds.audit_log a WHERE a.table_id = t.id AND a.action = 'GATE1_SUBMITTED')
                AS audited
         FROM gds.tables t WHERE t.id = $1`,
      [orders],
    );
    return row;
  };
  /** What an ingest does to the table's proof: it is stale. */
  const ingest = () =>
    server().sql('UPDATE gds.tables SET data_version = data_version + 1 WHERE id = $1', [orders]);

  it('submits a table not waiting for review, and one waiting on a stale proof', needs(skip), async () => {
    const first = await submit('?ifStale=true');
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body).toMatchObject({ state: 'PENDING_REVIEW', kind: 'submit' });
    expect(first.body).not.toHaveProperty('skipped');
    expect(await held()).toEqual({ state: 'PENDING_REVIEW', proofs: 1, notified: 1, audited: 1 });

    await ingest();
    const again = await submit('?ifStale=true');
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.body).not.toHaveProperty('skipped');
    expect(await held()).toMatchObject({ state: 'PENDING_REVIEW', proofs: 2, audited: 2 });
  });

  it(
    'leaves a table waiting for review on a fresh proof as it is: 200, that proof, skipped fresh',
    needs(skip),
    async () => {
      const before = await held();
      const [latest] = await server().sql<{ id: string }>(
        `SELECT id FROM gds.gate_proofs WHERE table_id = $1 ORDER BY seq DESC LIMIT 1`,
        [orders],
      );
      const skipped = await submit('?ifStale=true');
      expect(skipped.status, JSON.stringify(skipped.body)).toBe(200);
      expect(skipped.body).toMatchObject({
        id: latest?.id,
        kind: 'submit',
        tableId: orders,
        state: 'PENDING_REVIEW',
        skipped: 'fresh',
      });
      expect(skipped.body).not.toHaveProperty('notificationId');
      expect(await held()).toEqual(before);
    },
  );

  it(
    'without ifStale (or ifStale=false) submits as the spec says, a full scan every time',
    needs(skip),
    async () => {
      const before = await held();
      for (const query of ['', '?ifStale=false']) {
        const submitted = await submit(query);
        expect(submitted.status, query).toBe(201);
        expect(submitted.body).not.toHaveProperty('skipped');
      }
      expect(await held()).toMatchObject({
        proofs: (before?.proofs ?? 0) + 2,
        audited: (before?.audited ?? 0) + 2,
      });
    },
  );

  it('refuses an ifStale that is not true or false', needs(skip), async () => {
    const refused = await submit('?ifStale=yes');
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'invalid_query', details: { parameter: 'ifStale' } });
  });

  // PGlite serves one connection at a time: no second one to hold the row with.
  if (postgres)
    it(
      'is checked again under the row lock: a submission committed during the scan is not followed by a second',
      needs(skip),
      async () => {
        await ingest();
        const before = await held();
        // A person's submission in flight: it holds the table's row and has not committed its proof yet.
        const person = await holdTableRow(server(), orders);
        try {
          const submitting = submit('?ifStale=true', 'run-7-orders');
          await person.waitForBlocked();
          await person.client.query(
            `INSERT INTO gds.gate_proofs (id, table_id, kind, passed, results, failed_predicates, sample,
             definition_version, gate1_version, data_version, created_by, created_at)
           SELECT 'prf_person', t.id, 'submit', true, '[]', '[]', NULL, t.definition_version, t.gate1_version,
                  t.data_version, $2, now()
             FROM gds.tables t WHERE t.id = $1`,
            [orders, server().user('STEWARD').userId],
          );
          await person.client.query('COMMIT');
          const submitted = await submitting;
          expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
          expect(submitted.body).toMatchObject({ id: 'prf_person', skipped: 'fresh' });
          expect(await held()).toEqual({ ...before, proofs: (before?.proofs ?? 0) + 1 });
          // Its key sent again: this 200 is the stored answer, replayed with the header the contract lists
          // for it (the contract check fails the file on a replayed status that does not document it).
          const replayed = await submit('?ifStale=true', 'run-7-orders');
          expect(replayed.status).toBe(200);
          expect(replayed.headers.get('idempotent-replayed')).toBe('true');
          expect(replayed.body).toEqual(submitted.body);
          expect(server().violations()).toEqual([]);
        } finally {
          await person.end();
        }
      },
    );
});
