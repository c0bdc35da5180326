// Small hand-written manifests: one function per node kind, the fields as dbt 1.x writes them.
type Entry = Record<string, unknown>;

export function model(name: string, extra: Entry = {}): Entry {
  const pkg = (extra['package_name'] as string | undefined) ?? 'shop';
  return {
    unique_id: `model.${pkg}.${name}`,
    resource_type: 'model',
    name,
    alias: name,
    schema: 'analytics',
    database: 'dev',
    package_name: pkg,
    fqn: [pkg, ...((extra['folders'] as string[] | undefined) ?? []), name],
    original_file_path: `models/${((extra['folders'] as string[] | undefined) ?? []).join('/')}${(extra['folders'] as string[] | undefined)?.length ? '/' : ''}${name}.sql`,
    tags: [],
    config: { enabled: true, materialized: 'view' },
    columns: {},
    depends_on: { nodes: [] },
    description: '',
    ...extra,
  };
}

/** A node of the graph other than a model (a function, an exposure, a metric), in package shop. */
export function graphNode(resourceType: string, name: string, extra: Entry = {}): Entry {
  return {
    unique_id: `${resourceType}.shop.${name}`,
    resource_type: resourceType,
    name,
    package_name: 'shop',
    fqn: ['shop', name],
    ...extra,
  };
}

/** A source table in package shop, as the manifest's `sources` holds one. */
export function source(sourceName: string, table: string, extra: Entry = {}): Entry {
  return {
    unique_id: `source.shop.${sourceName}.${table}`,
    resource_type: 'source',
    name: table,
    source_name: sourceName,
    package_name: 'shop',
    fqn: ['shop', sourceName, table],
    config: { enabled: true },
    ...extra,
  };
}

export function columns(spec: Record<string, string | null>): Entry {
  return Object.fromEntries(
    Object.entries(spec).map(([name, type]) => [name, { name, data_type: type, description: '', meta: {} }]),
  );
}

export function genericTest(
  name: string,
  attached: string,
  kwargs: Entry,
  extra: { namespace?: string; column?: string; config?: Entry; id?: string; dependsOn?: string[] } = {},
): Entry {
  const id = extra.id ?? `test.shop.${name}_${attached.split('.').at(-1) ?? ''}_${extra.column ?? 'x'}.abc`;
  return {
    unique_id: id,
    resource_type: 'test',
    name: id.split('.')[2],
    package_name: 'shop',
    fqn: ['shop', id.split('.')[2]],
    test_metadata: {
      name,
      namespace: extra.namespace ?? null,
      kwargs: { ...(extra.column ? { column_name: extra.column } : {}), ...kwargs },
    },
    column_name: extra.column ?? null,
    attached_node: attached,
    depends_on: { nodes: extra.dependsOn ?? [attached] },
    config: { enabled: true, severity: 'ERROR', where: null, ...extra.config },
  };
}

/** dbt_expectations' expect_column_values_to_match_regex of `column` of `model.shop.<model>`. */
export function matchRegexTest(model: string, column: string, regex: string, kwargs: Entry = {}): Entry {
  return genericTest(
    'expect_column_values_to_match_regex',
    `model.shop.${model}`,
    { regex, ...kwargs },
    { column, namespace: 'dbt_expectations' },
  );
}

export function manifest(...nodes: Entry[]): Entry {
  return {
    metadata: {
      dbt_schema_version: 'https://schemas.getdbt.com/dbt/manifest/v12.json',
      dbt_version: '1.8.0',
      adapter_type: 'postgres',
      project_name: 'shop',
    },
    nodes: Object.fromEntries(nodes.map((n) => [n['unique_id'] as string, n])),
    sources: {},
  };
}

/** A catalog.json written at `generatedAt`: each table by unique id (schema analytics), its columns (name: type). */
export const catalog = (generatedAt: string, tables: Record<string, Record<string, string>>) => ({
  metadata: {
    dbt_schema_version: 'https://schemas.getdbt.com/dbt/catalog/v1.json',
    generated_at: generatedAt,
  },
  nodes: Object.fromEntries(
    Object.entries(tables).map(([id, listed]) => [
      id,
      {
        metadata: { schema: 'analytics', name: id.split('.').at(-1) },
        columns: Object.fromEntries(
          Object.entries(listed).map(([name, type], i) => [name, { name, type, index: i + 1 }]),
        ),
      },
    ]),
  ),
});
