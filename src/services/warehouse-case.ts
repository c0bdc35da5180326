// The names and columns of the warehouse objects behind a plan's connectors (GET /api/connectors/{id}/objects),
// for naming a project's relations and columns as the warehouse does (src/core/dbt/case.ts). Reads only; a
// connector whose objects cannot be read leaves its tables' names as the project wrote them.
import type { DbtDeclaration } from '../core/dbt/types.js';
import type { WarehouseColumns, WarehouseSources } from '../core/dbt/case.js';
import { reconcileCase, reconcileSource } from '../core/dbt/case.js';
import { loadYaml } from '../core/libraries/yaml.js';
import type { PlanClient } from './project-plan-types.js';

export async function warehouseColumns(
  client: PlanClient,
  connectorIds: readonly string[],
  call: { signal?: AbortSignal },
): Promise<{ columns: WarehouseColumns; sources: WarehouseSources }> {
  const columns = new Map<string, string[]>();
  const sources = new Map<string, string>();
  const read = await Promise.all(
    connectorIds.map((id) => client.connectors.objects(id, call).catch(() => undefined)),
  );
  for (const listing of read)
    for (const object of listing?.objects ?? []) {
      columns.set(
        object.source.toLowerCase(),
        object.columns.map((c) => c.name),
      );
      sources.set(object.source.toLowerCase(), object.source);
    }
  return { columns, sources };
}

/**
 * Each declaration named as its warehouse object names it (its source, where dbt's quoting folded it) and
 * its columns, and what differed in case.
 */
export async function inWarehouseCase(
  declarations: DbtDeclaration[],
  warehouse: { columns: WarehouseColumns; sources: WarehouseSources },
  schema: string | undefined,
  adapter?: string,
): Promise<{ declarations: DbtDeclaration[]; notes: string[] }> {
  if (warehouse.columns.size === 0) return { declarations, notes: [] };
  const yaml = await loadYaml();
  const done = declarations.map((d) => {
    const sourced = reconcileSource(d, warehouse.sources, schema);
    const { source } = sourced.declaration;
    const cased = reconcileCase(
      yaml,
      sourced.declaration,
      `${schema ?? source.schema}.${source.table}`,
      warehouse.columns,
      adapter,
    );
    return { declaration: cased.declaration, notes: [...sourced.notes, ...cased.notes] };
  });
  return { declarations: done.map((r) => r.declaration), notes: done.flatMap((r) => r.notes) };
}
