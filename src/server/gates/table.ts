// What the gates need of a governed table: where its rows live, its declared columns (with the
// optional referential-integrity and bounds declarations), its grain keys and its three versions.
import type { Queryable } from '../db/index.js';
import { notFound } from '../errors.js';
import type { Column } from '../records/columns.js';

/**
 * A registered column. Beyond name, type and `required`, a definition may declare
 * `references: "schema.table.column"` (referential integrity) and `min` / `max` (numeric bounds);
 * Gate 1 checks only what is declared here, never what a column's name suggests.
 */
export interface GateColumn extends Column {
  references?: string;
  min?: number;
  max?: number;
}

export interface TableVersions {
  definition: number;
  gate1: number;
  data: number;
}

export interface GateTable {
  id: string;
  workspaceId: string;
  name: string;
  mode: 'MODE_A' | 'MODE_B';
  state: string;
  gateMode: 'ENFORCING' | 'ADVISORY';
  environmentLabel: string;
  /** `schema.table` of the warehouse object (Mode A). */
  source: string | null;
  ownerId: string;
  columns: GateColumn[];
  grainKeyColumns: string[];
  versions: TableVersions;
  /** Every warehouse schema of the workspace's connectors: where a declared reference may point. */
  warehouseSchemas: string[];
}

interface Row {
  id: string;
  workspace_id: string;
  name: string;
  mode: 'MODE_A' | 'MODE_B';
  state: string;
  gate_mode: 'ENFORCING' | 'ADVISORY';
  environment_label: string;
  source: string | null;
  owner_id: string;
  columns: GateColumn[];
  grain_key_columns: string[] | null;
  definition_version: number;
  gate1_version: number;
  data_version: number;
  warehouse_schemas: string[];
}

/** An active table of the workspace; 404 `table_not_found` otherwise. `forUpdate` locks its row. */
export async function loadGateTable(
  q: Queryable,
  workspaceId: string,
  tableId: string,
  forUpdate = false,
): Promise<GateTable> {
  const [row] = await q.query<Row>(
    `SELECT t.id, t.workspace_id, t.name, t.mode, t.state, t.gate_mode, t.environment_label, t.source,
            t.owner_id, t.columns, t.grain_key_columns, t.definition_version, t.gate1_version, t.data_version,
            ARRAY(SELECT c.warehouse_schema FROM gds.connectors c WHERE c.workspace_id = t.workspace_id)
              AS warehouse_schemas
       FROM gds.tables t
      WHERE t.id = $1 AND t.workspace_id = $2 AND t.active AND t.deleted_at IS NULL
      ${forUpdate ? 'FOR UPDATE OF t' : ''}`,
    [tableId, workspaceId],
  );
  if (!row) {
    throw notFound(
      'table_not_found',
      `Table ${tableId} does not exist or is not active; check the id with gds tables.`,
      {
        tableId,
      },
    );
  }
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    name: row.name,
    mode: row.mode,
    state: row.state,
    gateMode: row.gate_mode,
    environmentLabel: row.environment_label,
    source: row.source,
    ownerId: row.owner_id,
    columns: row.columns,
    grainKeyColumns: row.grain_key_columns ?? [],
    versions: { definition: row.definition_version, gate1: row.gate1_version, data: row.data_version },
    warehouseSchemas: row.warehouse_schemas,
  };
}
