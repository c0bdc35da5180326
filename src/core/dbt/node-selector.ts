// The `--select` / `--exclude` value that names one dbt node, for the hints of `gds plan` and `gds apply`.

/**
 * The node's name read from its unique id, as dbt's selection (src/core/dbt/select.ts isSelectedNode) matches
 * it: `model.shop.customers` is `customers`, a versioned model's `model.shop.dim_customers.v2` is
 * `dim_customers_v2`. Not the relation's alias, nor a promoted table's name (`customers_production`): dbt's
 * selection knows neither. Undefined for an id not so made.
 */
export function nodeSelector(uniqueId: string | null): string | undefined {
  const parts = uniqueId?.split('.') ?? [];
  const [, packageName, name, version] = parts;
  if (!packageName || !name) return undefined;
  if (parts.length === 3) return name;
  return parts.length === 4 && version !== undefined && /^v[A-Za-z0-9_]+$/.test(version)
    ? `${name}_${version}`
    : undefined;
}
