// Migration 72: tables carry the semantic contract's revision and review proofs stamp it. A database of the
// schema before it keeps its tables at revision 0 and its proofs stamped 0 (fresh until the contract next
// changes); a proof written without the column (by an earlier build on the same database) is NULL, which the
// service reads as "not compared on the contract".
import { describe, expect, it } from 'vitest';
import { migrate } from '../../../src/server/db/migrations.js';
import { isProofFresh, latestSubmitProof } from '../../../src/server/gates/proofs.js';
import { ENGINES, useEngineDb } from '../../helpers/engines.js';
import { needs } from '../../helpers/skip.js';
import { schemaBefore, T0 } from './earlier-schema.js';

const PROOF = `INSERT INTO gds.gate_proofs (id, table_id, kind, passed, results, failed_predicates, definition_version,
                 gate1_version, data_version, created_by, created_at)
               VALUES ($1, 'tbl_a', 'submit', true, '[]', '[]', 1, 0, 0, 'usr_a', $2)`;

describe.each(ENGINES)('review proofs taken before migration 72 ($engine)', (engine) => {
  const db = useEngineDb(engine, async (opened) => {
    await schemaBefore(opened, 72);
    await opened.query(
      `INSERT INTO gds.tables (id, workspace_id, slug, name, mode, state, gate_mode, environment_label, owner_id,
                               columns, created_at, updated_at)
       VALUES ('tbl_a', 'ws_a', 'a', 'a', 'MODE_A', 'PENDING_REVIEW', 'ENFORCING', 'dev', 'usr_a', '[]', $1, $1)`,
      [T0],
    );
    await opened.query(PROOF, ['prf_before', T0]);
    await migrate(opened);
  });

  const versions = async () =>
    (
      await db().query<{ definition: number; gate1: number; data: number; contract: number }>(
        `SELECT definition_version AS definition, gate1_version AS gate1, data_version AS data,
                contract_version AS contract FROM gds.tables WHERE id = 'tbl_a'`,
      )
    )[0];

  it(
    'stamps them at revision 0, the revision every table starts at: fresh until the contract changes',
    needs(engine.skip),
    async () => {
      expect(await versions()).toEqual({ definition: 1, gate1: 0, data: 0, contract: 0 });
      const proof = await latestSubmitProof(db(), 'tbl_a');
      expect(proof?.tableVersion).toEqual({ definition: 1, gate1: 0, data: 0, contract: 0 });
      expect(proof && isProofFresh(proof, { versions: (await versions())! })).toBe(true);
      await db().query(`UPDATE gds.tables SET contract_version = 1 WHERE id = 'tbl_a'`);
      expect(proof && isProofFresh(proof, { versions: (await versions())! })).toBe(false);
    },
  );

  it('reads a proof stored without a revision as not compared on it', needs(engine.skip), async () => {
    await db().query(PROOF, ['prf_unstamped', '2026-01-02T00:00:00.000Z']);
    const proof = await latestSubmitProof(db(), 'tbl_a');
    expect(proof).toMatchObject({ id: 'prf_unstamped', tableVersion: { definition: 1, gate1: 0, data: 0 } });
    expect(proof?.tableVersion.contract).toBeUndefined();
    expect(proof && isProofFresh(proof, { versions: (await versions())! })).toBe(true);
  });
});
