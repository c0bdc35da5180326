// The column names of the warehouse objects behind a plan's connectors (GET /api/connectors/{id}/objects), for
// naming a project's columns as the warehouse does (src/core/dbt/case.ts). Reads only; a connector whose
// objects cannot be read leaves its tables' names as the project wrote them.
import type { DbtDeclaration } from '../core/dbt/types.js';
import type { WarehouseColumns } from '../core/dbt/case.js';
import type { PlanClient } from './project-plan.js';

export async function warehouseColumns(
  client: PlanClient,
  connectorIds: readonly string[],
  call: { signal?: AbortSignal },
): Promise<WarehouseColumns> {
  const columns = new Map<string, string[]>();
  const read = await Promise.all(
    connectorIds.map((id) => client.connectors.objects(id, call).catch(() => undefined)),
  );
  for (const listing of read)
    for (const object of listing?.objects ?? [])
      columns.set(
        object.source.toLowerCase(),
        object.columns.map((c) => c.name),
      );
  return columns;
}

/** Each declaration named as its warehouse object names its columns, and what differed in case. */
export async function inWarehouseCase(
  declarations: DbtDeclaration[],
  warehouse: WarehouseColumns,
  schema: string | undefined,
): Promise<{ declarations: DbtDeclaration[]; notes: string[] }> {
  if (warehouse.size === 0) return { declarations, notes: [] };
  const { reconcileCase } = await import('../core/dbt/case.js');
  const done = declarations.map((d) =>
    reconcileCase(d, `${schema ?? d.source.schema}.${d.source.table}`, warehouse),
  );
  return { declarations: done.map((r) => r.declaration), notes: done.flatMap((r) => r.notes) };
}
