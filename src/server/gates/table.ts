// What the gates need of a governed table: gov's table row, plus the optional referential-integrity
// and bounds declarations of its columns, its versions, and where a reference may point.
import type { Queryable } from '../db/handle.js';
import type { LoadOptions, TableRow } from '../governance/tables.js';
import { loadTable } from '../governance/tables.js';
import type { Column } from '../records/columns.js';

/**
 * A registered column. Beyond name, type and `required`, a definition may declare
 * `references: "schema.table.column"` (referential integrity) and `min` / `max` (numeric bounds);
 * Gate 1 checks only what is declared here, never what a column's name suggests.
 */

export interface TableVersions {
  definition: number;
  gate1: number;
  data: number;
  /** The semantic contract's revision; absent on a proof stamped before it was recorded (not compared). */
  contract?: number;
}

export interface GateTable extends Omit<TableRow, 'columns' | 'grainKeyColumns'> {
  columns: Column[];
  grainKeyColumns: string[];
  versions: TableVersions;
  /** Every warehouse schema of the workspace's connectors: where a declared reference may point. */
  warehouseSchemas: string[];
}

export function toGateTable(table: TableRow, warehouseSchemas: string[]): GateTable {
  return {
    ...table,
    grainKeyColumns: table.grainKeyColumns ?? [],
    versions: {
      definition: table.definitionVersion,
      gate1: table.gate1Version,
      data: table.dataVersion,
      contract: table.contractVersion,
    },
    warehouseSchemas,
  };
}

/** An active table of the workspace (404 `table_not_found` otherwise), as the gates read it. */
export async function loadGateTable(
  q: Queryable,
  workspaceId: string,
  tableId: string,
  options: LoadOptions = {},
): Promise<GateTable> {
  const table = await loadTable(q, workspaceId, tableId, options);
  const schemas = await q.query<{ warehouse_schema: string }>(
    'SELECT warehouse_schema FROM gds.connectors WHERE workspace_id = $1',
    [workspaceId],
  );
  return toGateTable(
    table,
    schemas.map((s) => s.warehouse_schema),
  );
}

/** A column's declared `references: "schema.table.column"`, or null when it is not of that form. */
export function parseReference(text: string): { schema: string; table: string; column: string } | null {
  const parts = text.split('.');
  if (parts.length !== 3 || parts.some((p) => p.length === 0)) return null;
  const [schema = '', table = '', column = ''] = parts;
  return { schema, table, column };
}
