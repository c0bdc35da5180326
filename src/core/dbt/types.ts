// The boundary between reading a dbt project (src/core/dbt: pure, from dbt's own artifacts, nothing of
// dbt runs) and converging the service on it (`gds plan` / `gds apply`). One DbtDeclaration per selected
// model, seed or snapshot, already in the service's terms: the JSON artifact to push, the gate1.yml to
// apply, the contract intent to set, and where each dbt test went.
import type { ArtifactColumn, SourceRef } from '../artifacts/types.js';

/** A run's results: each node's status (`success`, `error`, `fail`, `warn`, `skipped`, `pass`, …) by unique id. */
export type RunResults = Map<string, string>;

/** A `dbt source freshness` run: each source's max_loaded_at, and the sources whose check failed to run. */
export interface SourceFreshness {
  loadedAt: Map<string, string>;
  runtimeErrors: Set<string>;
}

/**
 * What dbt's PreviousState holds besides the manifest (previous-run.ts reads it): the artifacts `result:`
 * and `source_status:` compare with; each undefined when its file is absent.
 */
export interface PreviousRun {
  /** run_results.json of the --state folder. */
  results?: RunResults;
  /** sources.json of the --state folder. */
  sources?: SourceFreshness;
  /** sources.json of the project's target/ (dbt's sources_current). */
  sourcesCurrent?: SourceFreshness;
}

/** dbt's `--indirect-selection` modes (select.ts reads them). */
export type IndirectSelection = 'eager' | 'cautious' | 'buildable' | 'empty';

/** dbt's `quoting` (project, model or source): whether each part of a relation's name is quoted. */
export interface QuotePolicy {
  database?: boolean;
  schema?: boolean;
  identifier?: boolean;
}

export type DbtResourceType = 'model' | 'seed' | 'snapshot';

/** A dbt test that became part of the table's governance. */
export interface MappedTest {
  /** The test node's `unique_id`, e.g. `test.jaffle_shop.unique_orders_order_id.fed79b3a6e`. */
  test: string;
  /**
   * What it became, in gds terms: `required:<column>`, `nullRate:<column>`, `grainKey`,
   * `unique:<check name>` (a uniqueness besides the grain key), `predicate:<check name>`, `pattern:<check name>`,
   * `reference:<column>`.
   */
  rule: string;
}

/** A dbt test that became nothing, and why (never dropped silently). */
export interface NotMappedTest {
  test: string;
  reason: string;
  /** The selection leaves the test out (dbt would not run it): not a test gds failed to map. */
  excluded?: true;
}

/** The contract intent from `meta.gds` and the grain key from `unique` tests; only the fields declared. */
export interface DbtContractIntent {
  intent?: string;
  allowedConsumers?: string[];
  grainType?: string;
  grainKeyColumns?: string[];
  grain?: string;
  meaning?: string;
}

/** A declaration's JSON artifact (src/core/dbt/declared-artifact.ts makes one). */
export interface DeclaredArtifact {
  fileName: string;
  mimeType: 'json';
  content: string;
  /**
   * The value `content` was written from (`text`, the content then): `gds plan` reads the artifact from it
   * instead of parsing the text back, and only while the content is still that text.
   */
  written?: { text: string; value: Record<string, unknown> };
}

export interface DbtDeclaration {
  uniqueId: string;
  resourceType: DbtResourceType;
  /** The table name: the relation's alias (never a `__dbt_tmp` / `__dbt_backup` name). */
  name: string;
  /** `schema.alias` of the relation, as the warehouse names them under dbt's quoting. */
  source: SourceRef;
  /** Whether dbt quotes the source's schema and table (a quoted name keeps its case, an unquoted one is folded). */
  sourceQuoted?: { schema: boolean; table: boolean };
  /** The relation's database as dbt wrote it, when it has one; the service's connector has no database part. */
  database?: string;
  columns: ArtifactColumn[];
  /**
   * Where the columns and types came from: the catalog (the warehouse's truth), the manifest, compiled SQL,
   * or (a seed) the header of its CSV file. A type gds could not learn is `unknown`.
   */
  columnsFrom: 'catalog' | 'manifest' | 'compiled_sql' | 'seed_file';
  decisionContext?: string;
  /** The governance artifact to push: a JSON artifact that `gds push` would parse the same way. */
  artifact: DeclaredArtifact;
  /** The gate1.yml to apply, or undefined when no test became a Gate 1 rule. */
  gate1Yaml?: string;
  contract?: DbtContractIntent;
  mappedTests: MappedTest[];
  notMappedTests: NotMappedTest[];
  /** Every rule the table gets in words, implied ones included (baseline checks, columns that may be NULL). */
  rules?: string[];
  /** dbt's own coordinates, for selection and display. */
  packageName: string;
  fqn: string[];
  originalFilePath?: string;
  tags: string[];
  materialized?: string;
}

/** A selected node that cannot be governed, with the reason (e.g. no column could be found). */
export interface DbtRefusal {
  uniqueId: string;
  resourceType: DbtResourceType;
  name: string;
  reason: string;
  notMappedTests: NotMappedTest[];
}

/**
 * A selected node gds governs nothing of, and why: an ephemeral model (dbt builds no relation for it, it
 * inlines it into the models that read it), or an empty one (dbt run and build skip it). Not a refusal:
 * there is nothing to fix, and nothing waits on it.
 */
export interface DbtSkipped {
  uniqueId: string;
  resourceType: DbtResourceType;
  name: string;
  reason: string;
  /** Its dbt tests, none of which becomes a rule. */
  notMappedTests: NotMappedTest[];
}

export interface DbtLineageNode {
  uniqueId: string;
  name: string;
  parents: string[];
}

export interface DbtProject {
  projectName?: string;
  dbtVersion?: string;
  /** e.g. `https://schemas.getdbt.com/dbt/manifest/v12.json`. */
  manifestSchemaVersion?: string;
  adapter?: string;
  declarations: DbtDeclaration[];
  refusals: DbtRefusal[];
  /**
   * The --exclude value that leaves out one node alone (node-selector.ts nodeSelectors): its name, or its
   * fqn where the name reaches other nodes too. Absent: the name (nodeSelector).
   */
  selectorOf?: (uniqueId: string | null) => string | undefined;
  /** The selected nodes gds governs nothing of (ephemeral and empty models); absent: none. */
  skipped?: DbtSkipped[];
  /**
   * The table names (aliases) of every enabled model, seed and snapshot of the project that dbt builds a
   * relation for (not an ephemeral or empty model), selected or not: a table the project registered under one
   * of them is never gone. Absent: the declarations' and refusals'.
   */
  nodeNames?: string[];
  /**
   * The sources (`schema.table` of the relation dbt builds) of those nodes, selected or not, as a declaration's
   * `source` names them (a part dbt leaves unquoted folded as the adapter folds it): a table of the project
   * holding one of them is never gone, whatever its name and file (renamed by hand, `gds push --replace`, it
   * keeps its project and source). Compared without case. Absent: none but the declarations' (each matched by
   * its source).
   */
  nodeSources?: SourceRef[];
  /**
   * The schemas of those nodes, selected or not, as dbt names them: a table recorded under a derived project id
   * in none of them is another same-named project's. Absent: the declarations' (none: not known, so no
   * table is told another project's by its schema).
   */
  nodeSchemas?: string[];
  /**
   * The DAG of every enabled model, seed and snapshot, selected or not: each node's table name (alias) and the
   * nodes it reads (`depends_on`), for what `gds plan` says is downstream of a change.
   */
  lineage?: DbtLineageNode[];
  /** Tests attached to no selected node (sources, singular tests across models, …), each with its reason. */
  otherTests: NotMappedTest[];
  warnings: string[];
}

export interface DbtSelection {
  /** dbt node-selection syntax: each entry is a space-separated union of comma-intersections. */
  select?: string[];
  exclude?: string[];
  /** A selector of the project's selectors.yml (dbt's `--selector NAME`), instead of select and exclude. */
  selector?: string;
  /** A `--select` that matches nothing is an error (DbtSelectionError), not a warning. */
  strict?: boolean;
  /** dbt's `--indirect-selection` (default eager): which tests of the selected nodes dbt runs. */
  indirectSelection?: IndirectSelection;
}

/** The parsed inputs of a project: `target/manifest.json` and, when there is one, `target/catalog.json`. */
export interface DbtArtifacts {
  manifest: unknown;
  catalog?: unknown;
  /** A seed's CSV header (its column names), by the seed's unique id, when the project folder holds the file. */
  seeds?: Record<string, string[]>;
  /** The manifest `state:` selectors compare with (`--state DIR`: the production manifest). */
  state?: unknown;
  /** The run results and source freshness `result:` and `source_status:` compare with (previous-run.ts). */
  previous?: PreviousRun;
  /**
   * The run_results.json beside the manifest (the last dbt command run in the project), when there is one: a
   * model whose catalog is older than its manifest keeps the catalog's columns unless it says the model was
   * rebuilt since (last-run.ts).
   */
  runResults?: unknown;
  /**
   * The SQL dbt last ran for a model (target/run/<package>/<original_file_path>, which dbt run and build write
   * and dbt compile does not), by unique id: read for the models that run_results.json says the last command
   * only compiled, whose earlier build since the catalog it would otherwise hide (last-run.ts).
   */
  runSql?: Record<string, string>;
  /**
   * Of runSql's models, those whose target/run file is of a dbt run or build that failed, as dbt's file log
   * of the project tells (dbt writes the file before it runs the SQL): not rebuilt since the catalog.
   */
  runFailed?: readonly string[];
  /** That log, as the warning names it: relative to the project folder inside it (logs/dbt.log), else absolute. */
  runLog?: string;
  /**
   * Why that log, which is there, could not be read (permission denied, a directory): said in a warning only
   * where a model's columns hang on it (its target/run file holds a build of its compiled SQL).
   */
  runLogUnread?: string;
  /** The project's `quoting:` (dbt_project.yml), when the project folder holds one. */
  quoting?: QuotePolicy;
  /**
   * The project's `dispatch:` search orders (dbt_project.yml), by macro namespace: the packages dbt's
   * adapter.dispatch searches for a test's implementation (tests.ts). Empty: dbt_project.yml sets none;
   * undefined: none was read (the folder holds no dbt_project.yml gds reads).
   */
  dispatch?: ReadonlyMap<string, readonly string[]>;
  /**
   * The column names of the warehouse objects the plan reads (by lower-cased `schema.table`; `schema`, when
   * set, replaces each relation's, as --schema does): on PostgreSQL, a table the catalog does not list has its
   * tests' columns resolved against them as the adapter resolves a name.
   */
  warehouse?: { columns: ReadonlyMap<string, readonly string[]>; schema?: string };
}
