// The seed's Mode A `customers` (with a gate1.yml of the test's) and Mode B `crm_contacts`, as the gates read
// them, in a migrated database: for tests of how the gates read rows, in place or in PGlite's sandbox.
import type { Db } from '../../../src/server/db/handle.js';
import { migrate } from '../../../src/server/db/migrations.js';
import { storeGate1Version } from '../../../src/server/gates/gate1-store.js';
import type { GateTable } from '../../../src/server/gates/table.js';
import { loadGateTable } from '../../../src/server/gates/table.js';
import { seedIfEmpty } from '../../../src/server/seed.js';

export async function seededGateTables(
  db: Db,
  customersRules: string,
): Promise<{ customers: GateTable; contacts: GateTable }> {
  await migrate(db);
  await seedIfEmpty(db, Date.now);
  const tables = await db.query<{ id: string; workspace_id: string; name: string }>(
    `SELECT DISTINCT ON (name) id, workspace_id, name FROM gds.tables
      WHERE name IN ('customers', 'crm_contacts') AND active ORDER BY name, created_at`,
  );
  const byName = (name: string) => {
    const table = tables.find((t) => t.name === name);
    if (!table) throw new Error(`no seeded ${name}`);
    return table;
  };
  await storeGate1Version(db, {
    tableId: byName('customers').id,
    content: customersRules,
    createdBy: 'test',
    createdAt: new Date().toISOString(),
  });
  const load = (name: string) => loadGateTable(db, byName(name).workspace_id, byName(name).id);
  return { customers: await load('customers'), contacts: await load('crm_contacts') };
}
