// The governed table a data-plane request names, and whether the caller's token reaches it.
import { environmentAllows, tableScope } from '../../core/scopes.js';
import type { TablePermission } from '../../core/scopes.js';
import type { IntegrationCaller } from '../auth/caller.js';
import type { Queryable } from '../db/handle.js';
import { findTable } from '../governance/tables.js';
import { forbidden, notFound } from '../errors.js';
import type { Column } from './columns.js';

export interface GovernedTable {
  id: string;
  workspaceId: string;
  slug: string;
  name: string;
  mode: 'MODE_A' | 'MODE_B';
  state: string;
  gateMode: 'ENFORCING' | 'ADVISORY';
  environmentLabel: string;
  source: string | null;
  ownerId: string;
  columns: Column[];
}

/** An active table of the workspace; 404 for unknown, inactive or another workspace's tables. */
export async function loadActiveTable(
  q: Queryable,
  workspaceId: string,
  tableId: string,
): Promise<GovernedTable> {
  const table = await findTable(q, workspaceId, tableId);
  if (!table) {
    throw notFound(
      'table_not_found',
      `Table ${tableId} does not exist or is not active; check the id in the dashboard.`,
      {
        tableId,
      },
    );
  }
  return table;
}

/** 403 unless the token's scopes grant `permission` on the table in the table's environment. */
export function authorizeTable(
  caller: IntegrationCaller,
  table: GovernedTable,
  permission: TablePermission,
): void {
  const needed = tableScope(table.slug, permission);
  // The scope names the slug; the grant was made on one table: a later table reusing the slug is not it.
  const bound = caller.tableIds[table.slug] === table.id;
  if (!bound || !caller.scopes.includes(needed)) {
    const granted = bound && caller.scopes.some((s) => s.startsWith(`tables:${table.slug}:`));
    throw forbidden(
      granted ? 'missing_permission' : 'table_not_in_scope',
      granted
        ? `This token lacks ${permission} permission on table ${table.id}; issue a token with scope ${needed}.`
        : `Table ${table.id} is outside this token's scope; issue a token that grants it.`,
      { tableId: table.id, requiredScope: needed },
    );
  }
  if (!environmentAllows(caller.env, table.environmentLabel)) {
    throw forbidden(
      'environment_mismatch',
      `This token is scoped to environment ${caller.env}; table ${table.id} is in ${table.environmentLabel}.`,
      { tokenEnv: caller.env, tableEnv: table.environmentLabel },
    );
  }
}
