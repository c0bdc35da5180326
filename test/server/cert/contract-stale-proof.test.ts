// The review proof is taken at the table's contract revision too: Gate 1's grain-uniqueness predicate runs over
// the contract's grain key, so a contract changed after `gate submit` (set-intent, a promotion or bundle import,
// a restore) leaves a proof that never checked what certify would record. The queue says the proof is stale
// with `contract` among what changed; certify answers 422 stale_proof and leaves the table waiting; a new
// submission certifies. Certify itself does not move the revision.
import { describe, expect, it } from 'vitest';
import { ENGINES, useEngineServer } from '../../helpers/engines.js';
import { needs } from '../../helpers/skip.js';
import { submit } from './arrange.js';

const EVIDENCE = { evidenceFileName: 'review.pdf', evidenceHash: 'ab'.repeat(32) };

describe.each(ENGINES)('a contract changed after the submission ($engine)', (engine) => {
  const server = useEngineServer(engine, { jobs: 'manual' });
  const orders = () => server().table('orders').id;
  const steward = () => server().user('STEWARD').accessToken;
  const queueEntry = async (tableId: string, role: 'STEWARD' | 'OWNER' = 'STEWARD') =>
    (
      await server().request('GET', '/api/notifications', { token: server().user(role).cliToken })
    ).body.notifications.find((n: { tableId: string }) => n.tableId === tableId);
  const setIntent = (tableId: string, body: Record<string, unknown>) =>
    server().request('PATCH', `/api/tables/${tableId}/semantic-contract`, { token: steward(), body });
  const certify = (tableId: string, token = steward()) =>
    server().request('POST', `/api/tables/${tableId}/semantic-contract/certify`, {
      token,
      body: EVIDENCE,
    });
  const tableRow = async (tableId: string) =>
    (
      await server().sql<{ state: string; contract_version: number }>(
        'SELECT state, contract_version FROM gds.tables WHERE id = $1',
        [tableId],
      )
    )[0];

  it(
    'makes the proof stale: the queue names the contract, certify is 422 and the table waits; a resubmission certifies',
    needs(engine.skip),
    async () => {
      const id = orders();
      await submit(server(), id);
      const before = await queueEntry(id);
      expect(before.proof).toMatchObject({ fresh: true, changedSince: [] });
      const stamped = before.proof.tableVersion.contract as number;
      expect(typeof stamped).toBe('number');

      const patched = await setIntent(id, {
        grain: 'one row per order',
        grainType: 'ONE_PER_ENTITY',
        grainKeyColumns: ['order_id'],
      });
      expect(patched.status).toBe(200);

      const after = await queueEntry(id);
      expect(after.state).toBe('PENDING_REVIEW');
      expect(after.proof).toMatchObject({
        fresh: false,
        changedSince: [{ what: 'contract', from: stamped, to: stamped + 1 }],
      });

      const refused = await certify(id);
      expect(refused.status).toBe(422);
      expect(refused.body.error.code).toBe('stale_proof');
      expect(refused.body.error.message).toMatch(/contract changed since (the )?submission/i);
      expect(refused.body.error.message).toContain('gate submit again');
      expect(await tableRow(id)).toEqual({ state: 'PENDING_REVIEW', contract_version: stamped + 1 });

      await submit(server(), id);
      expect((await queueEntry(id)).proof).toMatchObject({ fresh: true, changedSince: [] });
      const certified = await certify(id);
      expect(certified.status).toBe(200);
      expect(certified.body.contract).toMatchObject({ grainKeyColumns: ['order_id'], status: 'CERTIFIED' });
      // Certify stamps the live contract (certifiedAt) without moving the revision its proof was taken at.
      expect(await tableRow(id)).toEqual({ state: 'CERTIFIED', contract_version: stamped + 1 });
    },
  );

  it('a PATCH that changes nothing leaves the proof fresh', needs(engine.skip), async () => {
    const id = server().table('customers').id;
    await submit(server(), id);
    const current = await server().request('GET', `/api/tables/${id}/semantic-contract`, {
      token: steward(),
    });
    expect((await setIntent(id, { meaning: current.body.contract.meaning })).body.changed).toBe(false);
    expect((await queueEntry(id)).proof).toMatchObject({ fresh: true, changedSince: [] });
  });

  it('a contract change on a table not in review moves only its revision', needs(engine.skip), async () => {
    const id = server().table('crm_contacts').id;
    const before = await tableRow(id);
    expect(before?.state).not.toBe('PENDING_REVIEW');
    const patched = await setIntent(id, { intent: 'METRIC', meaning: 'Contacts of the CRM' });
    expect(patched.status).toBe(200);
    expect(await tableRow(id)).toEqual({
      state: before?.state,
      contract_version: (before?.contract_version ?? 0) + 1,
    });
    // Not waiting for review: certify is refused for the state, as before (400), not for a proof.
    const refused = await certify(id);
    expect(refused.status).toBe(400);
  });

  it(
    'a proof stamped before contract revisions were recorded is not compared on them',
    needs(engine.skip),
    async () => {
      const id = server().table('orders').id;
      await submit(server(), id);
      await server().sql(
        `UPDATE gds.gate_proofs SET contract_version = NULL
        WHERE id = (SELECT id FROM gds.gate_proofs WHERE table_id = $1 ORDER BY seq DESC LIMIT 1)`,
        [id],
      );
      expect((await setIntent(id, { meaning: 'Orders placed in the web shop, again' })).status).toBe(200);
      const entry = await queueEntry(id);
      expect(entry.proof).toMatchObject({ fresh: true, changedSince: [] });
      expect(entry.proof.tableVersion.contract).toBeUndefined();
      expect((await certify(id)).status).toBe(200);
    },
  );
  it(
    'a restore of an earlier contract moves the revision, one of what it holds does not; the queue says what moved since certified',
    needs(engine.skip),
    async () => {
      // orders was certified above (version 1 and on) at the grain key order_id.
      const id = orders();
      const versions = await server().request('GET', `/api/tables/${id}/versions`, { token: steward() });
      const first = versions.body.versions[0].version as number;
      expect((await setIntent(id, { meaning: 'Orders, said otherwise' })).status).toBe(200);
      const before = await tableRow(id);
      const restored = await server().request('POST', `/api/tables/${id}/versions/restore`, {
        token: steward(),
        body: { to: first, reason: 'the reviewed meaning' },
      });
      expect(restored.status).toBe(200);
      const now = (before?.contract_version ?? 0) + 1;
      expect(await tableRow(id)).toEqual({ state: before?.state, contract_version: now });
      const again = await server().request('POST', `/api/tables/${id}/versions/restore`, {
        token: steward(),
        body: { to: first, reason: 'the same again' },
      });
      expect(again.status).toBe(200);
      expect((await tableRow(id))?.contract_version).toBe(now);
      // Certified at this revision, then changed and submitted again: the queue says the contract moved since.
      await submit(server(), id);
      expect((await certify(id)).status).toBe(200);
      expect((await setIntent(id, { meaning: 'Orders, as certified next' })).status).toBe(200);
      await submit(server(), id);
      const entry = await queueEntry(id);
      expect(entry.proof).toMatchObject({ fresh: true, tableVersion: { contract: now + 1 } });
      expect(entry.sinceCertified.tableVersion).toMatchObject({ contract: now });
      expect(entry.sinceCertified.changed).toEqual([{ what: 'contract', from: now, to: now + 1 }]);
    },
  );

  it(
    'a contract and gate1.yml both moved: certify names both and lists them under details.changedSince',
    needs(engine.skip),
    async () => {
      const id = orders();
      await submit(server(), id);
      const stamped = (await queueEntry(id)).proof.tableVersion as { gate1: number; contract: number };
      expect((await setIntent(id, { meaning: 'Orders, changed with their checks' })).status).toBe(200);
      const gate1 = await server().request('PUT', `/api/tables/${id}/gate1`, {
        token: steward(),
        body: { content: 'fieldOverrides:\n  - field: order_id\n    nullRate: { warn: 0.1, fail: 0.2 }\n' },
      });
      expect(gate1.status).toBe(200);
      const refused = await certify(id);
      expect(refused.status).toBe(422);
      expect(refused.body.error.code).toBe('stale_proof');
      expect(refused.body.error.message).toContain(
        `gate1.yml (v${stamped.gate1}->v${stamped.gate1 + 1}) and the semantic contract ` +
          `(v${stamped.contract}->v${stamped.contract + 1}) changed since submission`,
      );
      expect(refused.body.error.details.changedSince).toEqual([
        { what: 'gate1', from: stamped.gate1, to: stamped.gate1 + 1 },
        { what: 'contract', from: stamped.contract, to: stamped.contract + 1 },
      ]);
      expect((await tableRow(id))?.state).toBe('PENDING_REVIEW');
    },
  );

  it(
    "a promotion landing another contract moves the target table's revision",
    needs(engine.skip),
    async () => {
      const customers = server().table('customers').id;
      const production = server().table('customers_production').id;
      // The steward works in dev only: the owner submits and promotes in production.
      const owner = server().user('OWNER').accessToken;
      const promote = () =>
        server().request('POST', `/api/tables/${customers}/promotions`, {
          token: owner,
          body: { to: 'production', replaceId: production },
        });
      // The two tables hold the same definition and contract: a promotion lands nothing.
      expect((await promote()).body).toMatchObject({ changed: false });
      await submit(server(), production, owner);
      const before = await tableRow(production);
      expect((await setIntent(customers, { meaning: 'Customers who bought at least once' })).status).toBe(
        200,
      );
      const promoted = await promote();
      expect(promoted.body).toMatchObject({ changed: true, tableId: production });
      // The landing re-registers the definition, which quarantines the table: it is submitted again anyway.
      expect(await tableRow(production)).toEqual({
        state: 'QUARANTINED',
        contract_version: (before?.contract_version ?? 0) + 1,
      });
    },
  );

  it(
    'allowedConsumers is a set: a reorder is no change (no revision, proof fresh); a real change stores the order given',
    needs(engine.skip),
    async () => {
      const id = server().table('customers').id;
      expect((await setIntent(id, { allowedConsumers: ['HUMAN', 'AI'] })).body.changed).toBe(true);
      await submit(server(), id);
      const before = await tableRow(id);
      const reordered = await setIntent(id, { allowedConsumers: ['AI', 'HUMAN'] });
      expect(reordered.status).toBe(200);
      expect(reordered.body.changed).toBe(false);
      expect(reordered.body.contract.allowedConsumers).toEqual(['HUMAN', 'AI']);
      expect(await tableRow(id)).toEqual(before);
      expect((await queueEntry(id)).proof).toMatchObject({ fresh: true, changedSince: [] });
      const changed = await setIntent(id, {
        allowedConsumers: ['AI', 'HUMAN'],
        meaning: 'Customers, reordered',
      });
      expect(changed.body).toMatchObject({ changed: true, contract: { allowedConsumers: ['AI', 'HUMAN'] } });
      expect((await tableRow(id))?.contract_version).toBe((before?.contract_version ?? 0) + 1);
    },
  );

  it(
    'the audit entry of a contract write that moves the revision records it: set-intent, a restore, a promotion',
    needs(engine.skip),
    async () => {
      const lastAudit = async (tableId: string, action: string) =>
        (
          await server().sql<{ details: { contractVersion?: { from: number; to: number } } }>(
            `SELECT details FROM gds.audit_log WHERE table_id = $1 AND action = $2 ORDER BY seq DESC LIMIT 1`,
            [tableId, action],
          )
        )[0]?.details;
      const id = orders();
      // Certified again (the tests above left it waiting, its proof stale): a restore takes a certified table.
      await submit(server(), id);
      expect((await certify(id)).status).toBe(200);
      const before = (await tableRow(id))?.contract_version ?? 0;
      expect((await setIntent(id, { meaning: 'Orders, audited' })).status).toBe(200);
      expect((await lastAudit(id, 'CONTRACT_INTENT_SET'))?.contractVersion).toEqual({
        from: before,
        to: before + 1,
      });

      const versions = await server().request('GET', `/api/tables/${id}/versions`, { token: steward() });
      const restored = await server().request('POST', `/api/tables/${id}/versions/restore`, {
        token: steward(),
        body: { to: versions.body.versions[0].version, reason: 'audited restore' },
      });
      expect(restored.status).toBe(200);
      expect((await lastAudit(id, 'CONTRACT_VERSION_RESTORED'))?.contractVersion).toEqual({
        from: before + 1,
        to: before + 2,
      });
      // A restore of what the contract already holds moves nothing, and says nothing of a move.
      const again = await server().request('POST', `/api/tables/${id}/versions/restore`, {
        token: steward(),
        body: { to: versions.body.versions[0].version, reason: 'the same again' },
      });
      expect(again.status).toBe(200);
      expect((await tableRow(id))?.contract_version).toBe(before + 2);
      expect((await lastAudit(id, 'CONTRACT_VERSION_RESTORED'))?.contractVersion).toBeUndefined();

      const customers = server().table('customers').id;
      const production = server().table('customers_production').id;
      const landed = (await tableRow(production))?.contract_version ?? 0;
      expect((await setIntent(customers, { meaning: 'Customers, promoted with an audit' })).status).toBe(200);
      const promoted = await server().request('POST', `/api/tables/${customers}/promotions`, {
        token: server().user('OWNER').accessToken,
        body: { to: 'production', replaceId: production },
      });
      expect(promoted.body).toMatchObject({ changed: true, tableId: production });
      expect((await lastAudit(production, 'TABLE_PROMOTED'))?.contractVersion).toEqual({
        from: landed,
        to: landed + 1,
      });
    },
  );
});
