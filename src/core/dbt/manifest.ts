// dbt's manifest.json read the same way whatever wrote it: schema versions v1 to v12, dbt Fusion's (v20),
// and a hand-made `{nodes: {…}}`. Only the fields gds reads are kept, each from wherever its version puts
// it (`compiled_code` or `compiled_sql`, `config.meta` or `meta`, `attached_node` or the test's `model`
// argument, …). Pure: no I/O.
import { createHash } from 'node:crypto';
import type { DbtResourceType, QuotePolicy } from './types.js';

type Entry = Record<string, unknown>;

/** A file that is not a dbt manifest (or a catalog that is not a dbt catalog). */
export class DbtManifestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DbtManifestError';
  }
}

export interface ManifestColumn {
  name: string;
  dataType?: string;
  description?: string;
  /** `quote: true`: the name is used exactly as written. */
  quote?: boolean;
  /** The column's `meta` (and, dbt 1.10+, `config.meta`). */
  meta: Entry;
  /** Its `constraints` (dbt 1.5+ model contracts). */
  constraints: ManifestConstraint[];
}

/** A model or column constraint of a dbt model contract. */
export interface ManifestConstraint {
  /** `not_null`, `unique`, `primary_key`, `foreign_key`, `check`, `custom`. */
  type: string;
  name?: string;
  expression?: string;
  /** Model-level constraints: the columns it is on. */
  columns: string[];
  /** foreign_key (dbt 1.9+): `ref('x')` or `source('a', 'b')`, and the referenced columns. */
  to?: string;
  toColumns: string[];
}

/** What `state:` selectors compare with the same node of another manifest, as dbt compares it. */
export interface NodeState {
  /** `raw_code` (`raw_sql` before dbt 1.3). */
  rawCode?: string;
  /** `checksum.checksum`: of the file (a seed's body is its checksum). */
  checksum?: string;
  /** `unrendered_config`, or the config when a manifest has none. */
  unrenderedConfig: Entry;
  /** `contract.checksum` (dbt 1.5+), or undefined. */
  contractChecksum?: string;
  /** Each column's name, data type and constraints, and the model's constraints (when no checksum). */
  contractShape: string;
  persistDocs: { relation: boolean; columns: boolean };
  descriptions: { relation: string; columns: Record<string, string> };
  macros: string[];
  /**
   * Exposures, metrics, semantic models and saved queries only: what dbt's same_contents compares, as
   * canonical JSON.
   */
  contents?: string;
  /**
   * Sources only: what else dbt's SourceDefinition.same_contents compares, as canonical JSON: `quoting`,
   * `freshness`, `loaded_at_field` and `external`.
   */
  sourceProperties?: string;
}

export interface ManifestNode {
  uniqueId: string;
  resourceType: string;
  name: string;
  alias: string;
  schema?: string;
  database?: string;
  packageName: string;
  fqn: string[];
  originalFilePath?: string;
  /** The .yml file that documents the node (`patch_path` without its `package://`). */
  patchPath?: string;
  path?: string;
  tags: string[];
  materialized?: string;
  /** `config.group` (dbt 1.5+ groups), for `group:` selectors. */
  group?: string;
  /** A model's `access` (dbt 1.5+: private, protected, public), for `access:` selectors. */
  access?: string;
  /**
   * The node's `config` as written, for `config.KEY:` selectors; only when the reader keeps the configs
   * (ManifestReader's `configs`: a selection that compares a config other than `materialized`).
   */
  config?: Entry;
  enabled: boolean;
  /**
   * A model or snapshot whose `raw_code` (`raw_sql` before dbt 1.3) is blank: dbt's node.empty, which `dbt run`,
   * `build` and `test` never select (a seed is never empty).
   */
  empty?: true;
  description?: string;
  meta: Entry;
  columns: ManifestColumn[];
  compiledSql?: string;
  /** `sql` or `python` (dbt 1.3+); absent in older manifests (SQL). */
  language?: string;
  /** A model contract with `enforced: true` (dbt 1.5+): dbt builds exactly the documented columns. */
  contractEnforced: boolean;
  /** The model's own `constraints` (dbt 1.5+). */
  constraints: ManifestConstraint[];
  state: NodeState;
  dependsOn: string[];
  primaryKey: string[];
  version?: string;
  /** A versioned model's `latest_version` (dbt 1.5+), for `version:` selectors. */
  latestVersion?: string;
  /** Tests only. */
  test?: ManifestTest;
  /** Sources only: the table's identifier. */
  identifier?: string;
  /** Sources only: the source's name (`source('NAME', 'table')`). */
  sourceName?: string;
  /** Seeds only: `config.column_types`. */
  columnTypes: Record<string, string>;
  /**
   * Whether dbt quotes the relation's schema and identifier: a model's, seed's or snapshot's
   * `config.quoting`, a source table's `quoting` (its source's, merged); only what is set.
   */
  quoting?: QuotePolicy;
  /** Seeds only: `config.quote_columns` when set (whether dbt quotes the CSV header's names). */
  quoteColumns?: boolean;
  /** Seeds only: `config.delimiter` when set (the CSV file's delimiter). */
  delimiter?: string;
  /**
   * Snapshots only: the columns dbt adds to the table, by dbt's default name (`dbt_valid_from`, …), named as
   * `config.snapshot_meta_column_names` renames them (dbt 1.9+); `dbt_is_deleted` only with
   * `hard_deletes: new_record`.
   */
  snapshotColumns?: Record<string, string>;
}

/** The state of every node of a manifest no `state:` selector compares (no --state): nothing is read for it. */
const NO_STATE: NodeState = Object.freeze({
  unrenderedConfig: Object.freeze({}),
  contractShape: '',
  persistDocs: Object.freeze({ relation: false, columns: false }),
  descriptions: Object.freeze({ relation: '', columns: Object.freeze({}) }),
  macros: Object.freeze([]) as unknown as string[],
});

/** The boolean `database`, `schema` and `identifier` of a `quoting` entry (anything else is ignored). */
export function readQuoting(value: unknown): QuotePolicy | undefined {
  if (!isEntry(value)) return undefined;
  const policy: QuotePolicy = {};
  for (const part of ['database', 'schema', 'identifier'] as const)
    if (typeof value[part] === 'boolean') policy[part] = value[part];
  return Object.keys(policy).length === 0 ? undefined : policy;
}

/**
 * dbt_project.yml's `dispatch:` as dbt reads it: each macro namespace's search_order, the first entry of a
 * namespace deciding (dbt-core's Project.get_macro_search_order). An entry dbt refuses (no macro_namespace, a
 * search_order that is no list nor a Jinja expression) is left out; empty without one. A first entry whose search_order is empty is
 * no search order: dbt-core's _get_search_packages takes an empty one as none (the default search).
 */
export function readDispatch(value: unknown): ReadonlyMap<string, readonly string[]> {
  const orders = new Map<string, readonly string[]>();
  if (!Array.isArray(value)) return orders;
  const read = new Set<string>();
  for (const entry of value) {
    if (!isEntry(entry)) continue;
    const namespace = entry['macro_namespace'];
    // A search_order written as one Jinja expression ("{{ var('order') }}"), which dbt renders natively into a
    // list, is kept as its one entry: a template gds does not render (tests.ts: readOrder).
    const written = entry['search_order'];
    const order = typeof written === 'string' && /\{\{|\{%/.test(written) ? [written] : written;
    if (typeof namespace !== 'string' || !Array.isArray(order) || read.has(namespace)) continue;
    read.add(namespace);
    if (order.length > 0) orders.set(namespace, order.map(String));
  }
  return orders;
}

export interface ManifestTest {
  /** `not_null`, `unique`, `accepted_values`, `relationships`, `expression_is_true`, …; undefined: a singular test. */
  name?: string;
  /** `dbt_utils`, `dbt_expectations`, …; undefined for dbt's own. */
  namespace?: string;
  kwargs: Entry;
  columnName?: string;
  attachedNode?: string;
  severity: 'error' | 'warn';
  where?: string;
  /** Thresholds other than dbt's default (`!= 0`, `count(*)`): the test does not fail on the first row. */
  thresholds?: string;
}

export interface Manifest {
  schemaVersion?: string;
  dbtVersion?: string;
  /** `metadata.generated_at`: when dbt wrote the manifest (a catalog older than it may list stale columns). */
  generatedAt?: string;
  adapter?: string;
  projectName?: string;
  nodes: Map<string, ManifestNode>;
  sources: Map<string, ManifestNode>;
  /**
   * The other nodes of dbt's graph, which gds governs nothing of but selection walks through: exposures,
   * metrics, semantic models, saved queries and (dbt 1.11+) functions (`@x` reaches an exposure's other
   * parents, `+exposure:x` what it is built on, `resource_type:function+` the models calling a function).
   */
  others: Map<string, ManifestNode>;
  /**
   * selectors.yml as dbt parsed it (manifest.json's `selectors`), by name: each definition (`--selector NAME`)
   * and whether it is the `default: true` one.
   */
  selectors: Map<string, { definition: unknown; default: boolean }>;
  /** Each macro's SQL and the macros it calls, for `state:modified.macros`. */
  macros: Map<string, { sql: string; dependsOn: string[] }>;
  /**
   * The generic tests the macros define (`macro.dbt_utils.test_expression_is_true`), as `dbt_utils.expression_is_true`:
   * what tells a test dbt Fusion wrote without test_metadata (dbt_utils_expression_is_true_orders_…) by its name.
   */
  testMacros: ReadonlySet<string>;
  /**
   * The implementations a test's SQL is dispatched to, as `package.macro` (`dbt.default__test_unique`,
   * `shop.snowflake__test_unique`, `dbt_expectations.duckdb__regexp_instr`, `dbt.get_where_subquery`): what
   * tells a project that overrides a test gds maps, or how a `where:` applies (tests.ts: overridingMacro).
   */
  testImplementations: ReadonlySet<string>;
  /**
   * The cross-database type macros a test's macro calls (`dbt.type_numeric`, dbt_expectations' be_in_set
   * `dbt.type_string` or, before dbt 1.2, `dbt_utils.type_string`), as `namespace.macro`, by the calling macro as
   * `package.macro` (`dbt_utils.default__test_not_null_proportion`); only macros that call one. Each is
   * dispatched in its namespace, so a `dispatch:` search order may leave it no implementation (tests.ts).
   */
  typeMacroCalls: ReadonlyMap<string, readonly string[]>;
  /**
   * dbt_expectations' macros by name (`expression_is_true`, `default__expression_is_true`): the package's macros
   * each calls (`dbt_expectations.truth_expression`) and the type macros (`dbt.type_string`), as
   * `namespace.macro`, and whether it is adapter.dispatch'ed in the dbt_expectations namespace. A test's SQL
   * goes through them (expect_column_values_to_not_be_null: expression_is_true, then truth_expression), so a
   * `dispatch:` search order decides them as it decides a test's own macro (tests.ts: expectationsDispatches).
   */
  expectationsMacros: ReadonlyMap<string, ExpectationsMacro>;
  /**
   * How dbt_expectations' `postgres__regexp_instr` (its macro_sql, which every manifest of a project using the
   * package holds) treats a value its regex does not match: `coalesce` (0.8.4 and later: it counts 0 matches, so
   * expect_column_values_to_match_regex fails a NULL and an unmatched value), `null` (before: array_length of no
   * match is NULL, so the test fails no row: dbt-expectations #249). Undefined: no such macro.
   */
  postgresRegexpInstr?: 'coalesce' | 'null';
  /**
   * What dbt_utils' `default__test_not_null_proportion` (its macro_sql) divides by: `numeric` (dbt_utils 0.x to
   * 1.1: `cast(count(*) as numeric)`), `type_numeric` (later: `as {{ dbt.type_numeric() }}`, whose
   * `dbt.default__type_numeric` renders `api.Column.numeric_type("numeric", 28, 6)`), `other` (another cast, or
   * a `default__type_numeric` of another text). Undefined: no such macro. The warehouse's rounding of the
   * proportion follows from it (tests.ts: proportionRounding).
   */
  notNullProportionCast?: 'numeric' | 'type_numeric' | 'other';
  /**
   * Whether dbt_expectations' `test_expect_compound_columns_to_be_unique` (its macro_sql) filters the rows its
   * ignore_row_if names: `applied` (its query uses `row_condition_ext`), `ignored` (a release of the dbt 1.0 era sets `row_condition_ext`
   * and never uses it, so its `group by … having count(*) > 1` groups NULL as a value, whatever ignore_row_if
   * says; expect_column_values_to_be_unique, which calls it, too). Undefined: no such macro, or one of another text.
   */
  compoundIgnoreRowIf?: 'applied' | 'ignored';
  /** The reader kept no node's `config` (ManifestNode.config): `config.KEY:` cannot be compared. */
  withoutConfigs?: true;
  /**
   * The schemas of the disabled models, seeds and snapshots dbt 1.0+ lists under the manifest's `disabled`
   * (never in `nodes`): the project's schemas all the same (a table of one is this project's, gone).
   */
  disabledSchemas?: ReadonlySet<string>;
}

export const DECLARED_TYPES: ReadonlySet<string> = new Set<DbtResourceType>(['model', 'seed', 'snapshot']);

/**
 * The members of a manifest.json whose entries are the graph's other nodes (Manifest.others); dbt 1.11's
 * user-defined functions too: a model calling one (`{{ function('f') }}`) lists it among its parents.
 */
const OTHER_SECTIONS = ['exposures', 'metrics', 'semantic_models', 'saved_queries', 'functions'] as const;

/** The top-level members of a manifest.json gds reads: `each` member by member, `whole` at once. */
export const MANIFEST_MEMBERS = {
  each: ['nodes', 'sources', 'macros', 'unit_tests', 'disabled', ...OTHER_SECTIONS],
  whole: ['metadata', 'selectors'],
  // Before dbt 1.0, `disabled` is a list of nodes.
  elements: ['disabled'],
  // A test that prints numbers into its SQL as values (tests.ts: accepted_values, expect_column_values_to_(not_)
  // be_in_set) keeps them as Python wrote them, 1.0 not 1.
  numberArray: (name: string, key: string | undefined, value: unknown) =>
    name === 'nodes' && key?.startsWith('test.') === true ? numberValues(value) : undefined,
} as const;

/** Where a test's kwargs hold its values: `values`, else (absent or null) dbt_expectations' `value_set`. */
export function valuesKey(kwargs: Entry): 'values' | 'value_set' {
  return kwargs['values'] !== undefined && kwargs['values'] !== null ? 'values' : 'value_set';
}

function numberValues(raw: unknown): { array: readonly unknown[]; key: string } | undefined {
  if (!isEntry(raw) || !isEntry(raw['test_metadata'])) return undefined;
  const kwargs = raw['test_metadata']['kwargs'];
  if (!isEntry(kwargs)) return undefined;
  const key = valuesKey(kwargs);
  const values = kwargs[key];
  return Array.isArray(values) && values.some((v) => typeof v === 'number')
    ? { array: values, key }
    : undefined;
}

/** What a manifest file was besides its members: whether it was an object, and its `nodes` one. */
export interface ManifestOutline {
  object: boolean;
  nodes: boolean;
}

/**
 * Reads a manifest member by member (a 5,000-model manifest is tens of MB: each node is read into what gds
 * keeps as it comes, and the rest of it dropped), then `manifest()` checks what it was and gives it.
 */
export class ManifestReader {
  private metadata: Entry = {};
  /** Whether `state:` selectors will compare this manifest with another (`--state`): each node's NodeState and the macros are kept only then. */
  private readonly withState: boolean;
  /** Whether each node keeps its `config` (ManifestNode.config), for `config.KEY:` selectors. */
  private readonly withConfigs: boolean;

  constructor(options: { state?: boolean; configs?: boolean } = {}) {
    this.withState = options.state ?? true;
    this.withConfigs = options.configs ?? true;
  }

  private readonly nodes = new Map<string, ManifestNode>();
  private readonly sources = new Map<string, ManifestNode>();
  private readonly others = new Map<string, ManifestNode>();
  private readonly selectors = new Map<string, { definition: unknown; default: boolean }>();
  private readonly macros = new Map<string, { sql: string; dependsOn: string[] }>();
  private readonly testMacros = new Set<string>();
  private readonly testImplementations = new Set<string>();
  private readonly typeMacroCalls = new Map<string, string[]>();
  private readonly expectationsMacros = new Map<string, ExpectationsMacro>();
  private readonly disabledSchemas = new Set<string>();
  private postgresRegexpInstr: 'coalesce' | 'null' | undefined;
  private notNullProportionCast: 'numeric' | 'type_numeric' | 'other' | undefined;
  private compoundIgnoreRowIf: 'applied' | 'ignored' | undefined;
  /** Whether dbt's `default__type_numeric` renders numeric(28,6) (undefined: the manifest holds none). */
  private defaultTypeNumeric: boolean | undefined;
  /** One string for each name the nodes repeat (package, schema, paths, ids in depends_on, …). */
  private readonly names = new Map<string, string>();
  private readonly same = (name: string): string => {
    const known = this.names.get(name);
    if (known !== undefined) return known;
    this.names.set(name, name);
    return name;
  };

  /** A member of `nodes`, `sources`, `macros`, `unit_tests` or OTHER_SECTIONS (by `key`), or `metadata` and `selectors` whole (no key). */
  member(section: string, key: string | undefined, raw: unknown): void {
    if (section === 'metadata') {
      this.metadata = isEntry(raw) ? raw : {};
      return;
    }
    if (section === 'selectors') {
      if (isEntry(raw))
        for (const [name, selector] of Object.entries(raw))
          if (isEntry(selector) && 'definition' in selector)
            this.selectors.set(text(selector['name']) ?? name, {
              definition: selector['definition'],
              default: selector['default'] === true,
            });
      return;
    }
    // Disabled nodes (dbt 1.0+: each id with a list of the node's versions; before, each node of a list): of
    // them only the schema is kept.
    if (section === 'disabled') {
      for (const node of Array.isArray(raw) ? raw : [raw])
        if (isEntry(node) && DECLARED_TYPES.has(text(node['resource_type']) ?? '')) {
          const schema = text(node['schema']);
          if (schema !== undefined) this.disabledSchemas.add(this.same(schema));
        }
      return;
    }
    if (key === undefined || !isEntry(raw)) return;
    // dbt 1.8+'s unit tests: kept as the tests are, so that each is listed with why it is no rule.
    if (section === 'nodes' || section === 'unit_tests') {
      const node = readNode(key, raw, this.withState, this.same, this.withConfigs);
      this.nodes.set(node.uniqueId, node);
    } else if (section === 'sources') {
      const node = readNode(key, raw, this.withState, this.same, this.withConfigs);
      node.resourceType = 'source';
      this.sources.set(node.uniqueId, node);
    } else if ((OTHER_SECTIONS as readonly string[]).includes(section)) {
      const node = readNode(key, raw, this.withState, this.same, this.withConfigs);
      this.others.set(node.uniqueId, node);
    } else if (section === 'macros') {
      const id = text(raw['unique_id']) ?? key;
      const generic = /^macro\.([^.]+)\.test_(.+)$/.exec(id);
      if (generic !== null) this.testMacros.add(this.same(`${generic[1] ?? ''}.${generic[2] ?? ''}`));
      const implementation =
        /^macro\.([^.]+)\.((?:[a-z0-9_]+__)?(?:test_.+|regexp_instr|get_where_subquery|type_[a-z0-9_]+)|[a-z0-9_]+__[a-z0-9_]+)$/.exec(
          id,
        );
      if (implementation !== null)
        this.testImplementations.add(`${implementation[1] ?? ''}.${implementation[2] ?? ''}`);
      if (implementation?.[2]?.includes('test_') === true) {
        const calls = typeCalls(text(raw['macro_sql']) ?? '');
        if (calls.length > 0)
          this.typeMacroCalls.set(`${implementation[1] ?? ''}.${implementation[2]}`, calls);
      }
      const expectation = /^macro\.dbt_expectations\.([A-Za-z0-9_]+)$/.exec(id)?.[1];
      if (expectation !== undefined)
        this.expectationsMacros.set(
          expectation,
          expectationsMacro(expectation, text(raw['macro_sql']) ?? ''),
        );
      if (id === 'macro.dbt_expectations.postgres__regexp_instr')
        this.postgresRegexpInstr = /\bcoalesce\s*\(/i.test(text(raw['macro_sql']) ?? '')
          ? 'coalesce'
          : 'null';
      if (id === 'macro.dbt_utils.default__test_not_null_proportion')
        this.notNullProportionCast = proportionCast(text(raw['macro_sql']) ?? '');
      if (id === 'macro.dbt_expectations.test_expect_compound_columns_to_be_unique')
        this.compoundIgnoreRowIf = ignoreRowIf(text(raw['macro_sql']) ?? '');
      if (id === 'macro.dbt.default__type_numeric')
        this.defaultTypeNumeric = /numeric_type\(\s*["']numeric["']\s*,\s*28\s*,\s*6\s*\)/.test(
          text(raw['macro_sql']) ?? '',
        );
      if (!this.withState) return;
      const dependsOn = isEntry(raw['depends_on']) ? strings(raw['depends_on']['macros']) : [];
      this.macros.set(id, { sql: text(raw['macro_sql']) ?? '', dependsOn });
    }
  }

  /** The manifest read; a DbtManifestError when the file was not one. */
  manifest(outline: ManifestOutline): Manifest {
    if (!outline.object)
      throw new DbtManifestError('the manifest is not a JSON object: is it a dbt manifest.json?');
    const metadata = this.metadata;
    const schemaVersion = text(metadata['dbt_schema_version']);
    if (schemaVersion !== undefined && !/\/manifest\/v\d+\.json$/.test(schemaVersion)) {
      const kind = /\/dbt\/([a-z_-]+)\//.exec(schemaVersion)?.[1] ?? 'artifact';
      throw new DbtManifestError(
        `this is a dbt ${kind} (${schemaVersion}), not a manifest: gds reads target/manifest.json`,
      );
    }
    if (!outline.nodes)
      throw new DbtManifestError(
        'the file has no `nodes` object: it is not a dbt manifest.json (dbt writes one in target/ on every compile, run or build)',
      );
    const adapter = text(metadata['adapter_type']);
    const projectName =
      text(metadata['project_name']) ?? guessProject(this.nodes, text(metadata['project_id']));
    const dbtVersion = text(metadata['dbt_version']);
    const generatedAt = text(metadata['generated_at']);
    return {
      ...(schemaVersion === undefined ? {} : { schemaVersion }),
      ...(dbtVersion === undefined ? {} : { dbtVersion }),
      ...(generatedAt === undefined ? {} : { generatedAt }),
      ...(adapter === undefined ? {} : { adapter: adapter.toLowerCase() }),
      ...(projectName === undefined ? {} : { projectName }),
      nodes: this.nodes,
      sources: this.sources,
      others: this.others,
      selectors: this.selectors,
      macros: this.macros,
      testMacros: this.testMacros,
      testImplementations: this.testImplementations,
      typeMacroCalls: this.typeMacroCalls,
      expectationsMacros: this.expectationsMacros,
      ...(this.postgresRegexpInstr === undefined ? {} : { postgresRegexpInstr: this.postgresRegexpInstr }),
      ...(this.notNullProportionCast === undefined
        ? {}
        : {
            notNullProportionCast:
              this.notNullProportionCast === 'type_numeric' && this.defaultTypeNumeric !== true
                ? 'other'
                : this.notNullProportionCast,
          }),
      ...(this.compoundIgnoreRowIf === undefined ? {} : { compoundIgnoreRowIf: this.compoundIgnoreRowIf }),
      ...(this.withConfigs ? {} : { withoutConfigs: true as const }),
      ...(this.disabledSchemas.size === 0 ? {} : { disabledSchemas: this.disabledSchemas }),
    };
  }
}

/** A literal condition of `{% if %}` or `{% elif %}`: true or false as Jinja reads it; undefined for any other. */
function literalCondition(condition: string): boolean | undefined {
  const literal = /^\s*(true|false|none|\d+)\s*$/i.exec(condition)?.[1]?.toLowerCase();
  if (literal === undefined) return undefined;
  return literal === 'true' || (/^\d+$/.test(literal) && Number(literal) !== 0);
}

/**
 * What of a macro's Jinja template dbt renders: its `{# … #}` comments left out, and each branch of an
 * `{% if %}` chain that a literal condition (`false`, `none`, `0`; an earlier `true`) never lets run. A branch
 * of any other condition may run, and is kept. A `{% for %}` loop's own `{% else %}` (run when it loops over
 * nothing) may run too, and is no branch of the if around the loop.
 */
function renderedTemplate(template: string): string {
  const kept: string[] = [];
  /**
   * Each open if or for: whether its part now is skipped, whether an earlier branch surely ran (an if's), and
   * whether it is a for loop.
   */
  const open: Array<{ skipped: boolean; outer: boolean; ran: boolean; loop: boolean }> = [];
  const skipping = () => open.at(-1)?.skipped === true;
  let at = 0;
  const tag = /\{#[\s\S]*?(?:#\}|$)|\{%[-+]?\s*(if|elif|else|endif|for|endfor)\b([\s\S]*?)[-+]?%\}/g;
  for (const match of template.matchAll(tag)) {
    if (!skipping()) kept.push(template.slice(at, match.index));
    at = match.index + match[0].length;
    const [text, keyword, condition = ''] = match;
    if (keyword === undefined) continue;
    const frame = open.at(-1);
    const opens = keyword === 'if' || keyword === 'for';
    // The tag itself (its condition is evaluated) where the if around it runs.
    const outer = opens ? skipping() : (frame?.outer ?? false);
    if (!outer) kept.push(text);
    if (keyword === 'if') {
      const value = literalCondition(condition);
      open.push({ skipped: outer || value === false, outer, ran: value === true, loop: false });
    } else if (keyword === 'for') open.push({ skipped: outer, outer, ran: false, loop: true });
    else if (keyword === 'endif' || keyword === 'endfor') open.pop();
    else if (frame?.loop === true) frame.skipped = frame.outer;
    else if (frame !== undefined) {
      const value = keyword === 'else' ? true : literalCondition(condition);
      frame.skipped = frame.outer || frame.ran || value === false;
      frame.ran ||= value === true;
    }
  }
  if (!skipping()) kept.push(template.slice(at));
  return kept.join('');
}

/** The Jinja code of a template that dbt runs: its `{{ … }}` and `{% … %}` (renderedTemplate's), one a line. */
function jinjaCode(template: string): string {
  return [...renderedTemplate(template).matchAll(/\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}/g)]
    .map((m) => m[0])
    .join('\n');
}

/**
 * The cross-database type macros (`dbt.type_numeric()`, `dbt_utils.type_string()`) a macro's SQL calls, once
 * each: in the Jinja dbt renders (a call in a Jinja comment, a branch never taken or SQL text is none; one in
 * `{{ … }}` inside an SQL comment is still made).
 */
function typeCalls(sql: string): string[] {
  const calls = [...jinjaCode(sql).matchAll(/\b(dbt|dbt_utils)\.(type_[a-z0-9_]+)\s*\(/g)].map(
    (m) => `${m[1]}.${m[2]}`,
  );
  return [...new Set(calls)];
}

/** A dbt_expectations macro as Manifest.expectationsMacros holds it. */
export interface ExpectationsMacro {
  calls: readonly string[];
  dispatched: boolean;
  /**
   * Dispatched as dbt_expectations did for dbt 0.19 and 0.20, with the `packages` argument
   * (`packages = dbt_expectations._get_namespaces()`): dbt searches var('dbt_expectations_dispatch_list', [])
   * then dbt_expectations, neither the root project nor a `dispatch:` search order.
   */
  byPackages?: true;
}

/** What dbt_expectations' macro `name` calls of its package and of the type macros, and whether it dispatches. */
function expectationsMacro(name: string, sql: string): ExpectationsMacro {
  const code = jinjaCode(sql);
  const own = [...code.matchAll(/\bdbt_expectations\.([A-Za-z0-9_]+)\s*\(/g)].map(
    (m) => `dbt_expectations.${m[1]}`,
  );
  const dispatch = new RegExp(
    `\\badapter\\.dispatch\\(\\s*['"]${name}['"]\\s*,\\s*(?:macro_namespace\\s*=\\s*)?['"]dbt_expectations['"]`,
  );
  const byPackages = new RegExp(
    `\\badapter\\.dispatch\\(\\s*['"]${name}['"]\\s*,\\s*packages\\s*=\\s*dbt_expectations\\._get_namespaces\\(\\s*\\)`,
  ).test(code);
  return {
    calls: [...new Set(own), ...typeCalls(sql)],
    dispatched: byPackages || dispatch.test(code),
    ...(byPackages ? { byPackages: true as const } : {}),
  };
}

/** Whether expect_compound_columns_to_be_unique's SQL uses the row_condition_ext it sets (Manifest.compoundIgnoreRowIf). */
function ignoreRowIf(sql: string): 'applied' | 'ignored' | undefined {
  const uses = sql.match(/\brow_condition_ext\b/g)?.length ?? 0;
  return uses === 0 ? undefined : uses === 1 ? 'ignored' : 'applied';
}

/** What dbt_utils' not_null_proportion divides its count by, read from its macro's SQL (Manifest.notNullProportionCast). */
function proportionCast(sql: string): 'numeric' | 'type_numeric' | 'other' {
  // What renders, its SQL comments aside: a cast left in a comment is none.
  const query = renderedTemplate(sql).replace(/\/\*[\s\S]*?(?:\*\/|$)|--[^\n]*/g, ' ');
  const cast = /\/\s*cast\s*\(\s*count\s*\(\s*\*\s*\)\s+as\s+([^\n]*?)\s*\)\s+as\s+not_null_proportion/i.exec(
    query,
  )?.[1];
  if (cast === undefined) return 'other';
  if (/^numeric$/i.test(cast)) return 'numeric';
  return /^\{\{-?\s*dbt\.type_numeric\(\s*\)\s*-?\}\}$/.test(cast) ? 'type_numeric' : 'other';
}

/** Reads a parsed manifest.json (or gives back one already read); a DbtManifestError when it is not one. */
export function readManifest(value: unknown): Manifest {
  // Already read (by ManifestReader): its nodes are a Map, which no parsed JSON holds.
  if (isEntry(value) && value['nodes'] instanceof Map) return value as unknown as Manifest;
  const reader = new ManifestReader();
  if (isEntry(value)) {
    for (const section of [...MANIFEST_MEMBERS.whole, ...MANIFEST_MEMBERS.each]) {
      const members = value[section];
      if ((MANIFEST_MEMBERS.whole as readonly string[]).includes(section))
        reader.member(section, undefined, members);
      else if (Array.isArray(members) && (MANIFEST_MEMBERS.elements as readonly string[]).includes(section))
        for (const raw of members as unknown[]) reader.member(section, undefined, raw);
      else if (isEntry(members))
        for (const [key, raw] of Object.entries(members)) reader.member(section, key, raw);
    }
  }
  return reader.manifest({ object: isEntry(value), nodes: isEntry(value) && isEntry(value['nodes']) });
}

/**
 * The root project of a manifest without `project_name` (dbt before 1.6): the package whose md5 is
 * `metadata.project_id` (dbt's hash of the project's name), else the package of its first model, seed or
 * snapshot (a package's nodes may come first).
 */
function guessProject(nodes: Map<string, ManifestNode>, projectId: string | undefined): string | undefined {
  const packages = new Set(
    [...nodes.values()].filter((n) => DECLARED_TYPES.has(n.resourceType)).map((n) => n.packageName),
  );
  const hashed = [...packages].find(
    (name) => projectId !== undefined && createHash('md5').update(name).digest('hex') === projectId,
  );
  return hashed ?? packages.values().next().value;
}

// Each node is read with as little garbage as the fields allow: a manifest of 2,000 models is some 13,000
// nodes, and whatever is allocated per node the young generation collects again and again (no spread of an
// object into another, no array made to be filtered or mapped, no pair per entry). With gate1-text.ts's
// loops, reading and declaring the generated 2,000-model project allocates 190 MB instead of 235, in 117
// scavenges instead of 135 (docs/bench.md, "Plans at once, tenth pass"). No for-of over an array, a Map or
// Object.keys in a loop run a node, a test or a column, here or in the declaration (tests.ts, project.ts,
// select.ts, gate1-text.ts, services/dbt-project.ts): TurboFan, which would elide each iterator's result object,
// is off while a project is read, and a for-of made one an item; indexed loops and forEach read and declare the
// 2,000-model project with 27 MB less garbage (199 -> 172 MB), a no-change plan with 161 -> 144 scavenges and
// about 20 ms less CPU (docs/bench.md, "Plans at once, eighteenth pass").

function readNode(
  key: string,
  raw: Entry,
  withState = true,
  same: (name: string) => string = (name) => name,
  withConfig = true,
): ManifestNode {
  const config = entryOr(raw['config']);
  const uniqueId = same(text(raw['unique_id']) ?? key);
  const writtenType = text(raw['resource_type']);
  const writtenName = text(raw['name']);
  const writtenPackage = text(raw['package_name']);
  // The unique id's parts only stand in for what the node does not write.
  const parts =
    writtenType === undefined || writtenName === undefined || writtenPackage === undefined
      ? uniqueId.split('.')
      : NOTHING;
  const resourceType = same((writtenType ?? parts[0] ?? '').toLowerCase());
  const name = writtenName ?? parts.at(-1) ?? uniqueId;
  const packageName = same(writtenPackage ?? parts[1] ?? '');
  if (resourceType === 'test' || resourceType === 'unit_test')
    return readTestNode(uniqueId, resourceType, name, packageName, raw, config, withState, same, withConfig);
  const alias = withoutTemporarySuffix(text(raw['alias']) ?? text(config['alias']) ?? name);
  const fqn = names(raw['fqn'], same);
  const tags = tagsOf(raw['tags'], config['tags'], same);
  const meta = merged(raw['meta'], config['meta']);
  const dependsOn = isEntry(raw['depends_on']) ? names(raw['depends_on']['nodes'], same) : [];
  const columns = readColumns(raw['columns']);
  const constraints = readConstraints(raw['constraints']);
  const state: NodeState = !withState
    ? NO_STATE
    : readState(raw, config, columns, constraints, resourceType === 'source');
  const compared = withState ? OTHER_CONTENTS[resourceType] : undefined;
  if (compared !== undefined)
    state.contents = canonicalJson([
      ...compared.map((key) => propertyAt(raw, key)),
      ...(LINEAGE_NOT_COMPARED.has(resourceType) ? [] : [[...dependsOn].sort()]),
    ]);
  const node: ManifestNode = {
    uniqueId,
    resourceType,
    name,
    alias,
    packageName,
    fqn: fqn.length > 0 ? fqn : [packageName, name],
    tags,
    enabled: config['enabled'] !== false && raw['enabled'] !== false,
    contractEnforced: enforced(config['contract']) || enforced(raw['contract']),
    meta,
    columns,
    constraints,
    state,
    dependsOn,
    primaryKey: strings(raw['primary_key']),
    columnTypes: textEntries(config['column_types']),
  };
  // The optional fields, in this order (a field not written, or empty, is left out).
  const schema = nonEmpty(raw['schema']);
  if (schema !== undefined) node.schema = same(schema);
  const database = nonEmpty(raw['database']);
  if (database !== undefined) node.database = same(database);
  const originalFilePath = filePath(raw['original_file_path']);
  if (originalFilePath !== undefined) node.originalFilePath = same(originalFilePath);
  const patchPath = filePath(raw['patch_path']);
  if (patchPath !== undefined) node.patchPath = same(patchPath.replace(/^[^/]*:\/\//, ''));
  const path = filePath(raw['path']);
  if (path !== undefined) node.path = same(path);
  const materialized = nonEmpty(config['materialized']);
  if (materialized !== undefined) node.materialized = same(materialized);
  const group = nonEmpty(config['group']);
  if (group !== undefined) node.group = same(group);
  const access = resourceType === 'model' ? nonEmpty(raw['access']) : undefined;
  if (access !== undefined) node.access = same(access);
  if (withConfig) node.config = config;
  if (resourceType !== 'seed' && isBlank(raw['raw_code'] ?? raw['raw_sql'])) node.empty = true;
  const description = nonEmpty(raw['description']);
  if (description !== undefined) node.description = description;
  const compiledSql = nonEmpty(raw['compiled_code'] ?? raw['compiled_sql']);
  if (compiledSql !== undefined) node.compiledSql = compiledSql;
  const identifier = nonEmpty(raw['identifier']);
  if (identifier !== undefined) node.identifier = same(identifier);
  const sourceName = nonEmpty(raw['source_name']);
  if (sourceName !== undefined) node.sourceName = same(sourceName);
  const language = nonEmpty(raw['language']);
  if (language !== undefined) node.language = same(language);
  const version = raw['version'];
  if (typeof version === 'string' || typeof version === 'number') node.version = String(version);
  const latestVersion = raw['latest_version'];
  if (typeof latestVersion === 'string' || typeof latestVersion === 'number')
    node.latestVersion = String(latestVersion);
  if (resourceType === 'snapshot') node.snapshotColumns = snapshotColumnsOf(config);
  const quoting = readQuoting(resourceType === 'source' ? raw['quoting'] : config['quoting']);
  if (quoting !== undefined) node.quoting = quoting;
  if (resourceType === 'seed' && typeof config['quote_columns'] === 'boolean')
    node.quoteColumns = config['quote_columns'];
  if (resourceType === 'seed' && typeof config['delimiter'] === 'string')
    node.delimiter = config['delimiter'];
  return node;
}

/**
 * What dbt's same_contents compares of an exposure (Exposure) and of a metric (Metric), besides the fqn and
 * the parents (depends_on.nodes, as a set): its properties as written.
 */
const OTHER_CONTENTS: Readonly<Record<string, readonly string[]>> = {
  exposure: ['type', 'owner', 'maturity', 'url', 'description', 'label', 'unrendered_config'],
  metric: ['type', 'type_params', 'filter', 'metadata', 'description', 'label', 'unrendered_config', 'group'],
  // dbt 1.8's SemanticModel.same_contents (not node_relation: dbt-core #9561) and SavedQuery.same_contents
  // (of query_params its metrics, group_by and where); neither compares the parents nor the fqn.
  semantic_model: [
    'model',
    'description',
    'defaults',
    'entities',
    'dimensions',
    'measures',
    'config',
    'primary_entity',
    'group',
  ],
  saved_query: [
    'query_params.metrics',
    'query_params.group_by',
    'query_params.where',
    'description',
    'label',
    'config',
    'group',
  ],
};

/** The kinds whose same_contents compares neither the parents nor the fqn (state.ts). */
export const LINEAGE_NOT_COMPARED: ReadonlySet<string> = new Set(['semantic_model', 'saved_query']);

/** raw's property at a dotted key (`query_params.where`), or null. */
function propertyAt(raw: Entry, key: string): unknown {
  let value: unknown = raw;
  for (const part of key.split('.')) value = isEntry(value) ? value[part] : undefined;
  return value ?? null;
}

/** dbt's `not raw_code.strip()`: a text of whitespace only (or none at all). */
const isBlank = (value: unknown): boolean => typeof value === 'string' && !/\S/.test(value);

/** What `state:` selectors compare (read only with --state). */
function readState(
  raw: Entry,
  config: Entry,
  columns: ManifestColumn[],
  constraints: ManifestConstraint[],
  source: boolean,
): NodeState {
  const contract = entryOr(raw['contract']);
  const persistDocs = entryOr(config['persist_docs']);
  const checksum = isEntry(raw['checksum']) ? text(raw['checksum']['checksum']) : undefined;
  const contractChecksum = text(contract['checksum']);
  const rawCode = text(raw['raw_code']) ?? text(raw['raw_sql']);
  return {
    ...(rawCode === undefined ? {} : { rawCode }),
    ...(checksum === undefined ? {} : { checksum }),
    unrenderedConfig: isEntry(raw['unrendered_config']) ? raw['unrendered_config'] : config,
    ...(contractChecksum === undefined ? {} : { contractChecksum }),
    contractShape: JSON.stringify([
      columns.map((c) => [c.name, c.dataType ?? null, c.constraints]),
      constraints,
    ]),
    persistDocs: { relation: persistDocs['relation'] === true, columns: persistDocs['columns'] === true },
    descriptions: {
      relation: text(raw['description']) ?? '',
      columns: Object.fromEntries(columns.map((c) => [c.name, c.description ?? ''])),
    },
    macros: isEntry(raw['depends_on']) ? strings(raw['depends_on']['macros']) : [],
    ...(source
      ? {
          sourceProperties: canonicalJson(
            ['quoting', 'freshness', 'loaded_at_field', 'external'].map((key) => raw[key] ?? null),
          ),
        }
      : {}),
  };
}

/** JSON with object keys sorted, so two values compare by content. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

const NOTHING = Object.freeze([]) as unknown as never[];
const EMPTY: Entry = Object.freeze({});

/**
 * A test node with only what placing and mapping a test read (a project has several tests a model, each
 * with its compiled SQL, paths and description, none of which gds uses), and with --state what `state:`
 * compares.
 */
function readTestNode(
  uniqueId: string,
  resourceType: string,
  name: string,
  packageName: string,
  raw: Entry,
  config: Entry,
  withState: boolean,
  same: (name: string) => string,
  withConfig: boolean,
): ManifestNode {
  const node: ManifestNode = {
    uniqueId,
    resourceType,
    name,
    alias: name,
    packageName,
    // Its fqn, tags and file: what dbt's selector methods match a test by (a test is excluded by them).
    fqn: testFqn(raw['fqn'], name, same),
    tags: testTags(raw['tags'], config['tags'], same),
    enabled: config['enabled'] !== false && raw['enabled'] !== false,
    contractEnforced: false,
    meta: EMPTY,
    columns: NOTHING,
    constraints: NOTHING,
    state: withState ? readState(raw, config, NOTHING, NOTHING, false) : NO_STATE,
    dependsOn: isEntry(raw['depends_on']) ? names(raw['depends_on']['nodes'], same) : [],
    primaryKey: NOTHING,
    columnTypes: EMPTY as Record<string, string>,
    test: readTest(raw, config),
    ...(filePath(raw['original_file_path']) === undefined
      ? {}
      : { originalFilePath: same(filePath(raw['original_file_path']) as string) }),
  };
  // What `group:` selects a test by: dbt's group method reads config.group, which the test's `group` beside
  // it does not set (its materialized, always `test`, is not kept: select.ts knows it).
  const group = nonEmpty(config['group']);
  if (group !== undefined) node.group = same(group);
  if (withConfig) node.config = config;
  return node;
}

const SNAPSHOT_META_COLUMNS = ['dbt_scd_id', 'dbt_updated_at', 'dbt_valid_from', 'dbt_valid_to'];

function snapshotColumnsOf(config: Entry): Record<string, string> {
  const renamed = isEntry(config['snapshot_meta_column_names']) ? config['snapshot_meta_column_names'] : {};
  const deletes = text(config['hard_deletes'])?.toLowerCase() === 'new_record' ? ['dbt_is_deleted'] : [];
  return Object.fromEntries(
    [...SNAPSHOT_META_COLUMNS, ...deletes].map((standard) => {
      const name = text(renamed[standard])?.trim();
      return [standard, name === undefined || name === '' ? standard : name];
    }),
  );
}

/** A relation name dbt builds under before swapping it in: never the table's name. */
export function withoutTemporarySuffix(name: string): string {
  return name.replace(/__dbt_(?:tmp|backup)(?:_[0-9a-f]+)?$/i, '');
}

function readColumns(value: unknown): ManifestColumn[] {
  if (!isEntry(value)) return [];
  const columns: ManifestColumn[] = [];
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const raw = value[key];
    const entry = isEntry(raw) ? raw : EMPTY;
    const config = entryOr(entry['config']);
    const column: ManifestColumn = {
      name: text(entry['name']) ?? key,
      meta: merged(entry['meta'], config['meta']),
      constraints: readConstraints(entry['constraints']),
    };
    const dataType = text(entry['data_type'])?.trim();
    if (dataType !== undefined && dataType !== '') column.dataType = dataType;
    const description = text(entry['description']);
    if (description !== undefined && NOT_BLANK.test(description)) column.description = description;
    if (entry['quote'] === true) column.quote = true;
    columns.push(column);
  }
  return columns;
}

/** Something besides white space (what `trim()` leaves: `\s` is the same characters). */
const NOT_BLANK = /\S/;

function readConstraints(value: unknown): ManifestConstraint[] {
  if (!Array.isArray(value)) return [];
  const constraints: ManifestConstraint[] = [];
  const list = value as unknown[];
  for (let i = 0; i < list.length; i++) {
    const raw = list[i];
    if (!isEntry(raw)) continue;
    const constraint: ManifestConstraint = {
      type: (text(raw['type']) ?? '').toLowerCase(),
      columns: strings(raw['columns']),
      toColumns: strings(raw['to_columns']),
    };
    for (const key of CONSTRAINT_TEXTS) {
      const value = text(raw[key])?.trim();
      if (value !== undefined && value !== '') constraint[key] = value;
    }
    constraints.push(constraint);
  }
  return constraints;
}

const CONSTRAINT_TEXTS = ['name', 'expression', 'to'] as const;

/**
 * A threshold condition, without its white space, that holds for any count of failing rows but 0 (dbt's
 * default `!= 0`): the test fails, or warns, on the first failing row.
 */
const ON_FIRST_ROW: ReadonlySet<string> = new Set(['!=0', '<>0', '>0', '>=1']);

function readTest(raw: Entry, config: Entry): ManifestTest {
  const metadata = isEntry(raw['test_metadata']) ? raw['test_metadata'] : undefined;
  const kwargs = metadata && isEntry(metadata['kwargs']) ? metadata['kwargs'] : {};
  let name = metadata ? text(metadata['name']) : undefined;
  let namespace = metadata ? text(metadata['namespace']) : undefined;
  if (name?.includes('.')) {
    const dot = name.lastIndexOf('.');
    namespace ??= name.slice(0, dot);
    name = name.slice(dot + 1);
  }
  if (namespace === 'dbt') namespace = undefined;
  const severity = text(config['severity'])?.toLowerCase() === 'warn' ? 'warn' : 'error';
  const where = text(config['where']);
  const columnName = text(raw['column_name']) ?? text(kwargs['column_name']);
  const attachedNode = text(raw['attached_node']);
  // The thresholds a test writes other than dbt's defaults (every test node writes the defaults). dbt fails a
  // test of severity error on its error_if alone (warn_if then only says when to warn instead of pass), and
  // warns on a test of severity warn by its warn_if alone.
  let thresholds: string | undefined;
  const failCalc = text(config['fail_calc']);
  if (failCalc !== undefined && failCalc.replace(/\s+/g, '').toLowerCase() !== 'count(*)')
    thresholds = `fail_calc ${failCalc}`;
  const conditionKey = severity === 'error' ? 'error_if' : 'warn_if';
  const condition = text(config[conditionKey]);
  if (condition !== undefined && !ON_FIRST_ROW.has(condition.replace(/\s+/g, '')))
    thresholds = `${thresholds === undefined ? '' : `${thresholds}, `}${conditionKey} ${condition}`;
  // dbt counts the failing rows of `(… limit N)`: with a limit of 0 it counts none, and the test always passes.
  const limit = config['limit'];
  if (typeof limit === 'number' && limit <= 0)
    thresholds = `${thresholds === undefined ? '' : `${thresholds}, `}limit ${limit}`;
  const test = {} as ManifestTest;
  if (name !== undefined) test.name = name;
  if (namespace !== undefined) test.namespace = namespace;
  test.kwargs = kwargs;
  if (columnName !== undefined) test.columnName = columnName;
  if (attachedNode !== undefined) test.attachedNode = attachedNode;
  test.severity = severity;
  if (where !== undefined && NOT_BLANK.test(where)) test.where = where.trim();
  if (thresholds !== undefined) test.thresholds = thresholds;
  return test;
}

/** `value` when it is an entry, else an empty one (not to be written to). */
function entryOr(value: unknown): Entry {
  return isEntry(value) ? value : EMPTY;
}

/** `{...first, ...second}` of two entries (either may be missing); one written alone is taken as it is. */
function merged(first: unknown, second: unknown): Entry {
  const a = isEntry(first);
  const b = isEntry(second);
  if (a && b) return { ...first, ...second };
  if (a) return first;
  if (b) return second;
  return {};
}

function enforced(contract: unknown): boolean {
  return isEntry(contract) && contract['enforced'] === true;
}

/** A text that is not empty, else undefined. */
function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** A path, with a Windows project's backslashes as slashes; undefined when empty. */
function filePath(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  return value.includes('\\') ? value.replaceAll('\\', '/') : value;
}

// The arrays a node keeps are made at their length (an array grown by push keeps room for 16 more: some
// 100,000 arrays at 5,000 models), from the parsed array when it holds only texts (as it does).

/** Whether every item of an array is a text. */
function onlyTexts(value: unknown[]): boolean {
  for (let i = 0; i < value.length; i++) if (typeof value[i] !== 'string') return false;
  return true;
}

/** The texts of an array, each as `same` gives it (not an array: none). */
function names(value: unknown, same: (name: string) => string): string[] {
  if (!Array.isArray(value)) return [];
  const list = value as unknown[];
  return onlyTexts(list) ? (list as string[]).map((name) => same(name)) : strings(list).map(same);
}

/**
 * A test's fqn: its leaf, the test's name, is that name's string, not a second one among those `same` keeps
 * (27,267 tests at 5,000 models: with empty tags shared, 4-5 MiB of a no-change apply's peak, docs/bench.md).
 */
function testFqn(value: unknown, name: string, same: (name: string) => string): string[] {
  if (!Array.isArray(value)) return [];
  const parts = onlyTexts(value as unknown[]) ? (value as string[]) : strings(value);
  const last = parts.length - 1;
  return parts.map((part, i) => (i === last && part === name ? name : same(part)));
}

/** A test's tags: most tests have none, and share one frozen empty array then. */
function testTags(first: unknown, second: unknown, same: (name: string) => string): string[] {
  const tags = tagsOf(first, second, same);
  return tags.length === 0 ? NOTHING : tags;
}

/** The texts of two arrays, each once, as `same` gives it (most nodes have none). */
function tagsOf(first: unknown, second: unknown, same: (name: string) => string): string[] {
  const none = (value: unknown) => !Array.isArray(value) || value.length === 0;
  if (none(first) && none(second)) return [];
  return [...new Set([...strings(first), ...strings(second)])].map(same);
}

/** The members of an entry whose value is a text (not an entry: none). */
function textEntries(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isEntry(value)) return out;
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const item = value[key];
    if (typeof item !== 'string') continue;
    // As Object.fromEntries sets it: a member, even one named __proto__.
    if (key === '__proto__')
      Object.defineProperty(out, key, { value: item, writable: true, enumerable: true, configurable: true });
    else out[key] = item;
  }
  return out;
}

export function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function strings(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const list = value as unknown[];
  return onlyTexts(list)
    ? (list.slice() as string[])
    : list.filter((v): v is string => typeof v === 'string');
}

export function isEntry(value: unknown): value is Entry {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A catalog's columns per unique id, in the warehouse's order and casing. */
export interface CatalogTable {
  schema?: string;
  name?: string;
  columns: Array<{ name: string; type: string }>;
  /** The catalog's `metadata.generated_at` (when dbt docs generate read the warehouse). */
  generatedAt?: string;
}

/** The top-level members of a catalog.json gds reads. */
export const CATALOG_MEMBERS = { each: ['nodes', 'sources'], whole: ['metadata'] } as const;

/** Reads a catalog member by member, as ManifestReader reads a manifest. */
export class CatalogReader {
  private metadata: Entry = {};
  private readonly tables = new Map<string, CatalogTable>();

  /** A member of `nodes` or `sources` (by `key`), or `metadata` whole (no key). */
  member(section: string, key: string | undefined, raw: unknown): void {
    if (section === 'metadata') {
      this.metadata = isEntry(raw) ? raw : {};
      return;
    }
    if ((section !== 'nodes' && section !== 'sources') || key === undefined || !isEntry(raw)) return;
    const meta = entryOr(raw['metadata']);
    const written = entryOr(raw['columns']);
    const columns: Array<{ name: string; type: string; index: number }> = [];
    let inOrder = true;
    const keys = Object.keys(written);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      const raw = written[key];
      const column = isEntry(raw) ? raw : EMPTY;
      const index = typeof column['index'] === 'number' ? column['index'] : columns.length;
      const last = columns.at(-1);
      if (last !== undefined && !(last.index <= index)) inOrder = false;
      columns.push({ name: text(column['name']) ?? key, type: text(column['type']) ?? 'unknown', index });
    }
    if (!inOrder) columns.sort((a, b) => a.index - b.index);
    // dbt-bigquery's catalog lists each field of a STRUCT (and of an ARRAY of STRUCTs) as an entry of its
    // own, `address.city` beside `address` (INFORMATION_SCHEMA.COLUMN_FIELD_PATHS): those are paths inside
    // a column, not columns of the relation.
    const top = new Set(columns.map((c) => c.name));
    const relationColumns = columns
      .filter(({ name }) => !(name.includes('.') && top.has(name.slice(0, name.indexOf('.')))))
      .map(({ name, type }) => ({ name, type }));
    const schema = text(meta['schema']);
    const name = text(meta['name']);
    const generatedAt = text(this.metadata['generated_at']);
    this.tables.set(text(raw['unique_id']) ?? key, {
      ...(schema === undefined ? {} : { schema }),
      ...(name === undefined ? {} : { name }),
      columns: relationColumns,
      ...(generatedAt === undefined ? {} : { generatedAt }),
    });
  }

  /** The catalog's tables; a DbtManifestError when the file was not a catalog. */
  catalog(outline: ManifestOutline): Map<string, CatalogTable> {
    if (!outline.object)
      throw new DbtManifestError('the catalog is not a JSON object: is it a dbt catalog.json?');
    const schemaVersion = text(this.metadata['dbt_schema_version']);
    if (schemaVersion !== undefined && !/\/catalog\/v\d+\.json$/.test(schemaVersion))
      throw new DbtManifestError(
        `the catalog file is not a dbt catalog (${schemaVersion}): dbt docs generate writes target/catalog.json`,
      );
    if (!outline.nodes)
      throw new DbtManifestError(
        'the catalog has no `nodes` object: it is not a dbt catalog.json (written by dbt docs generate)',
      );
    return this.tables;
  }
}

/** Reads a parsed catalog.json (or gives back one already read: a Map); a DbtManifestError when it is not one. */
export function readCatalog(value: unknown): Map<string, CatalogTable> {
  if (value instanceof Map) return value as Map<string, CatalogTable>;
  const reader = new CatalogReader();
  if (isEntry(value)) {
    reader.member('metadata', undefined, value['metadata']);
    for (const section of CATALOG_MEMBERS.each) {
      const members = value[section];
      if (isEntry(members))
        for (const [key, raw] of Object.entries(members)) reader.member(section, key, raw);
    }
  }
  return reader.catalog({ object: isEntry(value), nodes: isEntry(value) && isEntry(value['nodes']) });
}
