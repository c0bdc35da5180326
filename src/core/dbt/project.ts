// A dbt project read into declarations: one per selected, enabled model, seed and
// snapshot, already in the service's terms (the JSON artifact to push, the gate1.yml to apply, the contract
// intent), or a refusal with its reason, or (an ephemeral or empty model, which dbt builds no relation for)
// skipped with its reason. Pure: it reads dbt's artifacts (manifest, catalog) and nothing of
// dbt runs. The SQL of a model is read by PostgreSQL's own grammar, which `prepareDbtReader()` loads and
// gives back as the reader declareDbtProject takes (loadDbtProject does both).
import { formatSourceRef } from '../artifacts/identifiers.js';
import { nameProblem } from '../artifacts/identifiers.js';
import { pgGrammar, type PgGrammar } from '../artifacts/pg-grammar.js';
import { loadYaml, type Yaml } from '../libraries/yaml.js';
import type { Dialect } from '../artifacts/dialect.js';
import { selectColumns } from '../artifacts/select-columns.js';
import { readWarehouseView } from '../artifacts/warehouse-view.js';
import type { ArtifactColumn, SourceRef } from '../artifacts/types.js';
import type { FieldOverride, Gate1Document } from '../gate1/schema.js';
import type { CatalogTable, Manifest, ManifestColumn, ManifestNode } from './manifest.js';
import { askedNodeSelectors } from './node-selector.js';
import { DbtManifestError, DECLARED_TYPES, isEntry, readCatalog, readManifest, text } from './manifest.js';
import { findColumn, fromPostgresName, relationQuoting, warehouseName, writtenName } from './names.js';
import { attachedNode, resolveCall } from './attached.js';
import { constraintTests } from './constraints.js';
import { declaredArtifact } from './declared-artifact.js';
import { catalogOlder, ranCompiledSql, readLastRun, rebuiltSinceCatalog, type LastRun } from './last-run.js';
import { writtenByFusion } from './fusion.js';
import { defaultIndirectSelection, selectDbt } from './select.js';
import type { CommentedItem } from './gate1-text.js';
import { printGate1 } from './gate1-text.js';
import type { MappedRules, ReferenceTarget } from './tests.js';
import { mapTests } from './tests.js';
import type {
  DbtArtifacts,
  DbtContractIntent,
  DbtDeclaration,
  DbtProject,
  DbtRefusal,
  DbtResourceType,
  DbtSelection,
  DbtSkipped,
  NotMappedTest,
} from './types.js';

export { DbtManifestError } from './manifest.js';
export { DbtSelectionError } from './select.js';

/** What declareDbtProject reads a model's compiled SQL with (PostgreSQL's grammar) and prints gate1.yml with. */
export interface DbtReader {
  readonly grammar: PgGrammar;
  readonly yaml: Yaml;
}

/**
 * Loads what declareDbtProject needs to read SQL: PostgreSQL's grammar, given back as the reader (it reads the
 * models' SQL and the tests' predicates). Cheap after the first call.
 */
export async function prepareDbtReader(): Promise<DbtReader> {
  const [grammar, yaml] = await Promise.all([pgGrammar(), loadYaml()]);
  return { grammar, yaml };
}

/** The adapters whose SQL the warehouse reader of src/core/artifacts reads, by their dialect there. */
const WAREHOUSE_DIALECTS: Readonly<Record<string, Dialect>> = {
  snowflake: 'snowflake',
  bigquery: 'bigquery',
  redshift: 'redshift',
  databricks: 'databricks',
  spark: 'databricks',
};

/** The adapters whose seeds leave their column names unquoted unless `quote_columns: true`. */
const UNQUOTED_SEED_ADAPTERS: ReadonlySet<string> = new Set(['snowflake', 'athena', 'exasol']);

const INTENTS = ['METRIC', 'DECISION', 'OPERATIONAL', 'EXPLORATORY'];
const CONSUMERS = ['HUMAN', 'AI', 'AUTOMATION', 'EXTERNAL'];

/**
 * Declares the selected models, seeds and snapshots of a dbt project. Throws DbtManifestError for a file
 * that is not a manifest (or a catalog that is not a catalog), DbtSelectionError for a selector gds cannot
 * read or that matches nothing. Every test attached to a selected node is accounted for: mapped, not mapped
 * (with its reason) or, for a refused or skipped node, listed in its refusal or skip.
 */
export function declareDbtProject(
  artifacts: DbtArtifacts,
  selection: DbtSelection,
  dbtReader: DbtReader,
): DbtProject {
  const manifest = readManifest(artifacts.manifest);
  const catalog =
    artifacts.catalog === undefined ? new Map<string, CatalogTable>() : readCatalog(artifacts.catalog);
  const warnings: string[] = [];
  let state: Manifest | undefined;
  try {
    state = artifacts.state === undefined ? undefined : readManifest(artifacts.state);
  } catch (error) {
    if (error instanceof DbtManifestError)
      throw new DbtManifestError(`the --state manifest: ${error.message}`);
    throw error;
  }
  const { nodes: selected, tests: run } = selectDbt(
    manifest,
    selection,
    (message) => warnings.push(message),
    state,
    artifacts.previous,
  );
  const selectedSet = new Set(selected);
  const excluded = new Map<string, NotMappedTest[]>();
  const notRun = excludedReason(selection, manifest.dbtVersion);
  const reader = new ProjectReader(manifest, catalog, artifacts, dbtReader);

  const testsOf = new Map<string, ManifestNode[]>();
  const otherTests: NotMappedTest[] = [];
  // forEach and indexed loops over the nodes: a for-of made an iterator's result object a node (TurboFan,
  // which would elide them, is held off while a project is read and declared).
  manifest.nodes.forEach((node) => {
    if (node.resourceType !== 'test' && node.resourceType !== 'unit_test') return;
    const placed = reader.attachTest(node, selectedSet);
    // A test the selection leaves out (dbt would not run it) is no rule of its table, this run.
    if (placed.kind === 'node' && !run.has(node.uniqueId)) {
      const list = excluded.get(placed.id) ?? [];
      list.push({ test: node.uniqueId, reason: notRun, excluded: true });
      excluded.set(placed.id, list);
    } else if (placed.kind === 'node') {
      const list = testsOf.get(placed.id) ?? [];
      list.push(node);
      testsOf.set(placed.id, list);
    } else if (placed.kind === 'other') otherTests.push({ test: node.uniqueId, reason: placed.reason });
  });

  const declarations: DbtDeclaration[] = [];
  const refusals: DbtRefusal[] = [];
  const skipped: DbtSkipped[] = [];
  const selectorOf = selectedNodeHints(manifest, selected);
  const home = homeDatabase(manifest);
  for (let i = 0; i < selected.length; i++) {
    const id = selected[i] as string;
    const node = manifest.nodes.get(id);
    if (!node) continue;
    const tests = testsOf.get(id) ?? [];
    const left = excluded.get(id) ?? [];
    if (node.materialized === 'ephemeral' || node.empty === true) {
      const why = node.empty === true ? EMPTY : EPHEMERAL;
      const skip = leftOut(node, tests, why, 'gds governs no table of this model');
      skipped.push({ ...skip, notMappedTests: [...skip.notMappedTests, ...left] });
      continue;
    }
    const elsewhere = otherDatabase(node, home, selectorOf);
    if (elsewhere !== undefined) {
      const refusal = leftOut(node, tests, elsewhere, 'the table is refused');
      refusals.push({ ...refusal, notMappedTests: [...refusal.notMappedTests, ...left] });
      continue;
    }
    const outcome = reader.declare(node, tests, warnings);
    outcome.notMappedTests.push(...left);
    if ('reason' in outcome) refusals.push(outcome);
    else declarations.push(outcome);
  }
  // dbt's log is said unread only where a model's columns hung on it (target/run holds a build of its SQL).
  if (reader.unreadLogAsked)
    warnings.unshift(
      `${artifacts.runLog ?? 'logs/dbt.log'} is not read (${artifacts.runLogUnread ?? ''}): whether a dbt run that wrote a model's target/run SQL since catalog.json failed is not known, so gds takes each such SQL as built`,
    );
  // An ephemeral or empty model has no relation: a table the project registered under its name (before it
  // became ephemeral or empty) is gone.
  const built = [...manifest.nodes.values()].filter(
    (n) =>
      DECLARED_TYPES.has(n.resourceType) && n.enabled && n.materialized !== 'ephemeral' && n.empty !== true,
  );
  return {
    ...(manifest.projectName === undefined ? {} : { projectName: manifest.projectName }),
    ...(manifest.dbtVersion === undefined ? {} : { dbtVersion: manifest.dbtVersion }),
    ...(manifest.schemaVersion === undefined ? {} : { manifestSchemaVersion: manifest.schemaVersion }),
    ...(manifest.adapter === undefined ? {} : { adapter: manifest.adapter }),
    declarations,
    refusals,
    selectorOf,
    ...(skipped.length === 0 ? {} : { skipped }),
    nodeNames: built.map((n) => n.alias),
    // As each declaration's source is made (a node with no schema declares none).
    nodeSources: built.flatMap((n) => {
      if (n.schema === undefined) return [];
      const { schema, table } = reader.relationOf(n, n.schema);
      return [{ schema, table }];
    }),
    // Ephemeral and disabled ones too: a table of the project whose model became ephemeral or was disabled,
    // its schema's folder with it, is this project's and gone, never another same-named project's.
    nodeSchemas: [
      ...new Set([
        ...[...manifest.nodes.values()].flatMap((n) =>
          DECLARED_TYPES.has(n.resourceType) && n.schema !== undefined ? [n.schema] : [],
        ),
        ...(manifest.disabledSchemas ?? []),
      ]),
    ],
    lineage: [...manifest.nodes.values()]
      .filter((n) => DECLARED_TYPES.has(n.resourceType) && n.enabled)
      .map((n) => ({ uniqueId: n.uniqueId, name: n.alias, parents: n.dependsOn })),
    otherTests,
    warnings,
  };
}

/** Why a test of a selected table is no rule: the selection leaves it out, as dbt leaves it out of its run. */
function excludedReason(selection: DbtSelection, dbtVersion: string | undefined): string {
  const mode = selection.indirectSelection ?? defaultIndirectSelection(dbtVersion);
  return `excluded by the selection: dbt does not run it (its exclusions, or indirect selection ${mode}), so it is no Gate 1 rule of this plan; a plan that selects it maps it again`;
}

const EPHEMERAL =
  'an ephemeral model builds no relation in the warehouse (dbt inlines it into the models that use it): there is no table to govern';
const EMPTY =
  'its SQL file is empty: dbt run and dbt build skip an empty model (or snapshot), so it builds no relation in the warehouse and there is no table to govern';

/**
 * The --exclude hints of the selected nodes (askedNodeSelectors over the nodes dbt's fqn method searches),
 * made while the manifest is in hand: the plan keeps no other node's fqn, package or path for them.
 */
function selectedNodeHints(
  manifest: Manifest,
  selected: readonly string[],
): (uniqueId: string | null) => string | undefined {
  const enabled: ManifestNode[] = [];
  manifest.nodes.forEach((n) => {
    if (n.enabled) enabled.push(n);
  });
  return askedNodeSelectors(enabled, selected, {
    ...(manifest.projectName === undefined ? {} : { projectName: manifest.projectName }),
    ...(manifest.dbtVersion === undefined ? {} : { dbtVersion: manifest.dbtVersion }),
  });
}

/**
 * The database the project builds its tables into: the one most of its enabled models, seeds and snapshots
 * with a relation are in (dbt's target database, unless most are configured elsewhere), the first of them on a
 * tie; compared without case (Snowflake folds an unquoted name). Undefined when no node names one.
 */
function homeDatabase(manifest: Manifest): string | undefined {
  const counts = new Map<string, { name: string; count: number }>();
  manifest.nodes.forEach((n) => {
    if (
      !DECLARED_TYPES.has(n.resourceType) ||
      !n.enabled ||
      n.materialized === 'ephemeral' ||
      n.empty === true
    )
      return;
    if (n.database === undefined) return;
    const key = n.database.toLowerCase();
    const seen = counts.get(key);
    if (seen === undefined) counts.set(key, { name: n.database, count: 1 });
    else seen.count += 1;
  });
  let home: { name: string; count: number } | undefined;
  for (const entry of counts.values()) if (home === undefined || entry.count > home.count) home = entry;
  return home?.name;
}

/**
 * Why a node dbt builds into another database than the project's is refused, or undefined: the service names
 * a table by schema and table on a connector that reads one database (it has no database part), so the table
 * would be declared as if it were in `home`, where a namesake may be, or nothing.
 */
function otherDatabase(
  node: ManifestNode,
  home: string | undefined,
  selectorOf: (uniqueId: string | null) => string | undefined,
): string | undefined {
  const { database } = node;
  if (database === undefined || home === undefined || database.toLowerCase() === home.toLowerCase())
    return undefined;
  const kind =
    node.resourceType === 'snapshot' ? 'snapshot' : node.resourceType === 'seed' ? 'seed' : 'model';
  const config = kind === 'snapshot' ? 'its target_database or database config' : 'its database config';
  const relation = node.schema === undefined ? node.alias : `${node.schema}.${node.alias}`;
  return `the ${kind} is built into database ${database} (${config}), not ${home} where the project's other models are: a table of the service is a schema and table on a connector that reads one database, so ${relation} would be declared as if it were in ${home}; build it in ${home}, or leave it out with --exclude ${selectorOf(node.uniqueId) ?? node.name}`;
}

/** A node refused or skipped, with the reason, each of its tests listed as not mapped (`why`). */
function leftOut(node: ManifestNode, tests: ManifestNode[], reason: string, why: string): DbtRefusal {
  return {
    uniqueId: node.uniqueId,
    resourceType: node.resourceType as DbtResourceType,
    name: node.alias,
    reason,
    notMappedTests: tests.map((t) => ({ test: t.uniqueId, reason: `not mapped: ${why} (${reason})` })),
  };
}

type Placement = { kind: 'node'; id: string } | { kind: 'other'; reason: string } | { kind: 'elsewhere' };

type Columns =
  | {
      ok: true;
      columns: Array<{ name: string; type: string }>;
      from: DbtDeclaration['columnsFrom'];
      note?: string;
    }
  | { ok: false; reason: string };

class ProjectReader {
  private readonly columnCache = new Map<string, Columns>();
  private lastRunRead: LastRun | undefined | null = null;
  /** Whether a model's columns hung on dbt's log that could not be read (DbtArtifacts.runLogUnread). */
  unreadLogAsked = false;

  constructor(
    private readonly manifest: Manifest,
    private readonly catalog: Map<string, CatalogTable>,
    private readonly artifacts: DbtArtifacts,
    private readonly dbtReader: DbtReader,
  ) {}

  private get grammar(): PgGrammar {
    return this.dbtReader.grammar;
  }

  private get adapter(): string | undefined {
    return this.manifest.adapter;
  }

  /**
   * The relation's schema and table as the warehouse names them: a part dbt quotes keeps its case, an
   * unquoted one is folded as the adapter folds it (Snowflake to upper case, PostgreSQL to lower).
   */
  relationOf(
    node: ManifestNode,
    schema: string,
  ): SourceRef & { quoted: { schema: boolean; table: boolean } } {
    const table = node.resourceType === 'source' ? (node.identifier ?? node.name) : node.alias;
    const quoting = relationQuoting(this.adapter, this.artifacts.quoting, node.quoting);
    return {
      schema: warehouseName(schema, this.adapter, quoting.schema),
      table: warehouseName(table, this.adapter, quoting.identifier),
      quoted: { schema: quoting.schema, table: quoting.identifier },
    };
  }

  /**
   * The column names a test's name is resolved against, and whether exactly (as the adapter resolves a name):
   * the catalog's. Without one, on PostgreSQL (whose warehouse the service reads), where the plan read the
   * warehouse object, the names it holds, as a catalog lists them: for a table a test references (`whole`),
   * all of them (its properties file may document only some); for the table tested, the columns found, each
   * as the object spells it where it holds it only in another case (an unquoted name dbt writes then reaches
   * only a column the object holds in lower case, as dbt's SQL does). Otherwise the names found, matched
   * without case.
   */
  testColumns(
    node: ManifestNode,
    found: Columns & { ok: true },
    whole = false,
  ): { columns: string[]; exactColumns: boolean } {
    const names = found.columns.map((c) => c.name);
    if (found.from === 'catalog') return { columns: names, exactColumns: true };
    const warehouse = this.artifacts.warehouse;
    if (warehouse === undefined || this.adapter !== 'postgres' || !node.schema)
      return { columns: names, exactColumns: false };
    const { schema, table } = this.relationOf(node, node.schema);
    const held = warehouse.columns.get(`${warehouse.schema ?? schema}.${table}`.toLowerCase());
    if (held === undefined) return { columns: names, exactColumns: false };
    if (whole) return { columns: [...held], exactColumns: true };
    const spelled = names.map(
      (name) =>
        (held.includes(name) ? name : held.find((c) => c.toLowerCase() === name.toLowerCase())) ?? name,
    );
    return { columns: spelled, exactColumns: true };
  }

  /** Where a test belongs: a selected node, the project's other tests, or a node outside the selection. */
  attachTest(test: ManifestNode, selected: Set<string>): Placement {
    const attached = attachedNode(this.manifest, test);
    if (attached !== undefined) {
      if (selected.has(attached)) return { kind: 'node', id: attached };
      if (attached.startsWith('source.'))
        return {
          kind: 'other',
          reason: `it tests the dbt source ${attached}; gds governs models, seeds and snapshots`,
        };
      return { kind: 'elsewhere' };
    }
    const parents = test.dependsOn.filter((id) => !id.startsWith('macro.'));
    const chosen = parents.filter((id) => selected.has(id));
    if (chosen.length === 1 && chosen[0] !== undefined) return { kind: 'node', id: chosen[0] };
    if (chosen.length > 1)
      return {
        kind: 'other',
        reason: `it reads several selected tables (${chosen.join(', ')}); a Gate 1 rule checks one table`,
      };
    const declared = parents.filter((id) => DECLARED_TYPES.has(id.split('.')[0] ?? ''));
    if (declared.length > 0) return { kind: 'elsewhere' };
    return {
      kind: 'other',
      reason:
        parents.length === 0
          ? 'it is attached to no model, seed or snapshot'
          : `it tests ${parents.join(', ')}, which gds does not govern`,
    };
  }

  /**
   * What a relationships test's `to:` references, undefined when it names nothing of the manifest, or why
   * no Gate 1 reference of `declared` can check it (the check would fail on every run).
   */
  private referenceTarget(
    declared: ManifestNode,
    test: ManifestNode,
    to: string,
  ): ReferenceTarget | { unmappable: string } | undefined {
    // A contract's foreign_key written as `schema.table (column)`: the relation itself.
    const relation = /^relation\('([^']*)', '([^']*)'\)$/.exec(to);
    if (relation) {
      const [, schema = '', table = ''] = relation;
      const named = [...this.manifest.nodes.values()].find(
        (n) =>
          DECLARED_TYPES.has(n.resourceType) &&
          n.schema?.toLowerCase() === schema.toLowerCase() &&
          n.alias.toLowerCase() === table.toLowerCase(),
      );
      const unmappable = named === undefined ? undefined : unreferenceable(declared, named, to);
      if (unmappable !== undefined) return { unmappable };
      const columns = named === undefined ? undefined : this.columnsOf(named);
      return {
        schema: named?.schema ?? schema,
        table: named?.alias ?? table,
        ...(named !== undefined && columns?.ok ? this.testColumns(named, columns, true) : {}),
      };
    }
    const id = resolveCall(this.manifest, to, test.dependsOn);
    const node =
      id === undefined ? undefined : (this.manifest.nodes.get(id) ?? this.manifest.sources.get(id));
    if (!node?.schema) return undefined;
    const unmappable = unreferenceable(declared, node, to);
    if (unmappable !== undefined) return { unmappable };
    const { schema, table } = this.relationOf(node, node.schema);
    const columns = this.columnsOf(node);
    return {
      schema,
      table,
      ...(columns.ok
        ? {
            ...this.testColumns(node, columns, true),
            types: new Map(columns.columns.map((c) => [c.name.toLowerCase(), c.type])),
          }
        : {}),
    };
  }

  declare(node: ManifestNode, tests: ManifestNode[], warnings: string[]): DbtDeclaration | DbtRefusal {
    const resourceType = node.resourceType as DbtResourceType;
    const refuse = (reason: string): DbtRefusal => leftOut(node, tests, reason, 'the table is refused');
    if (!node.schema) return refuse('the manifest gives the relation no schema');
    for (const [what, value] of [
      ['table name', node.alias],
      ['schema', node.schema],
    ] as const) {
      const problem = nameProblem(value);
      if (problem) return refuse(`the relation's ${what} ${JSON.stringify(value)} ${problem}`);
    }
    const found = this.columnsOf(node);
    if (!found.ok) return refuse(found.reason);
    if (found.note) warnings.push(`${node.uniqueId}: ${found.note}`);
    const names = found.columns.map((c) => c.name);
    const constraints = constraintTests(node, this.adapter);
    if (constraints.ignored)
      warnings.push(
        `${node.uniqueId}: its constraints apply only under an enforced contract (contract: {enforced: true}), as in dbt; none is a Gate 1 rule`,
      );
    const rules = mapTests([...tests, ...constraints.tests], {
      ...this.testColumns(node, found),
      columnTypes: new Map(found.columns.map((c) => [c.name.toLowerCase(), c.type])),
      adapter: this.adapter,
      resolveReference: (test, to) => this.referenceTarget(node, test, to),
      normaliseName: (name) => writtenName(name, this.adapter),
      primaryKey: node.primaryKey.length > 0 ? node.primaryKey : constraints.primaryKey,
      declaredNullRates: declaredNullRates(node, names, warnings),
      grammar: this.grammar,
      writtenByFusion: writtenByFusion(this.manifest.dbtVersion),
      macros: {
        implementations: this.manifest.testImplementations,
        typeCalls: this.manifest.typeMacroCalls,
        expectations: this.manifest.expectationsMacros,
        ...(this.manifest.projectName === undefined ? {} : { rootProject: this.manifest.projectName }),
        ...(this.artifacts.dispatch === undefined ? {} : { dispatch: this.artifacts.dispatch }),
      },
      ...(this.manifest.postgresRegexpInstr === undefined
        ? {}
        : { postgresRegexpInstr: this.manifest.postgresRegexpInstr }),
      ...(this.manifest.notNullProportionCast === undefined
        ? {}
        : { notNullProportionCast: this.manifest.notNullProportionCast }),
      ...(this.manifest.compoundIgnoreRowIf === undefined
        ? {}
        : { compoundIgnoreRowIf: this.manifest.compoundIgnoreRowIf }),
    });
    rules.notMapped.push(...constraints.notMapped);
    rules.warnings.forEach((w) => warnings.push(`${node.uniqueId}: ${w.test}: ${w.warning}`));
    const collation = collationWarning(this.adapter, [...tests, ...constraints.tests], rules, found.columns);
    if (collation !== undefined) warnings.push(`${node.uniqueId}: ${collation}`);
    const columns: ArtifactColumn[] = found.columns.map((c) => ({
      name: c.name,
      type: c.type,
      ...(rules.required.has(c.name) ? { required: true } : {}),
      ...(rules.references.has(c.name) ? { references: rules.references.get(c.name) } : {}),
    }));
    const { quoted, ...source } = this.relationOf(node, node.schema);
    const decisionContext = decisionContextOf(node);
    const document: Record<string, unknown> = { table: node.alias, source: formatSourceRef(source) };
    if (decisionContext !== undefined) document['decision_context'] = decisionContext;
    document['columns'] = columns;
    const contract = contractOf(node, rules, warnings);
    const gate1Yaml = gate1YamlOf(this.dbtReader.yaml, node, rules);
    return {
      uniqueId: node.uniqueId,
      resourceType,
      name: node.alias,
      source,
      sourceQuoted: quoted,
      ...(node.database === undefined ? {} : { database: node.database }),
      columns,
      columnsFrom: found.from,
      ...(decisionContext === undefined ? {} : { decisionContext }),
      artifact: declaredArtifact(`${node.alias}.json`, document),
      ...(gate1Yaml === undefined ? {} : { gate1Yaml }),
      ...(contract === undefined ? {} : { contract }),
      mappedTests: rules.mapped,
      notMappedTests: rules.notMapped,
      rules: rules.rules,
      packageName: node.packageName,
      fqn: node.fqn,
      ...(node.originalFilePath === undefined ? {} : { originalFilePath: node.originalFilePath }),
      tags: node.tags,
      ...(node.materialized === undefined ? {} : { materialized: node.materialized }),
    };
  }

  /**
   * Columns and types: the catalog (the warehouse's truth), typed manifest columns (unless the compiled SQL
   * selects others and no contract is enforced), compiled SQL, the seed file.
   */
  columnsOf(node: ManifestNode): Columns {
    const cached = this.columnCache.get(node.uniqueId);
    if (cached) return cached;
    const found = checkedColumns(withSnapshotColumns(node, this.findColumns(node), this.adapter));
    this.columnCache.set(node.uniqueId, found);
    return found;
  }

  private findColumns(node: ManifestNode): Columns {
    const adapter = this.adapter;
    const fromCatalog = this.catalog.get(node.uniqueId);
    if (fromCatalog && fromCatalog.columns.length > 0)
      return (
        this.sinceCatalog(node, fromCatalog) ?? { ok: true, columns: fromCatalog.columns, from: 'catalog' }
      );
    // dbt quotes a seed's column names (so they keep their case) unless quote_columns: false, which is
    // dbt-snowflake's default (and Athena's and Exasol's).
    const seedQuoted =
      node.resourceType === 'seed' && (node.quoteColumns ?? !UNQUOTED_SEED_ADAPTERS.has(adapter ?? ''));
    const declared = node.columns.map((c) => ({
      ...c,
      name: warehouseName(c.name, adapter, c.quote === true || seedQuoted),
    }));
    const typeOf = (name: string): string | undefined => {
      const lower = name.toLowerCase();
      return (
        declared.find((c) => c.name.toLowerCase() === lower)?.dataType ??
        Object.entries(node.columnTypes).find(([k]) => k.toLowerCase() === lower)?.[1]
      );
    };
    const python = node.language?.toLowerCase() === 'python';
    if (declared.length > 0 && declared.every((c) => c.dataType !== undefined)) {
      const documented: Columns = {
        ok: true,
        columns: declared.map((c) => ({ name: c.name, type: c.dataType ?? 'unknown' })),
        from: 'manifest',
      };
      // The documented columns are the relation's only under an enforced contract; otherwise they are
      // documentation, and where the compiled SQL selects other columns, the SQL's are the relation's.
      if (node.contractEnforced || python || node.compiledSql === undefined) return documented;
      const read = this.sqlColumns(node.compiledSql);
      if (!read.ok) return documented;
      const selected = new Set(read.columns.map((c) => c.name.toLowerCase()));
      const stale = declared.filter((c) => !selected.has(c.name.toLowerCase())).map((c) => c.name);
      if (stale.length === 0 && selected.size === declared.length) return documented;
      return {
        ok: true,
        columns: read.columns.map((c) => ({ name: c.name, type: typeOf(c.name) ?? c.type ?? 'unknown' })),
        from: 'compiled_sql',
        ...(stale.length === 0
          ? {}
          : {
              note: `its properties file documents ${stale.join(', ')}, which its compiled SQL does not select; the SQL's columns are declared (the model's contract is not enforced)`,
            }),
      };
    }
    let sqlProblem: string | undefined;
    if (node.compiledSql !== undefined && !python) {
      const read = this.sqlColumns(node.compiledSql);
      if (read.ok)
        return {
          ok: true,
          columns: read.columns.map((c) => ({ name: c.name, type: typeOf(c.name) ?? c.type ?? 'unknown' })),
          from: 'compiled_sql',
        };
      sqlProblem = read.reason;
    }
    const header = node.resourceType === 'seed' ? this.artifacts.seeds?.[node.uniqueId] : undefined;
    if (header && header.length > 0)
      return {
        ok: true,
        columns: header.map((name) => {
          const shown = warehouseName(name, adapter, seedQuoted);
          return { name: shown, type: typeOf(shown) ?? 'unknown' };
        }),
        from: 'seed_file',
      };
    if (declared.length > 0)
      return {
        ok: true,
        columns: declared.map((c) => ({ name: c.name, type: c.dataType ?? 'unknown' })),
        from: 'manifest',
        note: `only the ${declared.length} column(s) its properties file documents are declared, without types (${python ? 'a Python model' : sqlProblem === undefined ? 'no compiled SQL' : `its compiled SQL: ${sqlProblem}`}); run dbt docs generate for the catalog`,
      };
    const why = python
      ? 'it is a Python model, whose columns only the warehouse knows'
      : node.compiledSql !== undefined
        ? `its compiled SQL does not name its columns (${sqlProblem ?? 'unreadable'})`
        : node.resourceType === 'seed'
          ? "a seed's columns are the header of its CSV file, which was not read (name the dbt project folder, which holds seeds/)"
          : 'the manifest holds no compiled SQL (written by dbt compile, run or build)';
    return {
      ok: false,
      reason: `no columns: it is not in a catalog (dbt docs generate writes target/catalog.json), its properties list no columns, and ${why}`,
    };
  }

  /**
   * A model's columns when the catalog is older than the manifest (dbt build since dbt docs generate) and its
   * compiled SQL selects other columns than the catalog lists: the SQL's, typed from the catalog where it
   * lists the column, else as the SQL or the properties file do; but the catalog's, with a note, when the
   * project's run_results.json says the model was not rebuilt since the catalog (dbt compile or parse wrote
   * the manifest, or the run failed or skipped it). Undefined when the catalog is as new, or the SQL is
   * unreadable or selects the same columns (then the catalog's names and types are the relation's).
   */
  private sinceCatalog(node: ManifestNode, table: CatalogTable): Columns | undefined {
    if (!catalogOlder(table.generatedAt, this.manifest.generatedAt)) return undefined;
    // A model's only: a snapshot's table has the columns dbt adds beside its SQL's (withSnapshotColumns).
    const python = node.language?.toLowerCase() === 'python';
    if (node.resourceType !== 'model' || node.compiledSql === undefined || python) return undefined;
    // Only a view or a table is rebuilt whole from its SQL: an incremental model's relation keeps its columns
    // (on_schema_change ignore, append_new_columns, fail), and a custom materialization may do anything.
    if (!REBUILT_WHOLE.has((node.materialized ?? 'view').toLowerCase())) return undefined;
    const read = this.sqlColumns(node.compiledSql);
    if (!read.ok) return undefined;
    const key = (name: string) => name.toLowerCase();
    const listed = new Map(table.columns.map((c) => [key(c.name), c]));
    const selected = new Set(read.columns.map((c) => key(c.name)));
    if (selected.size === listed.size && [...selected].every((name) => listed.has(name))) return undefined;
    const documented = new Map(node.columns.map((c) => [key(c.name), c.dataType]));
    const gone = table.columns.filter((c) => !selected.has(key(c.name))).map((c) => c.name);
    const added = read.columns.filter((c) => !listed.has(key(c.name))).map((c) => c.name);
    const older = `catalog.json (${table.generatedAt ?? ''}) is older than manifest.json (${this.manifest.generatedAt ?? ''})`;
    const changes = [
      ...(gone.length > 0 ? [`no longer ${gone.join(', ')}`] : []),
      ...(added.length > 0 ? [`new ${added.join(', ')}`] : []),
    ].join('; ');
    const since =
      this.lastRun === undefined
        ? undefined
        : rebuiltSinceCatalog(this.lastRun, node.uniqueId, table.generatedAt ?? '');
    const builtSince =
      since?.rebuilt === false && since.compiledOnly === true
        ? this.artifacts.runSql?.[node.uniqueId]
        : undefined;
    const ran = builtSince !== undefined && ranCompiledSql(builtSince, node.compiledSql);
    const failed = ran && this.artifacts.runFailed?.includes(node.uniqueId) === true;
    if (ran && this.artifacts.runLogUnread !== undefined) this.unreadLogAsked = true;
    const hidden = ran && !failed;
    if (since?.rebuilt === false && !hidden)
      return {
        ok: true,
        columns: table.columns,
        from: 'catalog',
        note: `${older} and the compiled SQL selects other columns (${changes}), but the model was not rebuilt since the catalog: ${since.why}${failed ? `, and target/run's build of this SQL is of a dbt run that failed (${this.artifacts.runLog ?? 'logs/dbt.log'} says so; dbt writes the file before it runs the SQL)` : ''}. The catalog's columns are declared (the warehouse still has them); once dbt run or build rebuilds it, run dbt docs generate`,
      };
    return {
      ok: true,
      columns: read.columns.map((c) => {
        const held = listed.get(key(c.name));
        return held ?? { name: c.name, type: documented.get(key(c.name)) ?? c.type ?? 'unknown' };
      }),
      from: 'compiled_sql',
      note: `${older} and its columns are not the ones the compiled SQL selects now (${changes})${hidden && since?.rebuilt === false ? `, and though ${since.why}, target/run holds its build of this SQL (a dbt run or build since the catalog)` : ''}: the SQL's columns are declared; run dbt docs generate for their warehouse types`,
    };
  }

  /** The project's run_results.json as read for the catalog (last-run.ts), read at the first model asking. */
  private get lastRun(): LastRun | undefined {
    if (this.lastRunRead === null)
      this.lastRunRead =
        this.artifacts.runResults === undefined ? undefined : readLastRun(this.artifacts.runResults);
    return this.lastRunRead;
  }

  private sqlColumns(
    sql: string,
  ): { ok: true; columns: Array<{ name: string; type?: string }> } | { ok: false; reason: string } {
    const read = selectColumns(this.grammar, sql);
    if (read.ok)
      return {
        ok: true,
        columns: read.columns.map((c) => ({ ...c, name: fromPostgresName(c.name, this.adapter) })),
      };
    // SQL of a warehouse PostgreSQL's grammar does not read (backticks, QUALIFY, …): its top-level SELECT
    // list, read the way the warehouse names the columns (a star there is refused with the first reason).
    const dialect = WAREHOUSE_DIALECTS[this.adapter ?? ''];
    if (dialect === undefined) return read;
    const view = readWarehouseView(`CREATE VIEW gds_dbt_model AS\n${sql}`, dialect);
    return view.ok ? { ok: true, columns: view.view.columns.map((c) => ({ name: c.name })) } : read;
  }
}

/** The materializations that build the relation afresh from the model's SQL on every run. */
export const REBUILT_WHOLE: ReadonlySet<string> = new Set(['view', 'table']);

/**
 * The adapters whose default collation compares text without case (SQL Server's and Synapse's
 * SQL_Latin1_General_CP1_CI_AS, MySQL's utf8mb4_0900_ai_ci, …); Fabric's default is case-sensitive.
 */
const CASE_INSENSITIVE_COLLATION: ReadonlySet<string> = new Set([
  'sqlserver',
  'synapse',
  'mysql',
  'mariadb',
  'singlestore',
]);

/**
 * The adapters whose `=` ignores trailing spaces (SQL Server's, Synapse's and Fabric's ANSI padding, under any
 * collation, a binary one too; MariaDB's PAD SPACE collations; MySQL 8's default utf8mb4_0900_ai_ci is NO PAD).
 */
const PAD_SPACE: ReadonlySet<string> = new Set(['sqlserver', 'synapse', 'fabric', 'mariadb']);

/** The tests that compare a column's values with each other or with listed values. */
const COMPARING_TESTS: ReadonlySet<string> = new Set([
  'accepted_values',
  'unique',
  'relationships',
  'dbt_utils.unique_combination_of_columns',
  'dbt_expectations.expect_column_values_to_be_unique',
  'dbt_expectations.expect_compound_columns_to_be_unique',
  'dbt_expectations.expect_column_values_to_be_in_set',
  'dbt_expectations.expect_column_values_to_not_be_in_set',
  'dbt_utils.not_accepted_values',
]);

const NOT_TEXT =
  /^(?:(?:big|small|tiny)?int|integer|numeric|decimal|number|float|double|real|bit|bool|boolean|date|datetime|datetime2|datetimeoffset|timestamp|time|money)\b/i;

/**
 * On an adapter whose collation compares text without case, or whose `=` ignores trailing spaces (Fabric,
 * case-sensitive by default), the mapped tests whose meaning depends on it (values compared with listed ones,
 * with each other, with the referenced table's; or a condition holding a string), in words: dbt passes 'Placed'
 * against accepted value 'placed' and fails 'A' beside 'a' as a repeat (or 'a ' beside 'a'), and Gate 1, in
 * PostgreSQL, compares with case and trailing spaces. Columns of a type that is not text are left out.
 */
function collationWarning(
  adapter: string | undefined,
  tests: ManifestNode[],
  rules: MappedRules,
  columns: ReadonlyArray<{ name: string; type: string }>,
): string | undefined {
  const caseless = CASE_INSENSITIVE_COLLATION.has(adapter ?? '');
  if (!caseless && !PAD_SPACE.has(adapter ?? '')) return undefined;
  const mapped = new Set(rules.mapped.map((m) => m.test));
  const text = (written: unknown) => {
    if (typeof written !== 'string') return false;
    const name = findColumn(
      columns.map((c) => c.name),
      written,
    );
    const type = columns.find((c) => c.name === name)?.type ?? 'unknown';
    return !NOT_TEXT.test(type.trim());
  };
  const affected = tests.filter((node) => {
    const test = node.test;
    if (test === undefined || !mapped.has(node.uniqueId)) return false;
    const kind = `${test.namespace === undefined ? '' : `${test.namespace}.`}${test.name ?? ''}`;
    const kwargs = test.kwargs;
    const list = kwargs['combination_of_columns'] ?? kwargs['column_list'];
    const named = [test.columnName ?? kwargs['column_name'], ...(Array.isArray(list) ? list : [])];
    const conditions = [test.where, kwargs['row_condition'], kwargs['expression'], kwargs['condition']];
    return (
      (COMPARING_TESTS.has(kind) && named.some(text)) ||
      conditions.some((c) => typeof c === 'string' && c.includes("'"))
    );
  });
  if (affected.length === 0) return undefined;
  if (!caseless)
    return `on ${adapter} \`=\` compares text ignoring trailing spaces (ANSI padding, under any collation: 'placed ' is 'placed', 'a' and 'a ' one value), and dbt's tests with it, while Gate 1 runs in PostgreSQL, where they differ: ${affected.map((t) => t.uniqueId).join(', ')} may pass in dbt and fail in Gate 1 or the other way round where values differ only in trailing spaces ('placed ' is accepted value 'placed' to dbt, 'a' and 'a ' a repeat); compare rtrim() values in the test, or trim them in the model, to mean one thing in both`;
  const padded = PAD_SPACE.has(adapter ?? '')
    ? `; it also compares text ignoring trailing spaces ('placed ' is 'placed', 'a' and 'a ' one value), which PostgreSQL does not, so compare rtrim() values too`
    : '';
  return `on ${adapter} the default collation compares text case-insensitively (and dbt's tests with it), while Gate 1 runs in PostgreSQL and compares with case: ${affected.map((t) => t.uniqueId).join(', ')} may pass in dbt and fail in Gate 1 or the other way round ('Placed' is accepted value 'placed' to dbt, 'A' and 'a' one value) where values differ only in case; give the columns a case-sensitive collation in the warehouse, or compare lower() values in the test, to mean one thing in both${padded}`;
}

/**
 * Why a Gate 1 reference of `declared` to `target` could never be checked, or undefined: an ephemeral or empty
 * model has no relation, and a relation in another database is out of reach of the connector, which reads one
 * database (the one dbt builds `declared` in).
 */
function unreferenceable(declared: ManifestNode, target: ManifestNode, to: string): string | undefined {
  if (target.resourceType === 'model' && target.materialized === 'ephemeral')
    return `its to: ${to} is ${target.name}, an ephemeral model: dbt builds no relation for it (it inlines it into the models that use it), so there is no table for a reference to check; materialize ${target.name} as a view or table, or test the relationship against the table it reads`;
  if (target.empty === true)
    return `its to: ${to} is ${target.name}, whose SQL file is empty: dbt builds no relation for it, so there is no table for a reference to check; write ${target.name}'s SQL, or test the relationship against another table`;
  const [there, here] = [target.database, declared.database];
  if (there !== undefined && here !== undefined && there.toLowerCase() !== here.toLowerCase())
    return `its to: ${to} is in database ${there}, and ${declared.alias} is in ${here}: the service's connector reads one database, so a reference there could never be checked; keep the test in dbt, or build the referenced table in ${here}`;
  return undefined;
}

/**
 * The types of the columns dbt adds to a snapshot's table (a catalog lists them, the compiled SQL and
 * properties do not), by dbt's default names; the node names them as its config does.
 */
const SNAPSHOT_COLUMN_TYPES: Readonly<Record<string, string>> = {
  dbt_scd_id: 'text',
  dbt_updated_at: 'timestamp',
  dbt_valid_from: 'timestamp',
  dbt_valid_to: 'timestamp',
  dbt_is_deleted: 'text',
};

function withSnapshotColumns(node: ManifestNode, found: Columns, adapter: string | undefined): Columns {
  if (!found.ok || node.resourceType !== 'snapshot' || found.from === 'catalog') return found;
  const held = new Set(found.columns.map((c) => c.name.toLowerCase()));
  const added = Object.entries(node.snapshotColumns ?? {})
    .filter(([, name]) => !held.has(name.toLowerCase()))
    .map(([standard, name]) => ({
      name: warehouseName(name, adapter),
      type: SNAPSHOT_COLUMN_TYPES[standard] ?? 'unknown',
    }));
  return { ...found, columns: [...found.columns, ...added] };
}

function checkedColumns(found: Columns): Columns {
  if (!found.ok) return found;
  const seen = new Set<string>();
  for (let i = 0; i < found.columns.length; i++) {
    const column = found.columns[i] as (typeof found.columns)[number];
    const problem = nameProblem(column.name);
    if (problem) return { ok: false, reason: `column name ${JSON.stringify(column.name)} ${problem}` };
    if (seen.has(column.name))
      return { ok: false, reason: `the column ${JSON.stringify(column.name)} appears twice` };
    seen.add(column.name);
  }
  return {
    ...found,
    columns: found.columns.map((c) => ({
      name: c.name,
      type: c.type.trim() === '' ? 'unknown' : c.type.trim(),
    })),
  };
}

/**
 * `meta.gds.null_rate: {warn, fail}` (shares of rows, 0 to 1) of the model, for each of its columns, and of a
 * column, for that column.
 */
function declaredNullRates(
  node: ManifestNode,
  columns: string[],
  warnings: string[],
): Map<string, FieldOverride['nullRate']> {
  const read = (meta: Record<string, unknown>, where: string) => {
    const gds = isEntry(meta['gds']) ? meta['gds'] : {};
    const value = gds['null_rate'] ?? gds['nullRate'];
    if (value === undefined) return undefined;
    const rate = isEntry(value) ? value : {};
    const [warn, fail] = [rate['warn'], rate['fail']];
    const share = (n: unknown): n is number => typeof n === 'number' && n >= 0 && n <= 1;
    if (share(warn) && share(fail) && warn <= fail) return { warn, fail };
    warnings.push(
      `${node.uniqueId}: ${where}meta.gds null_rate ${JSON.stringify(value)} is not {warn, fail} with 0 <= warn <= fail <= 1 (shares of rows); it is left out`,
    );
    return undefined;
  };
  const rates = new Map<string, FieldOverride['nullRate']>();
  const model = read(node.meta, '');
  if (model) for (let i = 0; i < columns.length; i++) rates.set(columns[i] as string, model);
  for (let i = 0; i < node.columns.length; i++) {
    const column = node.columns[i] as ManifestColumn;
    const rate = read(column.meta, `column ${column.name}: `);
    const name = rate === undefined ? undefined : findColumn(columns, column.name);
    if (rate && name !== undefined) rates.set(name, rate);
  }
  return rates;
}

function decisionContextOf(node: ManifestNode): string | undefined {
  const gds = isEntry(node.meta['gds']) ? node.meta['gds'] : {};
  const value = text(gds['decision_context']) ?? text(node.meta['decision_context']) ?? node.description;
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

function contractOf(
  node: ManifestNode,
  rules: MappedRules,
  warnings: string[],
): DbtContractIntent | undefined {
  const gds = isEntry(node.meta['gds']) ? node.meta['gds'] : {};
  const contract: DbtContractIntent = {};
  const warn = (what: string) =>
    warnings.push(`${node.uniqueId}: meta.gds ${what}; it is left out of the contract`);
  const intent = text(gds['intent'])?.trim().toUpperCase();
  if (intent !== undefined) {
    if (INTENTS.includes(intent)) contract.intent = intent;
    else warn(`intent ${JSON.stringify(gds['intent'])} is not one of ${INTENTS.join(', ')}`);
  }
  const consumersRaw = gds['allowed_consumers'] ?? gds['allowedConsumers'];
  if (consumersRaw !== undefined) {
    const list = (Array.isArray(consumersRaw) ? consumersRaw : String(consumersRaw).split(','))
      .map((c) => String(c).trim().toUpperCase())
      .filter((c) => c !== '');
    const unknown = list.filter((c) => !CONSUMERS.includes(c));
    if (unknown.length > 0)
      warn(`allowed_consumers ${unknown.join(', ')} are not among ${CONSUMERS.join(', ')}`);
    else contract.allowedConsumers = [...new Set(list)];
  }
  for (const [key, field] of [
    ['meaning', 'meaning'],
    ['grain', 'grain'],
  ] as const) {
    const value = text(gds[key])?.trim();
    if (value !== undefined && value !== '') contract[field] = value;
  }
  const grainType = text(gds['grain_type'] ?? gds['grainType'])?.trim();
  if (rules.grainKeyColumns) {
    contract.grainKeyColumns = rules.grainKeyColumns;
    contract.grainType = grainType !== undefined && grainType !== '' ? grainType : 'ONE_PER_ENTITY';
  } else if (grainType !== undefined && grainType !== '') {
    warn(`grain_type ${grainType} needs a grain key, and no unique test gives one`);
  }
  return Object.keys(contract).length === 0 ? undefined : contract;
}

function gate1YamlOf(yaml: Yaml, node: ManifestNode, rules: MappedRules): string | undefined {
  const lists: Array<[string, CommentedItem[]]> = [];
  const add = (list: keyof Gate1Document, items: Array<{ name?: string; field?: string }>) => {
    if (items.length === 0) return;
    lists.push([
      list,
      items.map((item) => {
        const key = list === 'fieldOverrides' ? `field:${String(item.field)}` : String(item.name);
        const trace = rules.traces.get(key);
        return { value: item as CommentedItem['value'], comment: trace ? ` ${trace}` : undefined };
      }),
    ]);
  };
  add('patternChecks', rules.patternChecks);
  add('customPredicates', rules.customPredicates);
  add('uniqueChecks', rules.uniqueChecks);
  add('fieldOverrides', rules.fieldOverrides);
  if (lists.length === 0) return undefined;
  return printGate1(
    yaml,
    ` gate1.yml of dbt ${node.resourceType} ${node.uniqueId}, written by gds from its dbt tests`,
    lists,
  );
}
