// What `gds plan` checks so that it never promises what `apply` cannot do: a table apply would register (or
// whose definition it would replace) must name a warehouse object of its connector, as the service checks on
// the registration (its source's schema is the connector's, and the table is there). The objects are read
// once per connector (`GET /api/connectors/{id}/objects`); a table whose source is not there is `! refused`
// with the fix, which is always something plan and apply take: --schema, --connector, --exclude. A column's
// reference into a schema no connector of the workspace reads is not mapped, with the fix.
import type { ApiClient } from '../client/index.js';
import { ApiError } from '../client/errors.js';
import type { Connector } from '../client/areas/connectors.js';
import { withColumns } from '../core/dbt/declared-artifact.js';
import type { DbtDeclaration } from '../core/dbt/types.js';
import type { PlannedTable } from './project-plan-types.js';
import { nodeSelector } from '../core/dbt/node-selector.js';

export type SourcesClient = Pick<ApiClient, 'connectors'>;

interface Reads {
  connector: Pick<Connector, 'id' | 'name'>;
  schema: string;
  /** `schema.table` of each object, as the warehouse spells it. */
  sources: Set<string>;
}

/** The objects of the plan's connector, or with --env and no connector, of each connector of the environment. */
export interface WarehouseSources {
  /** The plan's one connector, or undefined with --env (then each table goes to the connector of its schema). */
  chosen: Reads | undefined;
  environmentLabel: string;
  all: Reads[];
}

/**
 * Reads the warehouse objects the plan's tables may name; undefined when the service cannot say (it has no
 * such route, or the token may not read it): plan then checks nothing, and apply reports what it refuses.
 */
export async function readWarehouseSources(
  client: SourcesClient,
  connectors: readonly Connector[],
  chosen: { id: string | null; environmentLabel: string },
  call: { signal?: AbortSignal } = {},
): Promise<WarehouseSources | undefined> {
  const of =
    chosen.id === null
      ? connectors.filter((c) => c.environmentLabel === chosen.environmentLabel)
      : connectors.filter((c) => c.id === chosen.id);
  try {
    const all = await Promise.all(
      of.map(async (connector) => {
        const read = await client.connectors.objects(connector.id, call);
        return { connector, schema: read.schema, sources: new Set(read.objects.map((o) => o.source)) };
      }),
    );
    return {
      chosen: chosen.id === null ? undefined : all[0],
      environmentLabel: chosen.environmentLabel,
      all,
    };
  } catch (error) {
    if (
      error instanceof ApiError &&
      (error.status === 401 ||
        error.status === 403 ||
        (error.status === 404 && error.code !== 'connector_not_found'))
    )
      return undefined;
    throw error;
  }
}

function split(source: string): [string, string] {
  const dot = source.indexOf('.');
  return [source.slice(0, dot), source.slice(dot + 1)];
}

/**
 * Why the registration of `source` would be refused, with the fix; undefined when the source is there.
 * `selector`: what --exclude takes to leave the table out (the dbt node's name, not its relation's alias).
 * `builtIn`: the schemas the plan's other tables are built into; where the connector's schema is one of them,
 * this model alone is built elsewhere (its schema config), and --schema is no fix: it would register the
 * relation dbt built in the connector's schema before, which dbt no longer builds.
 * `node`: what the dbt node is (model, snapshot or seed), as the refusal names it.
 */
export function sourceRefusal(
  sources: WarehouseSources,
  source: string,
  selector: string,
  builtIn: ReadonlySet<string> = new Set(),
  node: NodeKind = 'model',
): string | undefined {
  const [schema, table] = split(source);
  const reads = sources.chosen ?? sources.all.find((r) => r.schema === schema) ?? undefined;
  if (reads !== undefined && reads.schema === schema && reads.sources.has(source)) return undefined;
  const holders = (sources.chosen === undefined ? sources.all : [sources.chosen]).filter((r) =>
    r.sources.has(`${r.schema}.${table}`),
  );
  const on =
    reads === undefined
      ? `No connector of ${sources.environmentLabel} reads schema ${schema} (${sources.all.map((r) => `${r.connector.name} reads ${r.schema}`).join(', ') || 'it has none'})`
      : `Source '${source}' is not a warehouse object on connector ${reads.connector.name} (schema ${reads.schema})`;
  const [holder] = holders;
  if (holder !== undefined && holders.length === 1 && builtIn.has(holder.schema))
    return `${on}: the ${node} is built into schema ${schema} (${node === 'snapshot' ? 'its target_schema or schema config' : 'its schema config'}), not ${holder.schema} where the project's other models are and ${holder.schema}.${table} (what dbt built there before, if it did) is: pass --connector naming a connector that reads ${schema} (or --env, each table on the connector of its schema), or leave it out with --exclude ${selector}`;
  if (holder !== undefined && holders.length === 1)
    return `${on}, but ${holder.schema}.${table} is: pass --schema ${holder.schema} (or schema: in gds.yml)`;
  if (reads !== undefined && reads.schema === schema)
    return `${on}: build it there first (dbt run, dbt seed), or leave it out with --exclude ${selector}`;
  const there = reads === undefined ? undefined : reads.schema;
  return there === undefined
    ? `${on}: pass --connector naming a connector that reads ${schema}, or --schema naming a schema one of them reads, or leave it out with --exclude ${selector}`
    : `${on}, nor is ${there}.${table}: build it with dbt in schema ${there} and pass --schema ${there}, pass --connector naming a connector that reads ${schema}, or leave it out with --exclude ${selector}`;
}

/** The dbt node kinds a planned table comes from. */
type NodeKind = 'model' | 'snapshot' | 'seed';

/** What a refusal calls a table's dbt node: its resource type, a model when it is none of the three. */
function nodeKind(resourceType: string | null): NodeKind {
  return resourceType === 'snapshot' || resourceType === 'seed' ? resourceType : 'model';
}

/**
 * Turns each table apply would register, or whose definition it would replace, into `! refused` when its
 * source is not a warehouse object of its connector (in place; nothing when the objects could not be read).
 */
export function refuseMissingSources(
  tables: PlannedTable[],
  sources: WarehouseSources | undefined,
  selectorOf: (uniqueId: string | null) => string | undefined = nodeSelector,
): void {
  if (sources === undefined) return;
  // The schemas the plan's models are built into (a table's own is never the one its refusal is about).
  const builtIn = new Set(
    tables.flatMap((t) =>
      t.action === 'gone' || t.action === 'skipped' || t.source === null ? [] : [split(t.source)[0]],
    ),
  );
  for (const [index, table] of tables.entries()) {
    const registers = table.action === 'create' || (table.action === 'replace' && table.changes.definition);
    if (!registers || table.source === null) continue;
    const selector = selectorOf(table.uniqueId) ?? table.table;
    const reason = sourceRefusal(sources, table.source, selector, builtIn, nodeKind(table.resourceType));
    if (reason === undefined) continue;
    const { work: _work, ...kept } = table;
    tables[index] = {
      ...kept,
      action: 'refused',
      changes: { definition: false, gate1: false, contract: false },
      diffs: {},
      reason,
    };
  }
}

/** What --schema moves a reference to: a reference into one of the project's dbt schemas goes to `schema`. */
export interface ReferenceSchemas {
  schema: string | undefined;
  /** The schemas of the project's declarations, lower case. */
  dbtSchemas: ReadonlySet<string>;
}

/**
 * The declarations with each reference Gate 1 could never check listed as not mapped, with what to do: the
 * runner checks a reference only into a schema a connector of the workspace reads, and fails it on every run
 * otherwise. The plan's connectors' schemas are read already; the workspace's other connectors are read only
 * when a reference names a schema none of those reads. Nothing changes when the service cannot say.
 */
export async function withCheckableReferences(
  client: SourcesClient,
  connectors: readonly Connector[],
  sources: WarehouseSources | undefined,
  declarations: DbtDeclaration[],
  moved: ReferenceSchemas,
  call: { signal?: AbortSignal } = {},
): Promise<DbtDeclaration[]> {
  if (sources === undefined) return declarations;
  const schemaOf = (reference: string) => {
    const schema = reference.slice(0, reference.indexOf('.'));
    return moved.schema !== undefined && moved.dbtSchemas.has(schema.toLowerCase()) ? moved.schema : schema;
  };
  const read = new Set(sources.all.map((r) => r.schema));
  const wanted = new Set(
    declarations.flatMap((d) =>
      d.columns.flatMap((c) => (c.references === undefined ? [] : [schemaOf(c.references)])),
    ),
  );
  if ([...wanted].some((schema) => !read.has(schema))) {
    const seen = new Set(sources.all.map((r) => r.connector.id));
    try {
      const others = await Promise.all(
        connectors.filter((c) => !seen.has(c.id)).map((c) => client.connectors.objects(c.id, call)),
      );
      for (const other of others) read.add(other.schema);
    } catch (error) {
      if (error instanceof ApiError && [401, 403, 404].includes(error.status)) return declarations;
      throw error;
    }
  }
  return declarations.map((declaration) => {
    const unread = declaration.columns.filter(
      (c) => c.references !== undefined && !read.has(schemaOf(c.references)),
    );
    if (unread.length === 0) return declaration;
    const columns = declaration.columns.map((c) => {
      if (!unread.includes(c)) return c;
      const { references: _references, ...column } = c;
      return column;
    });
    const notMapped = unread.flatMap((column) => {
      const reference = column.references ?? '';
      const schema = schemaOf(reference);
      const fix = moved.dbtSchemas.has(schema.toLowerCase())
        ? `it is a schema of this project's models: pass --schema naming the schema the connector reads (or schema: in gds.yml)`
        : `add a connector that reads ${schema} (a workspace admin does), or leave the test to dbt`;
      const reason = `the reference ${reference}: no connector of the workspace reads schema ${schema} (they read ${[...read].join(', ') || 'none'}), so Gate 1 could never check it and would fail it on every run; ${fix}`;
      return declaration.mappedTests
        .filter((t) => t.rule === `reference:${column.name}`)
        .map((t) => ({ test: t.test, reason }));
    });
    const dropped = new Set(unread.map((c) => `reference:${c.name}`));
    const lines = unread.map((c) => `${c.name}: references `);
    return {
      ...withColumns(declaration, columns),
      mappedTests: declaration.mappedTests.filter((t) => !dropped.has(t.rule)),
      notMappedTests: [...declaration.notMappedTests, ...notMapped],
      ...(declaration.rules === undefined
        ? {}
        : { rules: declaration.rules.filter((rule) => !lines.some((line) => rule.startsWith(line))) }),
    };
  });
}
