// A Gate 1 proof is stamped with the contract revision whose grain it checked: the one of the table as loaded
// before the scan, not one a contract change committed meanwhile (on PGlite, while the run waited its turn in
// the gate queue). The submission then finds its proof stale under the table's lock (409 table_changed)
// instead of recording as fresh a grain check of the old key.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Db } from '../../../src/server/db/handle.js';
import { openDb } from '../../../src/server/db/index.js';
import { migrate } from '../../../src/server/db/migrations.js';
import { runGate1 } from '../../../src/server/gates/gate1-runner.js';
import { isProofFresh } from '../../../src/server/gates/proofs.js';
import { loadGateTable } from '../../../src/server/gates/table.js';
import { seedIfEmpty } from '../../../src/server/seed.js';
import { scratchDir } from '../../helpers/migrated-database.js';

let db: Db;

beforeAll(async () => {
  db = await openDb({ scratchDir: await scratchDir() });
  await migrate(db);
  await seedIfEmpty(db, Date.now);
});

afterAll(async () => {
  await db?.close();
});

it('a contract changed between the load and the scan leaves the proof at the revision it checked: stale', async () => {
  const [customers] = await db.query<{ id: string; workspace_id: string }>(
    `SELECT id, workspace_id FROM gds.tables WHERE name = 'customers' AND active ORDER BY created_at LIMIT 1`,
  );
  if (!customers) throw new Error('no seeded customers table');
  const loaded = await loadGateTable(db, customers.workspace_id, customers.id);
  // What `contract set-intent --grain-key email` commits while the run waits: the key and the revision move.
  await db.query(
    `UPDATE gds.tables SET grain_key_columns = '["email"]', contract_version = contract_version + 1 WHERE id = $1`,
    [customers.id],
  );
  const proof = await runGate1(db, loaded, { clock: Date.now });
  expect(proof.tableVersion.contract).toBe(loaded.versions.contract);
  const now = await loadGateTable(db, customers.workspace_id, customers.id);
  expect(now.versions.contract).toBe((loaded.versions.contract ?? 0) + 1);
  expect(isProofFresh(proof, now)).toBe(false);
});
