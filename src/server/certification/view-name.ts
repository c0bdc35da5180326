// Where a table's certified view lives (`<prefix>certified_<env>.<table>`), and dropping it: what a state
// change out of CERTIFIED needs (governance/engine.ts) without the publishing of view.ts.
import type { Queryable } from '../db/handle.js';
import type { Column } from '../records/columns.js';
import { quoteIdent } from '../warehouse.js';

export interface ViewSource {
  id: string;
  workspaceId: string;
  name: string;
  mode: 'MODE_A' | 'MODE_B';
  environmentLabel: string;
  source: string | null;
  columns: Column[];
}

/** The schema of the workspace's certified views in this environment. */
export async function certifiedSchema(
  q: Queryable,
  workspaceId: string,
  environmentLabel: string,
): Promise<string> {
  const [workspace] = await q.query<{ warehouse_prefix: string }>(
    'SELECT warehouse_prefix FROM gds.workspaces WHERE id = $1',
    [workspaceId],
  );
  if (!workspace) throw new Error(`no workspace ${workspaceId}`);
  return `${workspace.warehouse_prefix}certified_${environmentLabel}`;
}

/** `schema.table` of the table's certified view (published or not). */
export async function certifiedViewName(
  q: Queryable,
  table: Pick<ViewSource, 'workspaceId' | 'name' | 'environmentLabel'>,
): Promise<string> {
  return `${await certifiedSchema(q, table.workspaceId, table.environmentLabel)}.${table.name}`;
}

/** Drops the table's certified view, if published: the table is no longer certified under that name. */
export async function dropCertifiedView(
  q: Queryable,
  table: Pick<ViewSource, 'workspaceId' | 'name' | 'environmentLabel'>,
): Promise<void> {
  const schema = await certifiedSchema(q, table.workspaceId, table.environmentLabel);
  await q.exec(`DROP VIEW IF EXISTS ${quoteIdent(schema)}.${quoteIdent(table.name)}`);
}
