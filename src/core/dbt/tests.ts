// dbt tests as Gate 1 rules, each traced to its test's unique_id: not_null → required
// column and a null-rate override; unique / unique_combination_of_columns → the grain key; accepted_values,
// not_accepted_values, expect_column_values_to_(not_)be_in_set, expression_is_true, accepted_range,
// expect_column_values_to_be_between → predicates; match_regex → a
// pattern check; relationships → the column's reference. dbt severity error → HARD_FAIL, warn → WARN
// (recorded, never blocking). A `where:` condition, and the test's own (row_condition), guard the predicate
// (`NOT (where) OR (check)`), which under Gate 1's rule (a row fails only when the predicate is false) skips
// the rows dbt skips.
// Every other test is "not mapped" with its reason.
import type {
  CustomPredicate,
  FieldOverride,
  Gate1Severity,
  PatternCheck,
  UniqueCheck,
} from '../gate1/schema.js';
import { MAX_NAME_LENGTH, MAX_SQL_LENGTH } from '../gate1/schema.js';
import type { PgGrammar } from '../artifacts/pg-grammar.js';
import { checkPredicateSql } from '../gate1/predicate-sql.js';
import { checkRegex } from '../gate1/regex-check.js';
import type { ExpectationsMacro, ManifestNode, ManifestTest } from './manifest.js';
import { text, valuesKey } from './manifest.js';
import { numberText } from '../json-split.js';
import { fusionGenericTest } from './fusion.js';
import { findColumn, reachedColumn, sqlIdentifier, withColumnNames } from './names.js';
import type { MappedTest, NotMappedTest } from './types.js';

/** What a relationships test's `to` resolves to: the referenced relation and its columns when known. */
export interface ReferenceTarget {
  schema: string;
  table: string;
  columns?: string[];
  /** Whether `columns` are the relation's names exactly (a catalog's): `field:` is then reached as the adapter resolves it. */
  exactColumns?: boolean;
  /** The columns' types (the catalog's, else the manifest's data_type), by lower-cased name, where known. */
  types?: ReadonlyMap<string, string>;
}

export interface TestContext {
  /** The declaration's column names. */
  columns: string[];
  /**
   * Whether `columns` are the table's names exactly (a catalog's): a test's column is then reached as the
   * adapter resolves the name dbt writes, not matched without case.
   */
  exactColumns?: boolean;
  adapter: string | undefined;
  /**
   * Resolves `ref('x')` / `source('a','b')` of a relationships test: undefined when it names nothing, or
   * why the reference could never be checked.
   */
  resolveReference(test: ManifestNode, to: string): ReferenceTarget | { unmappable: string } | undefined;
  normaliseName(name: string): string;
  /** dbt's `primary_key` of the model, when it has one (v12): preferred as the grain key. */
  primaryKey: string[];
  /** Null-rate limits `meta.gds.null_rate` declares, by column (the model's apply to each of its columns). */
  declaredNullRates?: Map<string, FieldOverride['nullRate']>;
  /** PostgreSQL's grammar, which reads a test's predicate. */
  grammar: PgGrammar;
  /** Whether dbt Fusion (dbt 2) wrote the manifest: only its generic tests may lack test_metadata. */
  writtenByFusion?: boolean;
  /** How dbt_expectations' postgres__regexp_instr treats an unmatched value (Manifest.postgresRegexpInstr). */
  postgresRegexpInstr?: 'coalesce' | 'null';
  /** What dbt_utils' not_null_proportion divides its count by (Manifest.notNullProportionCast). */
  notNullProportionCast?: 'numeric' | 'type_numeric' | 'other';
  /** Whether dbt_expectations' compound uniqueness applies its ignore_row_if (Manifest.compoundIgnoreRowIf). */
  compoundIgnoreRowIf?: 'applied' | 'ignored';
  /** The columns' types (the catalog's, else the manifest's data_type), by lower-cased name, where known. */
  columnTypes?: ReadonlyMap<string, string>;
  /** The macros that implement the tests, and how a `where:` applies (Manifest.testImplementations), and the root project. */
  macros?: {
    implementations: ReadonlySet<string>;
    rootProject?: string;
    /** The project's `dispatch:` search orders (dbt_project.yml), by macro namespace. */
    dispatch?: ReadonlyMap<string, readonly string[]>;
    /** The cross-database type macros each test macro calls (Manifest.typeMacroCalls). */
    typeCalls?: ReadonlyMap<string, readonly string[]>;
    /** dbt_expectations' macros: what each calls, and whether it dispatches (Manifest.expectationsMacros). */
    expectations?: ReadonlyMap<string, ExpectationsMacro>;
  };
}

/**
 * A column no test or `meta.gds` gives a null-rate rule may be NULL in any share of rows, as in dbt: a rate is
 * never above 1, so these limits never warn nor fail (the service's default for an optional column would).
 */
export const ANY_NULL_RATE: FieldOverride['nullRate'] = { warn: 1, fail: 1 };

export interface MappedRules {
  required: Set<string>;
  references: Map<string, string>;
  grainKeyColumns?: string[];
  patternChecks: PatternCheck[];
  customPredicates: CustomPredicate[];
  /** The uniqueness tests besides the grain key's. */
  uniqueChecks: UniqueCheck[];
  fieldOverrides: FieldOverride[];
  mapped: MappedTest[];
  notMapped: NotMappedTest[];
  /** Where each check comes from (a dbt test, meta.gds, dbt's meaning), for the gate1.yml comments. */
  traces: Map<string, string>;
  /** Every rule the table gets, implied ones included, one line each, for the plan. */
  rules: string[];
  /** What a mapped test may mean otherwise in Gate 1 than on the warehouse, by test, for the plan's warnings. */
  warnings: Array<{ test: string; warning: string }>;
}

const SEVERITY: Record<ManifestTest['severity'], Gate1Severity> = { error: 'HARD_FAIL', warn: 'WARN' };

type Outcome =
  | { kind: 'required'; column: string }
  | { kind: 'nullRate'; column: string; override: FieldOverride; warning?: string }
  | { kind: 'grain'; columns: string[]; severity: Gate1Severity; nulls: NullRows }
  | { kind: 'predicate'; sql: string; warning?: string }
  | { kind: 'pattern'; column: string; regex: string; warning?: string }
  | { kind: 'reference'; column: string; target: string }
  | { kind: 'refused'; reason: string };

/**
 * Which rows with NULLs a uniqueness test skips: `any` a row with a NULL among its columns (unique, and
 * dbt_expectations' ignore_row_if: any_value_is_missing), `all` a row whose columns are all NULL
 * (ignore_row_if: all_values_are_missing, its default), `none` no row (dbt_utils groups NULL as a value).
 */
type NullRows = 'any' | 'all' | 'none';

const refused = (reason: string): Outcome => ({ kind: 'refused', reason });

/** Where a rule comes from, for the gate1.yml comments and the plan: a dbt test or a contract constraint. */
const origin = (id: string) => (id.includes(':constraint:') ? `dbt contract ${id}` : `dbt test ${id}`);

const UNIT_TEST =
  "a dbt unit test: it checks the model's SQL on fixed input rows (its given and expect) when dbt builds the model, not the rows of the table, so it is no Gate 1 rule; dbt still runs it";

/** Maps the tests attached to one declaration. */
export function mapTests(tests: ManifestNode[], context: TestContext): MappedRules {
  const rules: MappedRules = {
    required: new Set(),
    references: new Map(),
    patternChecks: [],
    customPredicates: [],
    uniqueChecks: [],
    fieldOverrides: [],
    mapped: [],
    notMapped: [],
    traces: new Map(),
    rules: [],
    warnings: [],
  };
  const names = new Set<string>();
  const grainCandidates: Array<{
    test: string;
    name: string;
    columns: string[];
    severity: Gate1Severity;
    nulls: NullRows;
  }> = [];
  const overrides = new Map<string, { override: FieldOverride; test: string; required: boolean }>();
  const sorted = [...tests].sort((a, b) => (a.uniqueId < b.uniqueId ? -1 : a.uniqueId > b.uniqueId ? 1 : 0));
  // Indexed loops, forEach and no destructuring here and below: each for-of made an iterator's result object
  // an item (TurboFan, which would elide them, is held off while a project is read and declared).
  for (let i = 0; i < sorted.length; i++) {
    const node = sorted[i] as ManifestNode;
    if (node.resourceType === 'unit_test') {
      rules.notMapped.push({ test: node.uniqueId, reason: UNIT_TEST });
      continue;
    }
    const test = node.test;
    if (!test) continue;
    const outcome = node.enabled ? mapOne(node, test, context) : refused('disabled in dbt (enabled: false)');
    const severity = SEVERITY[test.severity];
    const unread = outcome.kind === 'refused' ? undefined : unreadDispatch(node, test, context);
    if (unread !== undefined) rules.warnings.push({ test: node.uniqueId, warning: unread });
    switch (outcome.kind) {
      case 'refused':
        rules.notMapped.push({ test: node.uniqueId, reason: outcome.reason });
        break;
      case 'required': {
        rules.required.add(outcome.column);
        overrides.set(outcome.column, {
          override: { field: outcome.column, nullRate: { warn: 0, fail: 0 } },
          test: node.uniqueId,
          required: true,
        });
        rules.mapped.push({ test: node.uniqueId, rule: `required:${outcome.column}` });
        break;
      }
      case 'nullRate': {
        const held = overrides.get(outcome.column);
        // Two null-rate tests of a column both hold: the stricter limit of each.
        if (
          held === undefined ||
          (!held.required && outcome.override.nullRate.fail < held.override.nullRate.fail)
        )
          overrides.set(outcome.column, {
            override: {
              field: outcome.column,
              nullRate: {
                warn: Math.min(outcome.override.nullRate.warn, held?.override.nullRate.warn ?? 1),
                fail: outcome.override.nullRate.fail,
              },
            },
            test: node.uniqueId,
            required: false,
          });
        else if (!held.required)
          held.override = {
            field: outcome.column,
            nullRate: {
              warn: Math.min(outcome.override.nullRate.warn, held.override.nullRate.warn),
              fail: held.override.nullRate.fail,
            },
          };
        rules.mapped.push({ test: node.uniqueId, rule: `nullRate:${outcome.column}` });
        if (outcome.warning !== undefined)
          rules.warnings.push({ test: node.uniqueId, warning: outcome.warning });
        break;
      }
      case 'grain':
        grainCandidates.push({
          test: node.uniqueId,
          name: node.name,
          columns: outcome.columns,
          severity: outcome.severity,
          nulls: outcome.nulls,
        });
        break;
      case 'reference': {
        const held = rules.references.get(outcome.column);
        if (held !== undefined && held !== outcome.target) {
          rules.notMapped.push({
            test: node.uniqueId,
            reason: `${outcome.column} already references ${held}; a column declares one reference`,
          });
          break;
        }
        rules.references.set(outcome.column, outcome.target);
        rules.mapped.push({ test: node.uniqueId, rule: `reference:${outcome.column}` });
        break;
      }
      case 'predicate':
      case 'pattern': {
        const name = uniqueName(node.name, names);
        const clock = outcome.kind === 'predicate' ? clockWarning(outcome.sql, node.name) : undefined;
        if (outcome.kind === 'predicate') rules.customPredicates.push({ name, sql: outcome.sql, severity });
        else rules.patternChecks.push({ name, column: outcome.column, regex: outcome.regex, severity });
        rules.traces.set(name, origin(node.uniqueId));
        rules.mapped.push({ test: node.uniqueId, rule: `${outcome.kind}:${name}` });
        if (outcome.warning !== undefined)
          rules.warnings.push({ test: node.uniqueId, warning: outcome.warning });
        if (clock !== undefined) rules.warnings.push({ test: node.uniqueId, warning: clock });
        break;
      }
    }
  }
  // One grain key (an error-level test's; the grain check always blocks); every other uniqueness test is a
  // uniqueCheck of its own severity.
  const grain = chooseGrain(
    grainCandidates.filter((c) => c.severity === 'HARD_FAIL'),
    context.primaryKey,
    rules.required,
  );
  for (let i = 0; i < grainCandidates.length; i++) {
    const candidate = grainCandidates[i] as (typeof grainCandidates)[number];
    if (candidate === grain) {
      rules.grainKeyColumns = candidate.columns;
      rules.mapped.push({ test: candidate.test, rule: 'grainKey' });
    } else if (candidate.nulls === 'all' && !candidate.columns.some((c) => rules.required.has(c))) {
      rules.notMapped.push({
        test: candidate.test,
        reason:
          `its ignore_row_if: all_values_are_missing skips only the rows where all of ${candidate.columns.join(', ')} are NULL, ` +
          'and no Gate 1 uniqueness check does (one compares NULL as a value, one skips every row with a NULL): ' +
          'add a not_null test to one of the columns, or set ignore_row_if: any_value_is_missing',
      });
    } else {
      const name = uniqueName(candidate.name, names);
      rules.uniqueChecks.push({
        name,
        columns: candidate.columns,
        severity: candidate.severity,
        ...(candidate.nulls === 'any' ? {} : { nullsDistinct: false }),
      });
      rules.traces.set(name, origin(candidate.test));
      rules.mapped.push({ test: candidate.test, rule: `unique:${name}` });
    }
  }
  const byColumn = new Map<string, { override: FieldOverride; test: string; required: boolean }>();
  overrides.forEach((o) => byColumn.set(o.override.field, o));
  const columns = context.columns;
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i] as string;
    const held = byColumn.get(column);
    const declared = context.declaredNullRates?.get(column);
    let override: FieldOverride;
    let trace: string;
    if (held) {
      override = held.override;
      trace = origin(held.test);
    } else if (declared) {
      override = { field: column, nullRate: { ...declared } };
      trace = 'meta.gds null_rate';
    } else {
      override = { field: column, nullRate: { ...ANY_NULL_RATE } };
      trace = 'no not_null test: in dbt the column may be NULL';
    }
    rules.fieldOverrides.push(override);
    rules.traces.set(`field:${column}`, trace);
  }
  rules.rules = describeRules(rules);
  return rules;
}

/** A rate as a percentage, to the digits it has (a limit of 0.0000005 is 0.00005 %, not 0 %). */
const percent = (rate: number) => `${(rate * 100).toFixed(10).replace(/\.?0+$/, '')} %`;

/** The rules of a mapped table in words, the implied ones (baseline checks, nullable columns) included. */
function describeRules(rules: MappedRules): string[] {
  // Each line joined from its parts: a template literal keeps a line as a tree of its pieces, about twice
  // the memory of the text, and a 5,000-model project holds some 60,000 of them until the plan is printed.
  const lines: string[][] = [
    ['row count and column presence: checked on every gate run'],
    rules.grainKeyColumns === undefined
      ? ['grain key: none (no unique test)']
      : ['grain key (', rules.grainKeyColumns.join(', '), '): no value twice'],
  ];
  const overrides = rules.fieldOverrides;
  for (let i = 0; i < overrides.length; i++) {
    const { field, nullRate } = overrides[i] as FieldOverride;
    const why = rules.traces.get(`field:${field}`) ?? '';
    const what =
      nullRate.fail === 0 && nullRate.warn === 0
        ? 'never NULL'
        : nullRate.warn >= 1
          ? 'may be NULL in any share of rows'
          : nullRate.fail >= 1
            ? `warns above ${percent(nullRate.warn)} NULL, never fails`
            : `warns above ${percent(nullRate.warn)} NULL, fails above ${percent(nullRate.fail)}`;
    lines.push([field, ': ', what, ' (', why, ')']);
  }
  rules.references.forEach((target, column) => lines.push([column, ': references ', target]));
  for (const check of rules.patternChecks)
    lines.push([check.name, ': ', check.column, ' matches /', check.regex, '/ (', check.severity, ')']);
  for (const check of rules.customPredicates)
    lines.push([check.name, ': ', check.sql, ' (', check.severity, ')']);
  for (const check of rules.uniqueChecks)
    lines.push([
      check.name,
      ': no value of (',
      check.columns.join(', '),
      ') twice',
      check.nullsDistinct === false ? ', NULL counted as a value' : '',
      ' (',
      check.severity,
      ')',
    ]);
  return lines.map((parts) => parts.join(''));
}

/**
 * The grain key among the uniqueness tests, in the order dbt infers a model's primary key: its primary_key,
 * a unique column that also has a not_null test, a combination of columns. The grain check compares every
 * row, NULL as a value, so a test that skips rows with NULLs is the grain key only where those rows fail a
 * not_null test anyway: a unique column (or ignore_row_if: any_value_is_missing) whose every column is
 * required, an all_values_are_missing one with a required column. Any other is a uniqueness check.
 */
function chooseGrain<T extends { columns: string[]; nulls: NullRows }>(
  candidates: T[],
  primaryKey: string[],
  required: ReadonlySet<string>,
): T | undefined {
  const eligible = candidates.filter((c) =>
    c.nulls === 'none'
      ? true
      : c.nulls === 'any'
        ? c.columns.every((x) => required.has(x))
        : c.columns.some((x) => required.has(x)),
  );
  const key = primaryKey
    .map((c) => c.toLowerCase())
    .sort()
    .join(',');
  return (
    eligible.find(
      (c) =>
        key !== '' &&
        c.columns
          .map((x) => x.toLowerCase())
          .sort()
          .join(',') === key,
    ) ??
    eligible.find((c) => c.columns.length === 1) ??
    eligible[0]
  );
}

function uniqueName(base: string, taken: Set<string>): string {
  let name = base.slice(0, MAX_NAME_LENGTH);
  for (let n = 2; taken.has(name); n++) name = `${base.slice(0, MAX_NAME_LENGTH - 4)}_${n}`;
  taken.add(name);
  return name;
}

const JINJA = /\{\{|\{%/;

/** dbt's generic tests whose only argument is their column. */
const COLUMN_ONLY_TESTS = ['not_null', 'unique'];

/**
 * The not_null or unique test, and its column, that a test's name says: dbt names such a test of a column
 * `<test>_<model>_<column>`. For the generic tests dbt Fusion writes without test_metadata, or without its
 * kwargs and column_name (dbt-fusion #1575, #1243). The model is the test's one parent; the column must be
 * the table's.
 */
function namedColumnTest(
  node: ManifestNode,
  test: ManifestTest,
  kinds: string[],
  context: TestContext,
): { kind: string; column: string } | undefined {
  const parents = node.dependsOn.filter((id) => !id.startsWith('macro.'));
  const model = test.attachedNode ?? (parents.length === 1 ? parents[0] : undefined);
  const modelParts = model?.split('.') ?? [];
  if (modelParts.length !== 3) return undefined;
  for (const kind of kinds) {
    const prefix = `${kind}_${modelParts[2] ?? ''}_`;
    if (!node.name.startsWith(prefix)) continue;
    const column = node.name.slice(prefix.length);
    if (column !== '' && 'name' in columnOf(column, context)) return { kind, column };
  }
  return undefined;
}

function mapOne(node: ManifestNode, written: ManifestTest, context: TestContext): Outcome {
  let test = written;
  if (test.name === undefined) {
    if (!fusionGenericTest(node, context.writtenByFusion === true))
      return refused(
        'a singular test (its own SQL, or a test the manifest describes without test_metadata): gds cannot turn its query into a Gate 1 rule',
      );
    const named = namedColumnTest(node, test, COLUMN_ONLY_TESTS, context);
    if (named === undefined)
      return refused(
        `a generic test dbt Fusion wrote without test_metadata: its name (${node.name}) is no not_null or unique test of a column of the table, so gds cannot tell what it checks`,
      );
    test = { ...test, name: named.kind, columnName: named.column };
  } else if (
    context.writtenByFusion === true &&
    test.namespace === undefined &&
    COLUMN_ONLY_TESTS.includes(test.name) &&
    test.columnName === undefined &&
    text(test.kwargs['column_name']) === undefined
  ) {
    const named = namedColumnTest(node, test, [test.name], context);
    if (named !== undefined) test = { ...test, columnName: named.column };
  }
  if (test.thresholds !== undefined)
    return refused(
      `its thresholds (${test.thresholds}) let some failing rows pass; a Gate 1 check fails on the first`,
    );
  const kind = `${test.namespace === undefined ? '' : `${test.namespace}.`}${test.name}`;
  const overriding = node.uniqueId.includes(':constraint:')
    ? undefined
    : overridingMacro(test, kind, context);
  if (overriding !== undefined)
    return refused(
      `${overriding.dispatch === undefined ? `the project runs its own macro ${overriding.macro}` : `${searchOrder(overriding.dispatch)} runs ${overriding.macro}`} for ${kind} tests, not the one gds maps: gds cannot tell what its SQL checks`,
    );
  const undispatched =
    overriding === undefined
      ? (undispatchable(test, kind, context) ?? untypable(test, kind, context))
      : undefined;
  if (undispatched !== undefined) return refused(undispatched);
  const where = test.where;
  const whereMacro =
    where === undefined || !MAPPED_KINDS.has(kind)
      ? undefined
      : globalOverride('get_where_subquery', context, 'context');
  if (whereMacro !== undefined)
    return refused(
      `its where: condition is applied by ${whereMacro.dispatch === undefined ? `the project's own macro ${whereMacro.macro}` : `${whereMacro.macro}, which ${searchOrder(whereMacro.dispatch)} runs`}, not dbt's (select * from the table where …): gds cannot tell which rows it tests`,
    );
  // dbt (1.0 and later) selects every generic test's model through get_where_subquery
  // (kwargs.model: {{ get_where_subquery(ref('x')) }}), a where: or none.
  const whereUndispatched =
    !MAPPED_KINDS.has(kind) || node.uniqueId.includes(':constraint:')
      ? undefined
      : missingImplementation('dbt', 'get_where_subquery', context);
  if (whereUndispatched !== undefined)
    return refused(
      `${where === undefined ? "dbt selects its model through dbt's get_where_subquery (every generic test's, dbt 1.0 and later)" : "its where: condition is applied by dbt's get_where_subquery"}: ${whereUndispatched}`,
    );
  if (where !== undefined && JINJA.test(where))
    return refused(`its where: condition is a Jinja template (${where}), not a plain SQL condition`);
  const kwargs = test.kwargs;
  const column = () => {
    const written = test.columnName ?? text(kwargs['column_name']);
    if (written === undefined) return { error: `the test names no column` } as const;
    return columnOf(written, context);
  };
  // dbt checks a row only when the test's own condition (row_condition, expression_is_true's condition) and
  // its where: both hold.
  const guarded = (check: string, condition: string | undefined): Outcome => {
    const conditions = [condition, where === condition ? undefined : where].filter(
      (c): c is string => c !== undefined && c.trim() !== '',
    );
    if (conditions.some((c) => JINJA.test(c)))
      return refused('its condition is a Jinja template, not a plain SQL condition');
    const trap = conditions.map((c) => dialectTrap(c, context.adapter)).find((t) => t !== undefined);
    if (trap !== undefined) return refused(trap);
    const sql =
      conditions.length === 0
        ? check
        : `NOT (${conditions.map((c) => withColumnNames(c, context.columns)).join(') OR NOT (')}) OR (${check})`;
    return predicate(sql, context);
  };
  switch (kind) {
    case 'not_null':
    case 'dbt_expectations.expect_column_values_to_not_be_null': {
      const col = column();
      if ('error' in col) return refused(col.error);
      if (where !== undefined || kwargs['row_condition'] !== undefined)
        return guarded(`${sqlIdentifier(col.name)} IS NOT NULL`, text(kwargs['row_condition']));
      return test.severity === 'error'
        ? { kind: 'required', column: col.name }
        : {
            kind: 'nullRate',
            column: col.name,
            override: { field: col.name, nullRate: { warn: 0, fail: 1 } },
          };
    }
    case 'unique':
    case 'dbt_expectations.expect_column_values_to_be_unique': {
      const col = column();
      if ('error' in col) return refused(col.error);
      // A dbt_expectations of the dbt 1.0 era groups the rows by the column (its compound test, ignore_row_if unused): NULL too.
      const nulls =
        kind === 'dbt_expectations.expect_column_values_to_be_unique' &&
        context.compoundIgnoreRowIf === 'ignored'
          ? 'none'
          : 'any';
      return grain([col.name], test, where ?? text(kwargs['row_condition']), nulls);
    }
    case 'dbt_utils.unique_combination_of_columns':
    case 'dbt_expectations.expect_compound_columns_to_be_unique': {
      const list = kwargs['combination_of_columns'] ?? kwargs['column_list'];
      if (!Array.isArray(list) || list.length === 0 || !list.every((c) => typeof c === 'string'))
        return refused('its combination_of_columns is not a list of column names');
      // quote_columns: true (both packages) has dbt write each name through adapter.quote.
      const quoted = kwargs['quote_columns'] === true;
      const found: string[] = [];
      for (const written of list as string[]) {
        const col = columnOf(quoted && !isQuotedName(written) ? `"${written}"` : written, context);
        if ('error' in col) return refused(col.error);
        found.push(col.name);
      }
      // dbt_utils groups the rows by the columns: rows that share a NULL among them count as repeated; so does
      // a dbt_expectations of the dbt 1.0 era, whose query never applies the ignore_row_if it reads.
      if (kind === 'dbt_utils.unique_combination_of_columns' || context.compoundIgnoreRowIf === 'ignored')
        return grain(found, test, where ?? text(kwargs['row_condition']), 'none');
      const ignore = kwargs['ignore_row_if'] ?? 'all_values_are_missing';
      if (ignore !== 'all_values_are_missing' && ignore !== 'any_value_is_missing')
        return refused(
          `its ignore_row_if ${JSON.stringify(ignore)} is neither all_values_are_missing nor any_value_is_missing`,
        );
      // Over one column, "all" and "any" of its values missing are the same rows.
      const nulls = ignore === 'any_value_is_missing' || found.length === 1 ? 'any' : 'all';
      return grain(found, test, where ?? text(kwargs['row_condition']), nulls);
    }
    case 'accepted_values':
    case 'dbt_utils.not_accepted_values':
    case 'dbt_expectations.expect_column_values_to_be_in_set':
    case 'dbt_expectations.expect_column_values_to_not_be_in_set': {
      const col = column();
      if ('error' in col) return refused(col.error);
      const values = kwargs[valuesKey(kwargs)];
      if (!Array.isArray(values) || values.length === 0) return refused('its values are not a list');
      const quote = (kwargs['quote'] ?? kwargs['quote_values'] ?? true) !== false;
      const literals: string[] = [];
      for (let index = 0; index < values.length; index++) {
        const value: unknown = values[index];
        // A number as the manifest wrote it (Python's repr, which dbt's Jinja prints): 1.0, not 1.
        const written = typeof value === 'number' ? numberText(values, index) : undefined;
        const literal =
          written !== undefined
            ? quote
              ? `'${written}'`
              : written
            : quote
              ? quotedAsDbt(value, context.adapter)
              : rawValue(value);
        if (literal === undefined) return refused(notPlain('value', value));
        if (typeof literal !== 'string') return refused(literal.unquotable);
        const trap = quote ? undefined : dialectTrap(literal, context.adapter);
        if (trap !== undefined) return refused(trap);
        literals.push(literal);
      }
      const id = sqlIdentifier(col.name);
      const list = literals.join(', ');
      const coercion = quote
        ? quotedOnNumbersOrBooleans(col.name, literals, context)
        : rawOfOtherKind(col.name, literals, context);
      if (coercion?.refused !== undefined) return refused(coercion.refused);
      // accepted_values (`not in`), not_accepted_values (`in`) and not_be_in_set (an inner join) never report a
      // NULL, and a NULL predicate never fails a Gate 1 row; be_in_set reports it (its left join finds no value
      // for it), so it fails here.
      const check =
        kind === 'dbt_expectations.expect_column_values_to_not_be_in_set' ||
        kind === 'dbt_utils.not_accepted_values'
          ? `${id} NOT IN (${list})`
          : kind === 'dbt_expectations.expect_column_values_to_be_in_set'
            ? `${id} IS NOT NULL AND ${id} IN (${list})`
            : `${id} IN (${list})`;
      const outcome = guarded(check, text(kwargs['row_condition']));
      return coercion?.warning !== undefined && outcome.kind === 'predicate'
        ? { ...outcome, warning: coercion.warning }
        : outcome;
    }
    case 'relationships': {
      const col = column();
      if ('error' in col) return refused(col.error);
      if (test.severity === 'warn')
        return refused(
          'severity warn: the referential-integrity check always blocks (HARD_FAIL), so a warn-level test is not made one',
        );
      if (where !== undefined)
        return refused('a where: condition: the referential-integrity check has no condition');
      const to = text(kwargs['to']);
      const field = text(kwargs['field']);
      if (to === undefined || field === undefined) return refused('its to: or field: argument is missing');
      if (JINJA.test(to.replace(/^\s*\{\{\s*|\s*\}\}\s*$/g, '')))
        return refused(`its to: ${to} is not a ref() or source()`);
      const target = context.resolveReference(node, to);
      if (!target) return refused(`its to: ${to} names no model, seed, snapshot or source of the manifest`);
      if ('unmappable' in target) return refused(target.unmappable);
      // A contract's foreign_key (constraints.ts) names its column in to_columns or its SQL, not in field:.
      const constraint = /:constraint:foreign_key(?::|$)/.test(node.uniqueId);
      const reached = targetColumnOf(field, target, context, constraint);
      if ('error' in reached) return refused(reached.error);
      const targetColumn = reached.name;
      const reference = `${target.schema}.${target.table}.${targetColumn}`;
      if (!/^[A-Za-z_][A-Za-z0-9_$]*\.[A-Za-z_][A-Za-z0-9_$]*\.[A-Za-z_][A-Za-z0-9_$]*$/.test(reference))
        return refused(`the reference ${reference} has a name gds cannot write as schema.table.column`);
      const otherKinds = constraint
        ? undefined
        : comparedTypes(col.name, reference, target, targetColumn, context);
      if (otherKinds !== undefined) return refused(otherKinds);
      return { kind: 'reference', column: col.name, target: reference };
    }
    case 'dbt_utils.expression_is_true': {
      const expression = text(kwargs['expression']);
      if (expression === undefined || JINJA.test(expression))
        return refused('its expression is missing or a Jinja template');
      const trap = dialectTrap(expression, context.adapter);
      if (trap !== undefined) return refused(trap);
      const written = test.columnName ?? text(kwargs['column_name']);
      let check = withColumnNames(expression, context.columns);
      if (written !== undefined) {
        const col = column();
        if ('error' in col) return refused(col.error);
        check = `${sqlIdentifier(col.name)} ${check}`;
      }
      const condition = text(kwargs['condition']);
      return guarded(
        check,
        condition !== undefined && condition.replace(/\s/g, '') !== '1=1' ? condition : undefined,
      );
    }
    case 'dbt_utils.not_null_proportion': {
      const col = column();
      if ('error' in col) return refused(col.error);
      const groups = kwargs['group_by_columns'];
      if (Array.isArray(groups) && groups.length > 0)
        return refused('its group_by_columns: a Gate 1 null rate is of the whole table, not of each group');
      if (where !== undefined) return refused('a where: condition: a Gate 1 null rate has no condition');
      const atMost = kwargs['at_most'] ?? 1;
      const most = sqlNumber(atMost);
      if (typeof most === 'string') return refused(`its at_most ${JSON.stringify(atMost)} ${most}`);
      if (most === undefined || most.digits < 10 ** most.decimals)
        return refused(
          `its at_most ${JSON.stringify(atMost)}: it fails a column with too few NULLs, which no Gate 1 null rate does`,
        );
      const atLeast = kwargs['at_least'];
      const least = sqlNumber(atLeast);
      if (typeof least === 'string') return refused(`its at_least ${JSON.stringify(atLeast)} ${least}`);
      if (least === undefined || least.digits > 10 ** least.decimals)
        return refused(`its at_least ${JSON.stringify(atLeast)} is no decimal from 0 to 1`);
      const rounding = proportionRounding(context);
      const kept = typeof rounding === 'object' ? rounding : undefined;
      // Below at_least, a proportion of `rows` rows is at least 1 / (10^d * rows) below it (d: at_least's
      // decimals); rounded or truncated to `kept` decimals, it moves by less than half 10^-kept, so it stays
      // below exactly when 10^(kept - d) > 2 * rows for every row count dbt's SQL counts. Compared with a
      // float (at_least written with an exponent, which T-SQL reads as one), it keeps some 15 decimals.
      const keptDecimals = kept === undefined ? 0 : least.exponent ? Math.min(kept.kept, 15) : kept.kept;
      const unknown =
        rounding === undefined ||
        (kept !== undefined && 10 ** (keptDecimals - least.decimals) <= 2 * kept.rows);
      const fail = nullShareLimit(least, typeof rounding === 'number' ? rounding : undefined);
      return {
        kind: 'nullRate',
        column: col.name,
        override: {
          field: col.name,
          nullRate: test.severity === 'error' ? { warn: fail, fail } : { warn: fail, fail: 1 },
        },
        ...(unknown
          ? {
              warning: unknownProportionScale(
                context.adapter,
                kept?.kept,
                least.exponent && keptDecimals < (kept?.kept ?? 0),
              ),
            }
          : {}),
      };
    }
    case 'dbt_utils.accepted_range':
    case 'dbt_expectations.expect_column_values_to_be_between': {
      const col = column();
      if ('error' in col) return refused(col.error);
      const strictly = kwargs['strictly'] === true;
      const inclusive = kind === 'dbt_utils.accepted_range' ? kwargs['inclusive'] !== false : !strictly;
      const id = sqlIdentifier(col.name);
      const bounds: string[] = [];
      for (const [key, op] of [
        ['min_value', inclusive ? '>=' : '>'],
        ['max_value', inclusive ? '<=' : '<'],
      ] as const) {
        const value = kwargs[key];
        if (value === undefined || value === null) continue;
        const literal = rawValue(value);
        if (literal === undefined) return refused(notPlain(key, value));
        const trap = dialectTrap(literal, context.adapter);
        if (trap !== undefined) return refused(trap);
        bounds.push(`${id} ${op} ${literal}`);
      }
      if (bounds.length === 0) return refused('it sets neither min_value nor max_value');
      // dbt_utils 0.x took the rows to test as an argument, where="true" (1.x reads config.where).
      const own = kind === 'dbt_utils.accepted_range' ? text(kwargs['where']) : undefined;
      const rows = own !== undefined && own.trim().toLowerCase() !== 'true' ? own : undefined;
      return guarded(bounds.join(' AND '), rows ?? text(kwargs['row_condition']));
    }
    case 'dbt_expectations.expect_column_values_to_match_regex': {
      const col = column();
      if ('error' in col) return refused(col.error);
      const written = text(kwargs['regex']);
      if (written === undefined || written === '') return refused('its regex is missing');
      const read = regexAsDbt(written, kwargs['is_raw'] === true, context.adapter);
      if ('unquotable' in read) return refused(read.unquotable);
      const flags = text(kwargs['flags']);
      if (flags !== undefined && flags !== '')
        return refused(`its regex flags "${flags}" have no Gate 1 equivalent`);
      const engine = REGEX_ENGINES[context.adapter ?? ''];
      if (engine === undefined) return refused(unknownRegexEngine(context.adapter));
      const problems = checkRegex(read.read);
      const error = problems.find((p) => p.severity === 'error');
      if (error !== undefined) return refused(`its regex cannot run on PostgreSQL: ${error.message}`);
      const leading =
        engine === 'postgres' ? { dotAll: false } : leadingOptions(read.read, engine, context.adapter);
      if ('error' in leading) return refused(leading.error);
      const otherwise = problems.find((p) => p.severity === 'warning');
      if (engine !== 'postgres' && otherwise !== undefined)
        return refused(
          `its regex means another thing on PostgreSQL, where Gate 1 runs, than on ${context.adapter ?? ''}: ${otherwise.message}`,
        );
      const reads =
        engine === 'postgres'
          ? { regex: read.read, unknownClasses: [] }
          : asEngineReads(read.read, engine, context.adapter, leading.dotAll);
      if ('error' in reads) return refused(reads.error);
      const regex = reads.regex;
      const warning =
        reads.unknownClasses.length === 0
          ? undefined
          : `its regex's class${reads.unknownClasses.length === 1 ? '' : 'es'} ${reads.unknownClasses.join(', ')} ` +
            `hold${reads.unknownClasses.length === 1 ? 's' : ''} on ${context.adapter ?? ''} the ASCII characters ` +
            'it names, but its documentation does not say which others, and in PostgreSQL, where Gate 1 runs, ' +
            "a class follows the database's locale (é is [[:alpha:]] there): a value with other characters may " +
            "pass dbt's test and fail the pattern check, or the other way round";
      const condition = text(kwargs['row_condition']);
      const matches = `${sqlIdentifier(col.name)}::text ~ ${sqlString(regex) ?? "''"}`;
      // On PostgreSQL dbt_expectations counts the matches (postgres__regexp_instr): from 0.8.4 a NULL counts 0
      // and fails, as a pattern check's NULL would not; before, no match was NULL and the test failed no row.
      const onPostgres = context.adapter === 'postgres' ? context.postgresRegexpInstr : undefined;
      if (onPostgres === 'null')
        return refused(
          "its dbt_expectations (before 0.8.4) counts a regex's matches on postgres as NULL when there are none, so dbt's test fails no row (dbt-expectations #249): update dbt_expectations",
        );
      if (onPostgres === 'coalesce')
        return guarded(`${sqlIdentifier(col.name)} IS NOT NULL AND ${matches}`, condition);
      if (condition !== undefined || where !== undefined) {
        const outcome = guarded(matches, condition);
        return warning !== undefined && outcome.kind === 'predicate' ? { ...outcome, warning } : outcome;
      }
      return { kind: 'pattern', column: col.name, regex, ...(warning === undefined ? {} : { warning }) };
    }
    default:
      return refused(`gds has no Gate 1 rule for ${kind} tests`);
  }
}

/** The tests mapOne turns into rules; any other is not mapped whatever macro runs it. */
const MAPPED_KINDS: ReadonlySet<string> = new Set([
  'not_null',
  'unique',
  'accepted_values',
  'relationships',
  'dbt_utils.unique_combination_of_columns',
  'dbt_utils.expression_is_true',
  'dbt_utils.accepted_range',
  'dbt_utils.not_accepted_values',
  'dbt_utils.not_null_proportion',
  'dbt_expectations.expect_column_values_to_not_be_null',
  'dbt_expectations.expect_column_values_to_be_unique',
  'dbt_expectations.expect_compound_columns_to_be_unique',
  'dbt_expectations.expect_column_values_to_be_in_set',
  'dbt_expectations.expect_column_values_to_not_be_in_set',
  'dbt_expectations.expect_column_values_to_be_between',
  'dbt_expectations.expect_column_values_to_match_regex',
]);

/** The adapters whose dbt plugin builds on another's: dispatch tries the parent's implementation next. */
const PARENT_ADAPTERS: Readonly<Record<string, readonly string[]>> = {
  redshift: ['postgres'],
  materialize: ['postgres'],
  greenplum: ['postgres'],
  risingwave: ['postgres'],
  databricks: ['spark'],
  sqlserver: ['fabric'],
  synapse: ['fabric', 'sqlserver'],
};

/**
 * A macro dbt runs instead of the one gds reads: `order`, the project's `dispatch:` search_order for
 * `namespace` (dbt_project.yml) that dispatches to it, when one does.
 */
interface Override {
  macro: string;
  dispatch?: { namespace: string; order: readonly string[] };
}

/**
 * The macro of the project (or of a package) that dbt runs for a test instead of the one gds reads, or
 * undefined. dbt calls a built-in test by its bare name (`test_not_null`), which a project's or a package's
 * macro of that name overrides, and each test it maps dispatches its SQL (`adapter.dispatch('test_unique',
 * 'dbt')`, dbt_utils' `'dbt_utils'`, dbt_expectations' helpers: testDispatches): see dispatchedTo.
 */
function overridingMacro(test: ManifestTest, kind: string, context: TestContext): Override | undefined {
  const macros = context.macros;
  if (macros === undefined || !MAPPED_KINDS.has(kind)) return undefined;
  if (test.namespace === undefined) return globalOverride(`test_${test.name ?? ''}`, context);
  for (const { namespace, macro, byPackages } of testDispatches(test, kind, context)) {
    // dbt 0.20's packages list: the package's own unless a var dbt reads lists another (unreadDispatch).
    if (byPackages === true) continue;
    if (macros.rootProject !== undefined || readOrder(namespace, macros) !== undefined) {
      const found = dispatchedTo(namespace, macro, context);
      if (found !== undefined && found.pkg !== namespace)
        return { macro: found.macro, ...dispatchOf(namespace, macros) };
      continue;
    }
    // The manifest does not tell the root project: any package but the namespace's is taken for it.
    for (const prefix of dispatchPrefixes(context.adapter)) {
      const other = definers(`${prefix}__${macro}`, macros.implementations).find((pkg) => pkg !== namespace);
      if (other !== undefined) return { macro: `macro.${other}.${prefix}__${macro}` };
    }
  }
  return undefined;
}

/** The project's search_order that dispatches to a macro, as the plan names it. */
const searchOrder = (dispatch: NonNullable<Override['dispatch']>): string =>
  `dbt_project.yml's dispatch: search_order for ${dispatch.namespace} (${dispatch.order.join(', ')})`;

/**
 * Where gds read no dbt_project.yml (its `dispatch:` unknown), another package's implementation of a test
 * mapped as its own macro means, which a search_order listing that package first would have dbt run (a shim:
 * tsql_utils' sqlserver__test_expression_is_true): why the test may mean otherwise, or undefined. A helper
 * dbt_expectations dispatches with dbt 0.20's packages list searches the var dbt_expectations_dispatch_list
 * first (the root project too only where it lists it), which gds does not read: the same, naming the var.
 */
function unreadDispatch(node: ManifestNode, test: ManifestTest, context: TestContext): string | undefined {
  const macros = context.macros;
  if (macros === undefined || test.name === undefined) return undefined;
  if (node.uniqueId.includes(':constraint:')) return undefined;
  const kind = `${test.namespace === undefined ? '' : `${test.namespace}.`}${test.name}`;
  for (const { namespace, macro, byPackages } of testDispatches(test, kind, context)) {
    if (byPackages === true) {
      const listed = byPackagesOther(namespace, macro, context);
      if (listed !== undefined) return listed;
      continue;
    }
    const templated = macros.dispatch?.get(namespace)?.some((entry) => JINJA.test(entry)) === true;
    if (macros.dispatch !== undefined && !templated) continue;
    const unread = templated
      ? `its search_order for ${namespace} (${(macros.dispatch?.get(namespace) ?? []).join(', ')}) is a Jinja template, which dbt renders and gds does not`
      : 'gds read no dbt_project.yml';
    for (const prefix of dispatchPrefixes(context.adapter)) {
      const name = `${prefix}__${macro}`;
      const pkg = definers(name, macros.implementations).find(
        (p) => p !== namespace && p !== macros.rootProject && !isDbtOwn(p, context.adapter),
      );
      const own = namespace === 'dbt' ? "dbt's" : `${namespace}'`;
      if (pkg !== undefined)
        return (
          `the manifest holds macro.${pkg}.${name}, which dbt runs instead of ${own} own where dbt_project.yml's ` +
          `dispatch: lists ${pkg} first for ${namespace}; ${unread}, so the test is mapped as ${own} own macro means` +
          (templated ? '' : ': name the dbt project folder (the one holding dbt_project.yml) with --dbt')
        );
    }
  }
  return undefined;
}

/**
 * Another package's implementation (the root project's too) of a helper dispatched with dbt 0.20's packages
 * list, which dbt runs where var('dbt_expectations_dispatch_list') lists that package: why the test may mean
 * otherwise, or undefined.
 */
function byPackagesOther(namespace: string, macro: string, context: TestContext): string | undefined {
  const implementations = context.macros?.implementations;
  if (implementations === undefined) return undefined;
  for (const prefix of dispatchPrefixes(context.adapter)) {
    const name = `${prefix}__${macro}`;
    const pkg = definers(name, implementations).find((p) => p !== namespace && !isDbtOwn(p, context.adapter));
    if (pkg !== undefined)
      return (
        `the manifest holds macro.${pkg}.${name}, which dbt runs instead of ${namespace}' own where the var ` +
        `${namespace}_dispatch_list lists ${pkg} (${namespace} dispatches ${macro} with dbt 0.20's ` +
        `packages = ${namespace}._get_namespaces()); gds reads no vars, so the test is mapped as ${namespace}' own macro means`
      );
  }
  return undefined;
}

/** The prefixes adapter.dispatch tries, in order: the adapter's, its parents', `default`. */
const dispatchPrefixes = (adapter: string | undefined): string[] =>
  [adapter ?? '', ...(PARENT_ADAPTERS[adapter ?? ''] ?? []), 'default'].filter((p) => p !== '');

/** Whether `pkg` is dbt's own (dbt, or the adapter's plugin or its parents'), which dispatch's `dbt` stands for. */
const isDbtOwn = (pkg: string, adapter: string | undefined): boolean =>
  pkg === 'dbt' || [adapter ?? '', ...(PARENT_ADAPTERS[adapter ?? ''] ?? [])].some((a) => pkg === `dbt_${a}`);

/**
 * Whether `pkg` is the adapter's plugin package or a parent's (dbt_postgres, dbt_snowflake), which dbt-core keeps
 * among its internal packages: MacroNamespace.get_from_package finds those only under `dbt` (their macros
 * merged into dbt's), so a search_order entry naming one finds nothing (PackageNotFoundForMacroError, which
 * dispatch passes over).
 */
const isAdapterPackage = (pkg: string, adapter: string | undefined): boolean =>
  pkg !== 'dbt' && isDbtOwn(pkg, adapter);

/** The project's search_order for `namespace`, when dbt_project.yml sets one. */
const dispatchOf = (namespace: string, macros: NonNullable<TestContext['macros']>) => {
  const order = readOrder(namespace, macros);
  return order === undefined ? {} : { dispatch: { namespace, order } };
};

/**
 * The project's search_order for `namespace` as dbt_project.yml writes it, or undefined: none, or one with an
 * entry dbt renders (`{{ var('x') }}`, dbt_project.yml being rendered with vars and env_var), which gds does
 * not, so the dispatch is unknown, as without dbt_project.yml.
 */
function readOrder(
  namespace: string,
  macros: NonNullable<TestContext['macros']>,
): readonly string[] | undefined {
  const order = macros.dispatch?.get(namespace);
  return order?.some((entry) => JINJA.test(entry)) === true ? undefined : order;
}

/**
 * The macros a mapped test dispatches and their namespace (dbt's tests `dbt`), in the order its SQL reaches them:
 * dbt's and dbt_utils' their own macro; dbt_expectations' (whose tests are no dispatched macros) regexp_instr
 * for match_regex, and each helper of the package its SQL goes through that dispatches in the package's
 * namespace (expectationsDispatches). None for a test gds does not map.
 */
function testDispatches(
  test: ManifestTest,
  kind: string,
  context: TestContext,
): Array<{ namespace: string; macro: string; byPackages?: true }> {
  if (!MAPPED_KINDS.has(kind) || test.name === undefined) return [];
  const namespace = test.namespace ?? 'dbt';
  if (namespace !== 'dbt_expectations') return [{ namespace, macro: `test_${test.name}` }];
  const helpers = expectationsDispatches(test.name, context).dispatched;
  const own = kind === 'dbt_expectations.expect_column_values_to_match_regex' ? ['regexp_instr'] : [];
  const expectations = context.macros?.expectations;
  return [...new Set([...own, ...helpers])].map((macro) => ({
    namespace,
    macro,
    ...(expectations?.get(macro)?.byPackages === true ? { byPackages: true as const } : {}),
  }));
}

/**
 * What dbt_expectations' test `name` goes through on the way to its SQL, read from the package's macros
 * (Manifest.expectationsMacros): `dispatched`, the helpers that adapter.dispatch in the dbt_expectations
 * namespace (expression_is_true, truth_expression, ignore_row_if_expression, …), each followed into the
 * package's own implementation for the adapter (default__expression_is_true), which dbt runs where no other
 * package's is (else overridingMacro unmaps the test); `typeCalls`, the type macros they call (dbt.type_string).
 */
function expectationsDispatches(name: string, context: TestContext): ExpectationsWalk {
  const macros = context.macros?.expectations;
  if (macros === undefined) return { dispatched: [], typeCalls: [] };
  // Each test of a kind walks the same macros, four times (overridingMacro, undispatchable, untypable,
  // unreadDispatch): walked once per manifest, adapter and test.
  let walks = expectationsWalks.get(macros);
  if (walks === undefined) expectationsWalks.set(macros, (walks = new Map()));
  const key = `${context.adapter ?? ''}\0${name}`;
  const known = walks.get(key);
  if (known !== undefined) return known;
  const walk = walkExpectations(name, macros, context.adapter);
  walks.set(key, walk);
  return walk;
}

/** What expectationsDispatches answers. */
interface ExpectationsWalk {
  dispatched: readonly string[];
  typeCalls: readonly string[];
}

const expectationsWalks = new WeakMap<
  ReadonlyMap<string, ExpectationsMacro>,
  Map<string, ExpectationsWalk>
>();

/** expectationsDispatches' walk from test_`name` through `macros` on `adapter`. */
function walkExpectations(
  name: string,
  macros: ReadonlyMap<string, ExpectationsMacro>,
  adapter: string | undefined,
): ExpectationsWalk {
  const dispatched: string[] = [];
  const typeCalls: string[] = [];
  const seen = new Set<string>();
  const queue: string[] = [];
  // A macro called: one that dispatches is entered through the package's implementation for the adapter.
  const call = (called: string): void => {
    if (macros.get(called)?.dispatched !== true) {
      queue.push(called);
      return;
    }
    dispatched.push(called);
    const runs = dispatchPrefixes(adapter)
      .map((prefix) => `${prefix}__${called}`)
      .find((implementation) => macros.has(implementation));
    if (runs !== undefined) queue.push(runs);
  };
  call(`test_${name}`);
  for (let macro = queue.shift(); macro !== undefined; macro = queue.shift()) {
    if (seen.has(macro)) continue;
    seen.add(macro);
    for (const called of macros.get(macro)?.calls ?? []) {
      const [namespace = '', helper = ''] = called.split('.');
      if (namespace === 'dbt_expectations') call(helper);
      else typeCalls.push(called);
    }
  }
  return { dispatched: [...new Set(dispatched)], typeCalls: [...new Set(typeCalls)] };
}

/** Why dbt's test errors where the project's search_order dispatches a macro of it to nothing (missingImplementation). */
function undispatchable(test: ManifestTest, kind: string, context: TestContext): string | undefined {
  for (const { namespace, macro, byPackages } of testDispatches(test, kind, context)) {
    // dbt 0.20's packages list always ends with the package itself: a search order is not read there.
    if (byPackages === true) continue;
    const why = missingImplementation(namespace, macro, context);
    if (why !== undefined)
      return macro === `test_${test.name ?? ''}`
        ? why
        : `its SQL goes through ${namespace}.${macro}(), dispatched in ${namespace}: ${why}`;
  }
  return undefined;
}

/**
 * Why dbt's test errors where its macro calls a cross-database type macro (not_null_proportion's
 * `dbt.type_numeric()`, be_in_set's `dbt.type_string()`) that the project's search_order for that macro's
 * namespace dispatches to nothing (missingImplementation). The macros read are the test's own package's, the
 * ones gds maps (another package's that dbt runs instead unmaps the test already: overridingMacro).
 */
function untypable(test: ManifestTest, kind: string, context: TestContext): string | undefined {
  const calls = context.macros?.typeCalls;
  if (calls === undefined || !MAPPED_KINDS.has(kind) || test.name === undefined) return undefined;
  const pkg = test.namespace ?? 'dbt';
  const called = [`${pkg}.test_${test.name}`, `${pkg}.default__test_${test.name}`].flatMap(
    (caller) => calls.get(caller) ?? [],
  );
  if (pkg === 'dbt_expectations') called.push(...expectationsDispatches(test.name, context).typeCalls);
  for (const call of called) {
    const [namespace = '', macro = ''] = call.split('.');
    const why = missingImplementation(namespace, macro, context);
    if (why !== undefined) return `its SQL calls ${call}(), dispatched in ${namespace}: ${why}`;
  }
  return undefined;
}

/**
 * Why adapter.dispatch(`macro`, `namespace`) fails, or undefined: the project's search_order for the namespace
 * lists no package that implements it (with any prefix) where the manifest holds an implementation elsewhere,
 * so dbt raises "In dispatch: No macro named … found within namespace" and the test never passes in dbt.
 */
function missingImplementation(namespace: string, macro: string, context: TestContext): string | undefined {
  const macros = context.macros;
  const order = macros === undefined ? undefined : readOrder(namespace, macros);
  if (macros === undefined || order === undefined || dispatchedTo(namespace, macro, context) !== undefined)
    return undefined;
  const held = dispatchPrefixes(context.adapter).some(
    (prefix) => definers(`${prefix}__${macro}`, macros.implementations).length > 0,
  );
  if (!held) return undefined;
  const internal = order.filter((pkg) => isAdapterPackage(pkg, context.adapter));
  const passedOver =
    internal.length === 0 ? '' : ` (${internal.join(', ')}: dbt's own, which dispatch searches only as dbt)`;
  return (
    `dbt_project.yml's dispatch: search_order for ${namespace} (${order.join(', ')}) lists no package implementing ${macro}${passedOver}, ` +
    `so dbt's test errors (In dispatch: No macro named '${macro}' found within namespace: '${namespace}') and never passes: ` +
    `list the package that implements it (${namespace === 'dbt' ? 'dbt' : namespace}) in the search order`
  );
}

/**
 * The implementation adapter.dispatch(`macro`, `namespace`) runs, `pkg` its package (`dbt` for dbt's own), or
 * undefined: none found, or the manifest does not tell the root project and no search_order the packages.
 * dbt-core (BaseDatabaseWrapper.dispatch, _get_search_packages) searches the project's `dispatch:`
 * search_order for the namespace (dbt_project.yml) when it sets one, exactly the packages it lists (an adapter's
 * own package, dbt_postgres, found only as `dbt`: isAdapterPackage), else the root project, then the
 * namespace's package (`dbt`: dbt's own, MacroNamespace.get_from_package), each package with every prefix in
 * turn: `<adapter>__`, its parent's, then `default__`.
 */
function dispatchedTo(
  namespace: string,
  macro: string,
  context: TestContext,
): { pkg: string; macro: string } | undefined {
  const macros = context.macros;
  if (macros === undefined) return undefined;
  const root = macros.rootProject;
  const order = readOrder(namespace, macros) ?? (root === undefined ? undefined : [root, namespace]);
  for (const searched of order ?? []) {
    if (isAdapterPackage(searched, context.adapter)) continue;
    for (const prefix of dispatchPrefixes(context.adapter)) {
      const name = `${prefix}__${macro}`;
      const pkg = definers(name, macros.implementations).find((p) =>
        searched === 'dbt' ? isDbtOwn(p, context.adapter) : p === searched,
      );
      if (pkg !== undefined) return { pkg: searched === 'dbt' ? 'dbt' : pkg, macro: `macro.${pkg}.${name}` };
    }
  }
  return undefined;
}

/** Each manifest's implementations by macro name: the packages defining it (read once, for every test). */
const packagesByMacro = new WeakMap<ReadonlySet<string>, Map<string, string[]>>();

/** The packages of `implementations` (`package.macro`) that define `macro`. */
function definers(macro: string, implementations: ReadonlySet<string>): string[] {
  let index = packagesByMacro.get(implementations);
  if (index === undefined) {
    index = new Map();
    for (const id of implementations) {
      const dot = id.indexOf('.');
      const name = id.slice(dot + 1);
      index.set(name, [...(index.get(name) ?? []), id.slice(0, dot)]);
    }
    packagesByMacro.set(implementations, index);
  }
  return index.get(macro) ?? [];
}

/**
 * The macro of a package that dbt runs for one of its own, `macro` (called by its bare name, which any
 * package's macro of that name overrides, the root project's first) and its dispatch in the namespace `dbt`,
 * when it is not dbt's (or its adapter's). Without a `dispatch:` search_order for `dbt`, dbt-core searches the
 * root project, then dbt's own packages (`dbt` is among the project's dependencies): another package's
 * `default__test_unique` is never dispatched to, and the root project's `default__` comes before
 * dbt-bigquery's `bigquery__` (dispatchedTo). Where the manifest does not tell the root project (and no
 * search_order the packages), any package other than dbt's is taken for it, the first prefix found deciding.
 * `bare`: how the bare name is found: a generic test's macro by dbt's MacroResolver (any package's before
 * dbt's), or `context`, a macro the test's SQL calls (get_where_subquery), in the node's macro namespace: the
 * root project's, then dbt's (MacroNamespaceBuilder puts no other package's macro under its bare name).
 */
function globalOverride(
  macro: string,
  context: TestContext,
  bare: 'resolver' | 'context' = 'resolver',
): Override | undefined {
  const macros = context.macros;
  if (macros === undefined) return undefined;
  const implementations = macros.implementations;
  const root = macros.rootProject;
  const own = definers(macro, implementations).find((pkg) =>
    bare === 'context' && root !== undefined ? pkg === root : !isDbtOwn(pkg, context.adapter),
  );
  if (own !== undefined) return { macro: `macro.${own}.${macro}` };
  if (root !== undefined || readOrder('dbt', macros) !== undefined) {
    const found = dispatchedTo('dbt', macro, context);
    return found === undefined || found.pkg === 'dbt'
      ? undefined
      : { macro: found.macro, ...dispatchOf('dbt', macros) };
  }
  for (const prefix of dispatchPrefixes(context.adapter)) {
    const packages = definers(`${prefix}__${macro}`, implementations);
    const other = packages.find((pkg) => !isDbtOwn(pkg, context.adapter));
    if (other !== undefined) return { macro: `macro.${other}.${prefix}__${macro}` };
    if (packages.length > 0) return undefined;
  }
  return undefined;
}

/** The column dbt's SQL reaches with the name a test writes, or why there is none. */
function columnOf(written: string, context: TestContext): { name: string } | { error: string } {
  const found = context.exactColumns
    ? reachedColumn(context.columns, written, context.adapter)
    : mapped(findColumn(context.columns, written));
  // dbt writes column_name into its SQL as it is, so a test may name an expression (coalesce(a, b)).
  if (found === undefined && !/^\s*(?:"[^"]*"|`[^`]*`|\[[^\]]*\]|[\p{L}\p{N}_$]+)\s*$/u.test(written))
    return {
      error: `its column_name ${written.trim()} is an SQL expression, which dbt tests as it is; gds maps a test of one of the table's columns`,
    };
  if (found === undefined)
    return {
      error: `the table has no column ${JSON.stringify(written)} (its columns: ${context.columns.join(', ')})`,
    };
  if ('name' in found) return found;
  return {
    error: otherCase(
      `column ${written.trim()}`,
      written,
      found,
      context.adapter,
      "the table's column",
      (quoted) =>
        quoted
          ? 'name the column in the case the warehouse holds it'
          : 'name the column as the warehouse does, or set quote: true on it in dbt',
    ),
  };
}

/**
 * The column of a relationships test's target that dbt's `select {{ field }}` reaches: as the adapter
 * resolves the name where the catalog lists the target's columns, else matched without case (or folded).
 */
function targetColumnOf(
  field: string,
  target: ReferenceTarget,
  context: TestContext,
  constraint = false,
): { name: string } | { error: string } {
  const relation = `${target.schema}.${target.table}`;
  if (target.columns === undefined) return { name: context.normaliseName(field) };
  if (!target.exactColumns)
    return { name: findColumn(target.columns, field) ?? context.normaliseName(field) };
  const found = reachedColumn(target.columns, field, context.adapter);
  if (found === undefined)
    return {
      error: `${relation} has no column ${JSON.stringify(field)} (its columns: ${target.columns.join(', ')}), so ${constraint ? "dbt's foreign key on it" : "dbt's query of its field:"} fails`,
    };
  if ('name' in found) return found;
  return {
    error: otherCase(
      `${constraint ? "foreign key's column" : 'field'} ${field.trim()}`,
      field,
      found,
      context.adapter,
      `the column of ${relation}`,
      () =>
        `write ${constraint ? "the foreign key's column (to_columns, or the column of its SQL)" : 'field:'} as the warehouse names the column, quoted ("${found.other}")`,
      constraint ? "dbt's build of the table fails on its foreign key" : undefined,
    ),
  };
}

/** Whether a test writes a name quoted (`"Email"`, `` `Email` ``, `[Email]`). */
const isQuotedName = (written: string): boolean => /^["`[]/.test(written.trim());

/** Why dbt's test errors where the name it writes reaches no column: the table holds it only in another case. */
function otherCase(
  what: string,
  written: string,
  found: { other: string; reads: string },
  adapter: string | undefined,
  holder: string,
  fix: (quoted: boolean) => string,
  fails = "dbt's test errors",
): string {
  const quoted = isQuotedName(written);
  return (
    `its ${what} is ${quoted ? 'quoted' : 'unquoted'}, so dbt's SQL on ${adapter ?? 'its adapter'} reads it as ${found.reads}; ` +
    `${holder} is "${found.other}" (another case), so ${fails}: ${fix(quoted)}`
  );
}

const mapped = (name: string | undefined) => (name === undefined ? undefined : { name });

function grain(
  columns: string[],
  test: ManifestTest,
  condition: string | undefined,
  nulls: NullRows,
): Outcome {
  if (condition !== undefined)
    return refused('a where: condition: a Gate 1 uniqueness check has no condition');
  return { kind: 'grain', columns, severity: SEVERITY[test.severity], nulls };
}

function predicate(sql: string, context: TestContext): Outcome {
  if (sql.length > MAX_SQL_LENGTH)
    return refused(`the predicate would be longer than ${MAX_SQL_LENGTH} characters`);
  const problems = checkPredicateSql(sql, { columns: context.columns, grammar: context.grammar }).filter(
    (f) => f.severity === 'error',
  );
  if (problems.length > 0)
    return refused(
      `as a Gate 1 predicate (${sql}) it is refused: ${problems[0]?.message ?? 'not a safe predicate'}`,
    );
  const adapter = context.adapter ?? '';
  if (FRACTION_DIVISION.has(adapter) && sql.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"/g, '').includes('/'))
    return refused(
      `its SQL divides (/): on ${adapter} an integer divided by an integer keeps its fraction (7 / 2 is 3.5), in PostgreSQL, where Gate 1 runs, it is truncated (3), so the predicate could fail rows dbt's test passes or pass rows it fails`,
    );
  return { kind: 'predicate', sql };
}

/** A column type of numbers, as catalogs write it (INT64, NUMBER(38,0), decimal(10,2), double precision, …). */
const NUMBER_TYPE =
  /^(?:(?:big|small|tiny|medium|hug)?int(?:eger|\d+)?|byteint|long|short|numeric|decimal|number|bignumeric|bigdecimal|float\d*|double|real|money|smallmoney)\b/i;
/** Of those, the floating-point ones (Snowflake's FLOAT, FLOAT4, FLOAT8, DOUBLE, DOUBLE PRECISION, REAL). */
const FLOAT_TYPE = /^(?:float\d*|double|real)\b/i;
/** Of those, the integers (whose values every warehouse prints as canonical integers). */
const INTEGER_TYPE = /^(?:(?:big|small|tiny|medium|hug)?int(?:eger|\d+)?|byteint|long|short)\b/i;
/** The adapters that read a quoted value compared with a column as a value of the column's type, as PostgreSQL. */
const LITERAL_AS_COLUMN_TYPE: ReadonlySet<string> = new Set([
  'postgres',
  'redshift',
  'duckdb',
  'materialize',
  'greenplum',
  'risingwave',
]);
/** The adapters that never compare a number with a string (no implicit cast): why, as their documentation says. */
const NO_NUMBER_STRING: Readonly<Record<string, string>> = {
  bigquery:
    'a STRING is coerced to no number type, a string literal to a date or time type only, so IN has no matching signature',
  trino: 'there is no implicit cast between numbers and varchar',
  athena: 'its Trino engine has no implicit cast between numbers and varchar',
};

/**
 * What values accepted_values (and its kin) writes quoted (quote: true, its default) mean on a number or a
 * boolean column. Gate 1 runs `col IN ('1', '2')` in PostgreSQL, which reads each as a value of the column's
 * type ('t', 'yes', 'on' and '1' are true there). BigQuery and Trino compare no number nor boolean with a
 * string: dbt's test errors, so it is refused. Elsewhere the warehouse coerces one side or the other (Spark and
 * Databricks outside ANSI mode compare numbers as text, so '01' is not 1; Snowflake converts only 'true' and
 * 'false' to a boolean implicitly): the predicate is kept, with a warning, unless each value is an integer as an
 * integer column prints it, or 'true' or 'false', where both readings agree; on a Snowflake number, as
 * onSnowflakeNumber decides. Undefined: a column of another (or no) type, or PostgreSQL's reading.
 */
function quotedOnNumbersOrBooleans(
  column: string,
  literals: readonly string[],
  context: TestContext,
): { refused?: string; warning?: string } | undefined {
  const type = context.columnTypes?.get(column.toLowerCase())?.trim() ?? '';
  const adapter = context.adapter ?? '';
  const kind = typeKind(type);
  if ((kind !== 'number' && kind !== 'boolean') || LITERAL_AS_COLUMN_TYPE.has(adapter)) return undefined;
  const numbers = kind === 'number';
  const written = `its column ${column} is ${type} and dbt writes each value quoted (${literals.join(', ')})`;
  const why = (numbers ? NO_NUMBER_STRING : NO_BOOLEAN_STRING)[adapter];
  if (why !== undefined)
    return {
      refused: `${written}: on ${adapter} ${why}, so dbt's test errors; set quote: false in the test to compare ${numbers ? 'numbers' : 'booleans (values: [true, false])'}`,
    };
  if (numbers && adapter === 'snowflake') {
    const snowflake = onSnowflakeNumber(written, literals, FLOAT_TYPE.test(type));
    if (snowflake !== 'warn') return snowflake;
  }
  const agree = numbers
    ? INTEGER_TYPE.test(type) && literals.every((l) => /^'-?(?:0|[1-9][0-9]*)'$/.test(l))
    : literals.every((l) => l === "'true'" || l === "'false'");
  if (agree) return undefined;
  return {
    warning:
      `${written}: Gate 1 reads each in PostgreSQL as ${numbers ? "a value of the column's type" : "a boolean ('t', 'yes', 'on' and '1' are true there)"}, while on ${adapter || 'its adapter'} ` +
      (numbers
        ? "a number compared with a string may be compared otherwise (Spark and Databricks outside ANSI mode compare them as text, so '01' or '1.0' is not 1), "
        : "a boolean compared with a string may be compared otherwise (Snowflake converts only 'true' and 'false' implicitly), ") +
      `so the gate may pass rows the test fails or fail rows it passes; ${numbers ? 'set quote: false in the test to compare numbers in both' : "write 'true' and 'false', or set quote: false"}`,
  };
}

/**
 * Snowflake compares a number with a string by converting the string to a number (its catalog types every
 * fixed-point column NUMBER, integers too): an integer string is then the integer PostgreSQL reads it as too, so
 * both agree (undefined); a string that is no number makes Snowflake's conversion fail (Numeric value '…' is not
 * recognized), so dbt's test errors (refused). On a FLOAT column (`float`) the string becomes a FLOAT, and 'NaN',
 * 'inf', 'infinity' are its special values, as PostgreSQL's float input (float8in) reads them too: any case, the
 * last two with a sign, white space around each (both find NaN equal to NaN): they agree as integers do; on
 * NUMBER they are no number. A decimal or an exponent is converted to a scale gds does not know from NUMBER:
 * 'warn', the general warning.
 */
function onSnowflakeNumber(
  written: string,
  literals: readonly string[],
  float: boolean,
): { refused: string } | 'warn' | undefined {
  // C's isspace, which float8in skips before and after the value.
  const special = (l: string) =>
    float && /^'[ \t\n\v\f\r]*(?:nan|[+-]?inf(?:inity)?)[ \t\n\v\f\r]*'$/i.test(l);
  const notNumber = literals.find(
    (l) => !special(l) && !/^'\s*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?\s*'$/i.test(l),
  );
  if (notNumber !== undefined)
    return {
      refused: `${written}: on snowflake a string compared with a number is converted to a number, and ${notNumber} is none (Numeric value is not recognized), so dbt's test errors; write numbers, or test a text column`,
    };
  return literals.every((l) => special(l) || /^'[+-]?[0-9]+'$/.test(l)) ? undefined : 'warn';
}

/**
 * The kinds of column type no warehouse here compares with one another without a cast or a coercion. PostgreSQL
 * compares a date with a timestamp, but neither with a time of day; and money with no other number.
 */
type TypeKind = 'number' | 'money' | 'text' | 'boolean' | 'date' | 'time of day';

/** The kind of a column type as catalogs write it (INT64, VARCHAR(16777216), BOOL, TIMESTAMP_NTZ, …), where gds knows it. */
function typeKind(type: string | undefined): TypeKind | undefined {
  const written = type?.trim() ?? '';
  if (/^(?:small)?money\b/i.test(written)) return 'money';
  if (NUMBER_TYPE.test(written)) return 'number';
  if (
    /^(?:string|text|varchar|char|character|nvarchar|nchar|varchar2|nvarchar2|bpchar|citext|clob|nclob|ntext|tinytext|mediumtext|longtext)\b/i.test(
      written,
    )
  )
    return 'text';
  if (/^bool(?:ean)?\b/i.test(written)) return 'boolean';
  if (/^time(?:tz)?\b/i.test(written)) return 'time of day';
  if (/^(?:date|time|smalldatetime)/i.test(written)) return 'date';
  return undefined;
}

/**
 * The adapters whose SQL compares no value of one kind with another's (a number with a string, a boolean with
 * either), so dbt's test comparing them errors: why, as their documentation says.
 */
const NO_CROSS_KIND: Readonly<Record<string, string>> = {
  bigquery:
    'no type is coerced to one of another kind (an INT64 only to NUMERIC, BIGNUMERIC or FLOAT64, a STRING or BOOL to none)',
  trino: 'there is no implicit cast between them',
  athena: 'its Trino engine has no implicit cast between them',
  postgres: 'no operator compares them without a cast',
};

/**
 * Why a relationships test cannot be a Gate 1 reference where its column and the referenced one are of two kinds
 * (an INT64 child, a STRING parent): dbt's SQL compares them (`child.from_field = parent.to_field`), which
 * errors where the warehouse compares no such pair, and elsewhere compares after coercing one side, while Gate 1
 * compares them in PostgreSQL, which has no operator between them. Undefined: one kind, or a type gds does not
 * know.
 */
function comparedTypes(
  column: string,
  reference: string,
  target: ReferenceTarget,
  targetColumn: string,
  context: TestContext,
): string | undefined {
  const type = context.columnTypes?.get(column.toLowerCase())?.trim();
  const parentType = target.types?.get(targetColumn.toLowerCase())?.trim();
  const kind = typeKind(type);
  const parentKind = typeKind(parentType);
  if (kind === undefined || parentKind === undefined || kind === parentKind) return undefined;
  const adapter = context.adapter ?? '';
  const written = `its column ${column} is ${type ?? ''} and the referenced ${reference} is ${parentType ?? ''}`;
  const why = NO_CROSS_KIND[adapter];
  if (why !== undefined)
    return `${written}: on ${adapter} ${why}, so dbt's test errors; give both columns one type (cast one in its model)`;
  // dbt's test passes after a coercion here, but Gate 1's reference check (`p.id = r.customer_id`) runs in
  // PostgreSQL, which has no operator between two kinds: that check would fail to run on every gate run.
  return (
    `${written}: on ${adapter || 'its adapter'} dbt's test compares them after coercing one to the other's type ` +
    `(Snowflake a VARCHAR to a NUMBER), but Gate 1 checks the reference in PostgreSQL, which compares no ${kind} ` +
    `with a ${parentKind} without a cast, so the check would fail on every run; give both columns one type (cast one in its model)`
  );
}

/** The adapters that never compare a boolean with a string: why, as their documentation says. */
const NO_BOOLEAN_STRING: Readonly<Record<string, string>> = {
  bigquery: 'a STRING, a string literal too, is coerced to no BOOL, so IN has no matching signature',
  trino: 'there is no implicit cast between boolean and varchar',
  athena: 'its Trino engine has no implicit cast between boolean and varchar',
};

/** The kind of a value written as it is (quote: false): a number or a boolean literal, else undefined. */
function literalKind(literal: string): TypeKind | undefined {
  if (/^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i.test(literal)) return 'number';
  return /^(?:true|false)$/i.test(literal) ? 'boolean' : undefined;
}

/**
 * Why values accepted_values writes as they are (quote: false) cannot be a Gate 1 predicate: a number or a
 * boolean compared with a column of another kind (`status in (1, 2)` on text), which PostgreSQL, where Gate 1
 * runs, compares without a cast on no warehouse's behalf (operator does not exist: text = integer), so the
 * check would fail on every run. Undefined: each value of the column's kind, or a kind gds does not know.
 */
function rawOfOtherKind(
  column: string,
  literals: readonly string[],
  context: TestContext,
): { refused?: string; warning?: string } | undefined {
  const type = context.columnTypes?.get(column.toLowerCase())?.trim();
  const kind = typeKind(type);
  if (kind === undefined || kind === 'date' || kind === 'time of day') return undefined;
  const other = literals.map(literalKind).find((k) => k !== undefined && k !== kind);
  if (other === undefined) return undefined;
  const adapter = context.adapter ?? '';
  const alsoDbt =
    NO_CROSS_KIND[adapter] === undefined
      ? ''
      : `; on ${adapter} ${NO_CROSS_KIND[adapter]}, so dbt's test errors too`;
  return {
    refused:
      `its column ${column} is ${type ?? ''} and quote: false writes ${literals.join(', ')} as they are: PostgreSQL, where Gate 1 runs, ` +
      `compares no ${kind} with a ${other} without a cast, so the check would fail on every run${alsoDbt}; ` +
      `write the values as ${kind === 'text' || kind === 'money' ? 'strings (quote: true)' : `${kind} literals`}`,
  };
}

/** The clock a predicate may read (PostgreSQL's functions of the current time, on Gate 1's allow-list). */
const CLOCK = /\bnow\s*\(\s*\)|\b(?:current_date|current_timestamp|current_time|localtimestamp|localtime)\b/i;
/** PostgreSQL's special date and time inputs that read the clock (`'today'::date`, `created_at > 'now'`). */
const CLOCK_INPUT = /^\s*(?:now|today|tomorrow|yesterday)\s*$/i;
const QUOTED = /'(?:[^']|'')*'?|"(?:[^"]|"")*"?/g;

/**
 * How a predicate reads the clock, or undefined: a function of the current time, age() of one value (the time
 * since it, counted from today), or a string PostgreSQL reads as a date or time of the clock ('today').
 */
function clockRead(sql: string): string | undefined {
  const masked = sql.replace(QUOTED, "''");
  const call = CLOCK.exec(masked)?.[0];
  if (call !== undefined) return call.replace(/\s+/g, '');
  for (const age of masked.matchAll(/\bage\s*\(/gi)) {
    let depth = 1;
    let i = age.index + age[0].length;
    for (; i < masked.length && depth > 0 && !(depth === 1 && masked[i] === ','); i++)
      depth += masked[i] === '(' ? 1 : masked[i] === ')' ? -1 : 0;
    if (depth === 0) return 'age(…) of one value';
  }
  return sql.match(QUOTED)?.find((q) => q.startsWith("'") && CLOCK_INPUT.test(q.slice(1, -1)));
}

/**
 * Why a predicate reading the clock (a where: `created_at >= current_date - 7`) may check other rows than
 * dbt's test, or undefined: Gate 1 evaluates it as written when the gate runs, as it does every predicate,
 * where dbt evaluated it in the warehouse when the test ran, in that session's time zone.
 */
function clockWarning(sql: string, testName: string): string | undefined {
  const read = clockRead(sql);
  if (read === undefined) return undefined;
  return (
    `its SQL reads the clock (${read}): Gate 1 evaluates it when the gate runs, in UTC (docs/gate1.md), ` +
    "where dbt evaluated it in the warehouse when the test ran, in that session's time zone (Snowflake's " +
    "default America/Los_Angeles, BigQuery's UTC), so the rows it checks follow the gate's clock and may " +
    `differ from those dbt checked (by a day near midnight); to plan without it: --exclude ${testName}`
  );
}

/**
 * The adapters whose `/` of two integers is a fraction (Snowflake's NUMBER, BigQuery's FLOAT64, DuckDB since
 * 0.8, Spark and Databricks' double, MySQL's decimal, ClickHouse's Float64, Oracle's NUMBER); PostgreSQL,
 * Redshift, SQL Server and Trino truncate it.
 */
const FRACTION_DIVISION: ReadonlySet<string> = new Set([
  'snowflake',
  'bigquery',
  'duckdb',
  'databricks',
  'spark',
  'mysql',
  'mariadb',
  'clickhouse',
  'oracle',
]);

/**
 * How the warehouse rounds not_null_proportion's quotient, `sum(case when col is null then 0 else 1 end) /
 * cast(count(*) as numeric)` (dbt_utils 0.x to 1.1; later `as {{ dbt.type_numeric() }}`, numeric(28,6)): a
 * number, the decimals to which it rounds half up; `exact`, as exact as the gate's share of NULLs; `{ kept,
 * rows }`, that many decimals, rounded or truncated, of fewer than `rows` rows; undefined, gds does not know.
 * - PostgreSQL's numeric division keeps at least 16 significant digits: exact.
 * - Snowflake's NUMBER division has the scale max(s1, min(s1 + 6, 12)), 6 for the integer sum, rounded.
 * - BigQuery's NUMERIC has 9 decimals, rounded half away from zero.
 * - DuckDB divides a DECIMAL (and a HUGEINT sum) as DOUBLE, 0.9999996 for 1 NULL in 2,500,000 rows, and
 *   compares it with at_least as DOUBLE: as the gate's share of NULLs, exact.
 * - Spark and Databricks (Spark's DecimalPrecision rules, spark.sql.decimalOperations.allowPrecisionLoss true,
 *   its default): the BIGINT sum is DECIMAL(20,0); `numeric` is DECIMAL(10,0), and e1 / e2 has the scale
 *   max(6, s1 + p2 + 1) = 11 and the precision p1 - s1 + s2 + scale = 31; numeric(28,6) (dbt-spark and
 *   dbt-databricks render dbt's default__type_numeric) gives scale 29 and precision 55, above 38, so
 *   adjustPrecisionScale keeps 38 - (55 - 29) = 12 decimals (at least 6); rounded HALF_UP.
 * - Redshift ("Computations with numeric values": an INT8 and a DECIMAL divide as DECIMAL, of scale
 *   max(4, s1 + p2 - s2 + 1), at most 38): `numeric` is DECIMAL(18,0), 19 decimals; numeric(28,6) 23. Whether
 *   it rounds or truncates is not documented.
 * - SQL Server, Synapse, Fabric ("Precision, scale, and length (Transact-SQL)": the INT sum is decimal(10,0);
 *   e1 / e2 has the scale max(6, s1 + p2 + 1), and above a precision of 38, with an integral part below 32,
 *   min(scale, 38 - (precision - scale))): `numeric` is numeric(18,0), 19 decimals; numeric(28,6) 22, "might be
 *   rounded".
 */
function proportionRounding(
  context: TestContext,
): number | 'exact' | { kept: number; rows: number } | undefined {
  const adapter = context.adapter ?? '';
  if (adapter === 'postgres' || adapter === 'duckdb') return 'exact';
  if (adapter === 'snowflake') return 6;
  if (adapter === 'bigquery') return 9;
  const divisor = proportionDivisor(context);
  if (divisor === undefined) return undefined;
  if (adapter === 'spark' || adapter === 'databricks') return divisor === 'numeric' ? 11 : 12;
  // Redshift's sum and count are BIGINT: a row count JavaScript's numbers hold exactly (below 2^53); SQL Server's
  // are INT, whose sum and count(*) fail past 2^31 - 1 rows.
  if (adapter === 'redshift') return { kept: divisor === 'numeric' ? 19 : 23, rows: 2 ** 53 };
  if (adapter === 'sqlserver' || adapter === 'synapse' || adapter === 'fabric')
    return { kept: divisor === 'numeric' ? 19 : 22, rows: 2 ** 31 };
  return undefined;
}

/**
 * What not_null_proportion's SQL casts count(*) to on the adapter: `numeric`, `numeric(28,6)` (dbt.type_numeric(),
 * dispatched to dbt's default__type_numeric), or undefined when the manifest does not tell (no dbt_utils macro,
 * another cast, or a type_numeric of the root project or the adapter's package dispatched before dbt's).
 */
function proportionDivisor(context: TestContext): 'numeric' | 'numeric(28,6)' | undefined {
  const cast = context.notNullProportionCast;
  if (cast === 'numeric') return 'numeric';
  const macros = context.macros;
  if (cast !== 'type_numeric' || macros === undefined) return undefined;
  if (macros.rootProject !== undefined || readOrder('dbt', macros) !== undefined)
    return dispatchedTo('dbt', 'type_numeric', context)?.macro.startsWith('macro.dbt.')
      ? 'numeric(28,6)'
      : undefined;
  // The manifest does not tell the root project: any package but dbt's and dbt_utils' is taken for it.
  const first = dispatchPrefixes(context.adapter)
    .flatMap((prefix) =>
      definers(`${prefix}__type_numeric`, macros.implementations).filter((pkg) => pkg !== 'dbt_utils'),
    )
    .at(0);
  return first === undefined || first === 'dbt' ? 'numeric(28,6)' : undefined;
}

/** Why a not_null_proportion on an adapter gds knows no rounding of may mean otherwise in Gate 1. */
function unknownProportionScale(
  adapter: string | undefined,
  kept: number | undefined,
  asFloat: boolean,
): string {
  const on = `on ${adapter ?? 'its adapter'}`;
  const why =
    kept === undefined
      ? `${on} gds does not know to how many decimals the warehouse rounds the proportion dbt_utils ` +
        'divides (sum(…) / cast(count(*) as numeric))'
      : asFloat
        ? `${on} its at_least, written with an exponent, may be read as a float, and the proportion dbt_utils divides ` +
          `(of ${kept} decimals) compared as one, of some 15 decimals, and its at_least has so many decimals that this rounding may decide`
        : `${on} the proportion dbt_utils divides keeps ${kept} decimals, rounded or truncated ` +
          '(its documentation does not say), and its at_least has so many decimals that this rounding may decide';
  return (
    `${why}, and Gate 1 compares the share of NULLs exactly: where the ` +
    'warehouse rounds it (Snowflake to 6 decimals, so 1 NULL in 2,500,000 rows is a proportion of 1.000000, ' +
    "which passes at_least: 1), a column within that rounding of at_least passes dbt's test and fails the gate"
  );
}

/** A number as SQL reads it: `digits / 10^decimals`, and whether it is written with an exponent. */
interface SqlNumber {
  digits: number;
  decimals: number;
  exponent: boolean;
}

/**
 * What SQL reads where dbt_utils interpolates at_least or at_most (`not_null_proportion < {{ at_least }}`): a
 * string as written (PyYAML reads 1e-3, without a dot, as the string "1e-3"), a float as Python prints it
 * (9.5E-1 as 0.95, 1.0e-5 as 1e-05). Undefined when it is no unsigned decimal; a reason when it has more
 * digits than gds reads exactly (at most 15 decimals, of an integer below 2^53).
 */
function sqlNumber(value: unknown): SqlNumber | string | undefined {
  if (typeof value === 'number' && (!Number.isFinite(value) || value < 0)) return undefined;
  if (typeof value !== 'number' && typeof value !== 'string') return undefined;
  const written =
    typeof value === 'number'
      ? // Python prints an exponent below 1e-4 and from 1e16 on.
        { text: String(value), exponent: value !== 0 && (value < 1e-4 || value >= 1e16) }
      : { text: value, exponent: /e/i.test(value) };
  const parts = /^(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(written.text);
  if (parts === null || !/\d/.test(`${parts[1] ?? ''}${parts[2] ?? ''}`)) return undefined;
  const fraction = (parts[2] ?? '').replace(/0+$/, '');
  let decimals = fraction.length - Number(parts[3] ?? 0);
  let digits = `${parts[1] ?? ''}${fraction}`.replace(/^0+(?=\d)/, '');
  if (decimals < 0) {
    if (digits.length - decimals > 16) return 'has more digits than gds reads exactly';
    digits += '0'.repeat(-decimals);
    decimals = 0;
  }
  if (decimals > 15) return `has ${decimals} decimals; gds reads a limit of at most 15 exactly`;
  const exact = Number(digits);
  if (!Number.isSafeInteger(exact)) return 'has more digits than gds reads exactly';
  return { digits: exact, decimals, exponent: written.exponent };
}

/**
 * The share of NULLs above which not_null_proportion's `not_null_proportion < at_least` holds, computed in
 * decimal as dbt's SQL compares it: 1 - 0.9 is 0.1, where a float's is 0.09999999999999998 and would fail the
 * 10 % of NULLs dbt passes. With the proportion rounded half up to `scale` decimals, it is below at_least
 * exactly when it is below at_least rounded up to that scale less half its last digit: 1 - that, so at_least 1
 * on Snowflake fails above 0.0000005. at_least is a decimal in [0, 1] (also where written with an exponent,
 * which some warehouses read as a float: the proportion, of at most 12 decimals there, then compares as a
 * float in the same order, two decimals of at most 15 decimals in [0, 1] being more than a float's step apart).
 */
function nullShareLimit({ digits, decimals }: SqlNumber, scale: number | undefined): number {
  if (scale === undefined) {
    const unit = 10 ** decimals;
    return (unit - digits) / unit;
  }
  const step = decimals > scale ? 10 ** (decimals - scale) : 1;
  const roundedUp =
    decimals > scale
      ? (digits - (digits % step)) / step + (digits % step === 0 ? 0 : 1)
      : digits * 10 ** (scale - decimals);
  const unit = 10 ** (scale + 1);
  return Math.min(1, (unit - roundedUp * 10 + 5) / unit);
}

/** Why a test's value is not mapped: a number dbt may print otherwise, or not a plain value. */
function notPlain(what: string, value: unknown): string {
  return typeof value === 'number' && Number.isFinite(value)
    ? `its ${what} ${JSON.stringify(value)} may not be the number as dbt prints it (the manifest's JSON keeps ` +
        'neither 1.0 from 1, nor digits past 2^53, nor how Python writes an exponent)'
    : `its ${what} ${JSON.stringify(value)} is not a plain value`;
}

/**
 * A number as dbt's Jinja (Python) prints it, where JavaScript prints it alike: an integer within 2^53 (as
 * the manifest wrote it, 1.0 is read as 1), or a fraction Python writes without an exponent (from 1e-4 to
 * 1e16, where both print the shortest digits that read back).
 */
function printedAsDbt(value: number): string | undefined {
  if (Number.isSafeInteger(value)) return String(value);
  const size = Math.abs(value);
  return !Number.isInteger(value) && size >= 1e-4 && size < 1e16 ? String(value) : undefined;
}

/** A value as a SQL string literal (dbt's quote: true). */
function sqlString(value: unknown): string | undefined {
  const shown =
    typeof value === 'string'
      ? value
      : typeof value === 'number' && Number.isFinite(value)
        ? printedAsDbt(value)
        : typeof value === 'boolean'
          ? value
            ? 'True'
            : 'False'
          : undefined;
  return shown === undefined ? undefined : `'${shown.replaceAll("'", "''")}'`;
}

/** The adapters whose string literals read a backslash as itself (elsewhere it escapes the next character). */
const LITERAL_BACKSLASH: ReadonlySet<string> = new Set([
  'postgres',
  'duckdb',
  'trino',
  'athena',
  'sqlserver',
  'synapse',
  'fabric',
  'oracle',
  'exasol',
  'materialize',
]);

/**
 * The adapters whose string literals read a doubled quote as one quote ('it''s' is it's). BigQuery rejects it
 * (its strings escape a quote with a backslash); on the others gds does not know what it reads.
 */
const DOUBLED_QUOTE: ReadonlySet<string> = new Set([
  ...LITERAL_BACKSLASH,
  'snowflake',
  'redshift',
  'greenplum',
  'mysql',
  'mariadb',
]);

/**
 * Text dbt writes between single quotes unescaped (`'{{ value }}'`, as accepted_values with quote: true and
 * dbt_expectations' in_set and match_regex do), as the warehouse reads it: a doubled quote is one quote there;
 * any other quote ends the string early (`'O'Brien'` is a syntax error, `'a', 'b'` two values), and on most
 * warehouses other than PostgreSQL a backslash escapes what follows: dbt's SQL then fails or means other text.
 */
function readBetweenQuotes(
  value: string,
  adapter: string | undefined,
  what: string,
): { read: string } | { unquotable: string } {
  const written = `'${value}'`;
  const on = adapter ?? 'its adapter';
  if (!/^(?:[^']|'')*$/.test(value))
    return {
      unquotable: `its ${what} ${JSON.stringify(value)}: dbt writes it between single quotes unescaped (${written}), so its SQL fails or reads other text; double each quote in it ('' for ')${what === 'value' ? ' or set quote: false and write the literal' : ''}`,
    };
  if (value.includes('\\') && !LITERAL_BACKSLASH.has(adapter ?? ''))
    return {
      unquotable: `its ${what} ${JSON.stringify(value)}: dbt writes it between single quotes unescaped (${written}), and on ${on} a backslash in a string escapes the character after it, so dbt tests other text or its SQL fails`,
    };
  if (value.includes("''") && !DOUBLED_QUOTE.has(adapter ?? ''))
    return {
      unquotable: `its ${what} ${JSON.stringify(value)}: dbt writes it between single quotes unescaped (${written}), and on ${on} '' in a string is not one quote (BigQuery rejects it), so dbt's SQL fails or tests other text`,
    };
  return { read: value.replaceAll("''", "'") };
}

/** A value as dbt's accepted_values (and dbt_expectations' in_set) writes it with quote: true (readBetweenQuotes). */
function quotedAsDbt(
  value: unknown,
  adapter: string | undefined,
): string | { unquotable: string } | undefined {
  const literal = sqlString(value);
  if (typeof value !== 'string' || literal === undefined) return literal;
  const read = readBetweenQuotes(value, adapter, 'value');
  return 'read' in read ? `'${value}'` : read;
}

/**
 * The regex dbt_expectations writes (regexp_instr) as the warehouse reads it: between single quotes, unescaped,
 * except with is_raw on Snowflake (`$$…$$`, which holds any text but `$$`) and BigQuery (`r'…'`, where a
 * backslash is itself and a quote still ends the string).
 */
function regexAsDbt(
  regex: string,
  isRaw: boolean,
  adapter: string | undefined,
): { read: string } | { unquotable: string } {
  if (isRaw && adapter === 'snowflake')
    return regex.includes('$$')
      ? {
          unquotable: `its regex ${JSON.stringify(regex)}: with is_raw dbt writes it between $$ ($$${regex}$$), which it ends early`,
        }
      : { read: regex };
  if (isRaw && adapter === 'bigquery')
    return regex.includes("'")
      ? {
          unquotable: `its regex ${JSON.stringify(regex)}: with is_raw dbt writes it as a raw string (r'${regex}'), where a quote is not escaped, so its SQL fails or reads another regex`,
        }
      : { read: regex };
  return readBetweenQuotes(regex, adapter, 'regex');
}

/**
 * How the regex engine dbt_expectations' regexp_instr runs on each adapter reads a regex, where gds knows it:
 * `postgres` as PostgreSQL's `~` does (PostgreSQL itself); `posix` so but for `.`, which matches no newline
 * there and does in PostgreSQL (Snowflake's POSIX engine without its `s` flag); `re2` so, and its classes
 * (`\d`, `\w`, `\s`, `[[:alpha:]]`, …) hold ASCII characters only, where PostgreSQL's follow the database's
 * locale (`é` is `\w` there): RE2, on BigQuery and DuckDB. Redshift documents its POSIX `^` and `$` as
 * matching at a line's start and end.
 */
const REGEX_ENGINES: Readonly<Record<string, 'postgres' | 'posix' | 're2'>> = {
  postgres: 'postgres',
  snowflake: 'posix',
  bigquery: 're2',
  duckdb: 're2',
};

/** Why a regex test on an adapter gds knows no regex engine of is not mapped. */
function unknownRegexEngine(adapter: string | undefined): string {
  // dbt_expectations' spark__regexp_instr is length(regexp_extract(value, regex, 0)) (before: a CASE over
  // rlike that counted a NULL 0).
  if (adapter === 'spark' || adapter === 'databricks')
    return `on ${adapter} dbt_expectations counts the length of the first match (length(regexp_extract(…, 0))), so a value whose first match is empty text fails dbt's test and passes a pattern check, and its Java regex reads ^, $ and . otherwise than PostgreSQL`;
  return `gds does not know that ${adapter ?? 'its adapter'}'s regex engine reads a regex as PostgreSQL (where Gate 1 runs) does; it maps one on PostgreSQL, Snowflake, BigQuery and DuckDB`;
}

/**
 * Snowflake's classes as the ASCII ranges its documentation says they are (\d a decimal digit 0-9, \w a-z,
 * A-Z, _ or a digit): outside a bracket, and inside one. It does not say which characters \s and the POSIX
 * classes hold beyond ASCII: those are left as written, with a warning.
 */
const SNOWFLAKE_CLASSES: Readonly<Record<string, string>> = {
  d: '[0-9]',
  D: '[^0-9]',
  w: '[0-9A-Za-z_]',
  W: '[^0-9A-Za-z_]',
};
const SNOWFLAKE_BRACKET_CLASSES: Readonly<Record<string, string>> = { '\\d': '0-9', '\\w': '0-9A-Za-z_' };

/** RE2's classes as the ASCII ranges they are (RE2's syntax): outside a bracket, and inside one. */
const RE2_CLASSES: Readonly<Record<string, string>> = {
  d: '[0-9]',
  D: '[^0-9]',
  w: '[0-9A-Za-z_]',
  W: '[^0-9A-Za-z_]',
  s: '[\\t\\n\\f\\r ]',
  S: '[^\\t\\n\\f\\r ]',
};
const RE2_BRACKET_CLASSES: Readonly<Record<string, string>> = {
  '\\d': '0-9',
  '\\w': '0-9A-Za-z_',
  '\\s': '\\t\\n\\f\\r ',
  '[:alpha:]': 'A-Za-z',
  '[:digit:]': '0-9',
  '[:alnum:]': '0-9A-Za-z',
  '[:upper:]': 'A-Z',
  '[:lower:]': 'a-z',
  '[:space:]': '\\t\\n\\v\\f\\r ',
  '[:blank:]': '\\t ',
  '[:xdigit:]': '0-9A-Fa-f',
  '[:word:]': '0-9A-Za-z_',
};

/** What each of PostgreSQL's embedded options (`(?b)` at a regex's start; PostgreSQL 9.7.3.4) makes of the rest. */
const PG_EMBEDDED_OPTIONS: Readonly<Record<string, string>> = {
  b: 'a basic regex (BRE: + ? | ( ) are ordinary characters, \\( \\) a group)',
  c: 'case-sensitive',
  e: 'an extended regex (ERE: no \\d, \\w or other escapes of an advanced one)',
  i: 'case-insensitive',
  m: 'newline-sensitive (. and brackets never match a newline, ^ and $ match at one)',
  n: 'newline-sensitive (. and brackets never match a newline, ^ and $ match at one)',
  p: 'partial newline-sensitive (. and brackets never match a newline)',
  q: 'a literal string ((?q)a.b matches only the text a.b)',
  s: 'not newline-sensitive (its default: . matches a newline, ^ and $ only the ends)',
  t: 'tight syntax (its default)',
  w: 'inverse partial newline-sensitive (^ and $ match at a newline)',
  x: 'expanded syntax (white space and # comments ignored)',
};

/**
 * Whether the warehouse's engine reads a regex's leading `***=`, `***:` or embedded options `(?…)` as
 * PostgreSQL does: RE2 (its syntax) knows only the flags i, m, s and U, where (?i) is case-insensitive as in
 * PostgreSQL and (?s) lets `.` match a newline, as PostgreSQL's `.` does (so it is kept as written); any
 * other is RE2's syntax error, so dbt's test errors, or another meaning ((?m) is newline-sensitive in PostgreSQL,
 * multi-line in RE2). Snowflake documents no embedded option (its options are REGEXP's parameters argument),
 * nor a director. `dotAll`: RE2's (?s), under which `.` is PostgreSQL's.
 */
function leadingOptions(
  regex: string,
  engine: 'posix' | 're2',
  adapter: string | undefined,
): { dotAll: boolean } | { error: string } {
  const reader = engine === 're2' ? `RE2, ${adapter ?? ''}'s engine,` : `${adapter ?? ''}'s POSIX engine`;
  const director = /^\*\*\*[=:]/.exec(regex)?.[0];
  if (director !== undefined)
    return {
      error:
        `its regex starts with ${director}, which tells PostgreSQL to read the rest as ${director === '***=' ? 'a literal string' : 'an advanced regex'}; ` +
        `${reader} reads no such prefix (in RE2 a * with nothing to repeat is a syntax error), so dbt's test does not match as the gate would`,
    };
  const flags = /^\(\?([A-Za-z]+)\)/.exec(regex)?.[1];
  if (flags === undefined) return { dotAll: false };
  const other = [...flags].find((f) => engine === 'posix' || !'is'.includes(f));
  if (other !== undefined)
    return {
      error:
        `its regex starts with the embedded option (?${flags}): PostgreSQL reads the rest as ${PG_EMBEDDED_OPTIONS[other] ?? `(?${other})`}, ` +
        `and ${reader} ${engine === 're2' ? re2ReadsFlag(other) : 'documents no embedded option (its options are the parameters argument of REGEXP)'}`,
    };
  return { dotAll: flags.includes('s') };
}

/** What RE2 makes of an embedded flag other than i and s (U too never gets here: PostgreSQL refuses it first). */
function re2ReadsFlag(flag: string): string {
  return flag === 'm'
    ? 'reads (?m) as multi-line (^ and $ at each line), with . still any character but a newline'
    : `knows no flag ${flag} (its flags are i, m, s and U): dbt's test errors`;
}

/**
 * The regex as PostgreSQL must read it to match what the warehouse's engine does: each `.` outside a bracket
 * written `[^\n]` (every character but a newline, as `.` in RE2 and Snowflake's regexes; PostgreSQL's `.`
 * is any character), and each class the engine defines written as its ASCII range (RE2's; Snowflake's \d and
 * \w). An `{ error }` where a class has no such range (a negated class inside a bracket, `[:punct:]` in RE2);
 * `unknownClasses` lists Snowflake's classes left as written, whose characters beyond ASCII it does not define.
 */
function asEngineReads(
  regex: string,
  engine: 'posix' | 're2',
  adapter: string | undefined,
  dotAll = false,
): { regex: string; unknownClasses: string[] } | { error: string } {
  const [outside, inside] =
    engine === 're2' ? [RE2_CLASSES, RE2_BRACKET_CLASSES] : [SNOWFLAKE_CLASSES, SNOWFLAKE_BRACKET_CLASSES];
  const kept: string[] = [];
  const keep = (what: string) => {
    if (!kept.includes(what)) kept.push(what);
    return what;
  };
  let out = '';
  let inBracket = false;
  for (let i = 0; i < regex.length; i++) {
    const c = regex[i] ?? '';
    const escape = c === '\\' ? regex.slice(i, i + 2) : undefined;
    const posixClass = inBracket ? /^\[([:.=])[^\]]*?\1\]/.exec(regex.slice(i))?.[0] : undefined;
    const held = escape ?? posixClass;
    if (inBracket && held !== undefined && /^(?:\\[dwsDWS]|\[:)/.test(held)) {
      const range = inside[held];
      if (range === undefined && (engine === 're2' || /^\\[DW]$/.test(held)))
        return {
          error: `its class ${held} inside a bracket holds other characters ${engine === 're2' ? 'in RE2' : `on ${adapter ?? ''}`} than in PostgreSQL`,
        };
      out += range ?? keep(held);
      i += held.length - 1;
    } else if (escape !== undefined) {
      const range = inBracket ? undefined : outside[escape.slice(1)];
      out += range ?? (engine === 'posix' && /^\\[sS]$/.test(escape) ? keep(escape) : escape);
      i++;
    } else if (posixClass !== undefined) {
      out += posixClass;
      i += posixClass.length - 1;
    } else if (inBracket) {
      if (c === ']') inBracket = false;
      out += c;
    } else if (c === '[') {
      inBracket = true;
      const start = /^\[\^?\]?/.exec(regex.slice(i))?.[0] ?? '[';
      out += start;
      i += start.length - 1;
    } else out += c === '.' && !dotAll ? '[^\\n]' : c;
  }
  return { regex: out, unknownClasses: kept };
}

/** The adapters where `"…"` is a string, not a quoted name as in PostgreSQL (Spark's default, MySQL's without ANSI_QUOTES). */
const DOUBLE_QUOTED_STRINGS: ReadonlySet<string> = new Set([
  'bigquery',
  'databricks',
  'spark',
  'mysql',
  'mariadb',
]);

/**
 * Why SQL a test writes as it is (a condition, an expression, a quote: false value, a bound) means another
 * thing in PostgreSQL than on the adapter, or undefined: a backslash in a string, an escape there
 * (LITERAL_BACKSLASH), or `"…"`, a string there and a column name in PostgreSQL.
 */
function dialectTrap(sql: string, adapter: string | undefined): string | undefined {
  const on = adapter ?? 'its adapter';
  const strings = sql.match(/'(?:[^']|'')*'?/g) ?? [];
  if (!LITERAL_BACKSLASH.has(adapter ?? '') && strings.some((literal) => literal.includes('\\')))
    return `its SQL (${sql}) has a backslash in a string, which on ${on} escapes the character after it and in PostgreSQL, where Gate 1 runs, is itself`;
  if (DOUBLE_QUOTED_STRINGS.has(adapter ?? '') && sql.replace(/'(?:[^']|'')*'?/g, '').includes('"'))
    return `its SQL (${sql}) writes "…", a string on ${on} and a column name in PostgreSQL, where Gate 1 runs: write the string between single quotes`;
  return undefined;
}

/** A value written into the SQL as it is (dbt's quote: false, and range bounds). */
function rawValue(value: unknown): string | undefined {
  // Compared as a number, 1 and 1.0 (or 1e-05 and 0.00001) are one value; digits past 2^53 are lost.
  if (typeof value === 'number' && Number.isFinite(value))
    return Number.isInteger(value) && !Number.isSafeInteger(value) ? undefined : String(value);
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'string' && value.trim() !== '' && !JINJA.test(value)) return value.trim();
  return undefined;
}
