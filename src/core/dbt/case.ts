// Column-name case against the warehouse the service reads. dbt leaves a column name unquoted unless
// `quote: true`, and each warehouse folds an unquoted name its own way: Snowflake to upper case (its catalog
// lists CUSTOMER_ID), PostgreSQL to lower (customer_id). Both are the same unquoted name, so a declared name
// that differs from the warehouse object's column only in case, and is written in one case (as a folded
// unquoted name is), is registered as the warehouse names it: never quoted as "CUSTOMER_ID" against a
// warehouse column customer_id, which would drift and make every predicate miss. A name in mixed case was
// quoted in dbt (it keeps its case); the warehouse not having it in that case is a mismatch, named.
import type { Yaml } from '../libraries/yaml.js';
import { formatSourceRef } from '../artifacts/identifiers.js';
import { sqlIdentifier, withColumnNames } from './names.js';
import { changedArtifact, withColumns } from './declared-artifact.js';
import type { DbtDeclaration } from './types.js';

/** The columns of warehouse objects, by lower-cased `schema.table`. */
export type WarehouseColumns = ReadonlyMap<string, readonly string[]>;

/** `schema.table` of warehouse objects as the warehouse spells them, by lower-cased `schema.table`. */
export type WarehouseSources = ReadonlyMap<string, string>;

const FOLDED = /^(?:[A-Z_][A-Z0-9_$]*|[a-z_][a-z0-9_$]*)$/;

/** The warehouse's name of `name` when they differ only in case, `name` is a folded unquoted one. */
function warehouseNameOf(name: string, columns: readonly string[] | undefined): string | undefined {
  if (columns === undefined || columns.includes(name)) return undefined;
  const matches = columns.filter((c) => c.toLowerCase() === name.toLowerCase());
  return matches.length === 1 ? matches[0] : undefined;
}

export interface CaseReconciled {
  declaration: DbtDeclaration;
  /** What differed in case from the warehouse, in words (empty when nothing did). */
  notes: string[];
}

/**
 * The declaration with its source named as the warehouse names the object where the two differ only in
 * case and dbt leaves the differing part unquoted (its `quoting` config: the warehouse folded it), and what
 * differed. A quoted part keeps its case in dbt: the warehouse holding it in another case is a mismatch,
 * named, and the source is left as written (plan then says it is not a warehouse object). `schema`
 * (--schema) replaces the source's schema, so only the table is compared then.
 */
export function reconcileSource(
  declaration: DbtDeclaration,
  sources: WarehouseSources,
  schema?: string,
): CaseReconciled {
  const written = { schema: schema ?? declaration.source.schema, table: declaration.source.table };
  const spelled = sources.get(`${written.schema}.${written.table}`.toLowerCase());
  const dot = spelled?.indexOf('.') ?? -1;
  if (spelled === undefined || dot < 0) return { declaration, notes: [] };
  const found = { schema: schema ?? spelled.slice(0, dot), table: spelled.slice(dot + 1) };
  const parts = (['schema', 'table'] as const).filter((part) => found[part] !== written[part]);
  if (parts.length === 0) return { declaration, notes: [] };
  const at = `${written.schema}.${written.table}`;
  const quoted = parts.filter((part) => declaration.sourceQuoted?.[part] !== false);
  if (quoted.length > 0)
    return {
      declaration,
      notes: [
        `${declaration.name}: the warehouse object is ${spelled}, not ${at}, and dbt quotes the relation's ${quoted.join(' and ')} (its quoting config), so keeps its case: apply will not find it; set quoting (identifier, schema) to false in dbt_project.yml or the model's config, or rename the relation`,
      ],
    };
  const source = {
    schema: schema === undefined ? found.schema : declaration.source.schema,
    table: found.table,
  };
  return {
    declaration: {
      ...declaration,
      source,
      artifact: changedArtifact(declaration.artifact, (artifact) => {
        artifact['source'] = formatSourceRef(source);
        return artifact;
      }),
    },
    notes: [
      `${declaration.name}: source ${at} -> ${spelled}: dbt leaves the relation's ${parts.join(' and ')} unquoted (its quoting config) and the warehouse names it in another case; registered as the warehouse names it`,
    ],
  };
}

/**
 * The declaration with each column named as the warehouse object `source` names it where the two differ
 * only in case (its artifact, gate1.yml, grain key and rules too), and what differed.
 */
export function reconcileCase(
  yaml: Yaml,
  declaration: DbtDeclaration,
  source: string,
  warehouse: WarehouseColumns,
  adapter?: string,
): CaseReconciled {
  const columns = warehouse.get(source.toLowerCase());
  const renames = new Map<string, string>();
  const quoted: string[] = [];
  for (const column of declaration.columns) {
    const found = warehouseNameOf(column.name, columns);
    if (found === undefined) continue;
    if (FOLDED.test(column.name)) renames.set(column.name, found);
    else quoted.push(`${column.name} (the warehouse has ${found})`);
  }
  const notes: string[] = [];
  // dbt-postgres builds in the warehouse the service reads: there an unquoted name dbt writes is folded to
  // lower case, so a column the warehouse holds only in another case is one dbt's tests cannot reach.
  const unreached = new Set<string>();
  if (adapter === 'postgres') {
    for (const [from, to] of renames) {
      if (from !== from.toLowerCase()) continue;
      const tests = declaration.mappedTests.filter((t) => t.rule.endsWith(`:${from}`)).map((t) => t.test);
      // Declared against the same objects (the plan reads them first), its tests were resolved as dbt's are:
      // not mapped, each saying why.
      const unmapped = declaration.notMappedTests
        .filter((t) => t.reason.includes(`reads it as ${from};`))
        .map((t) => t.test);
      if (tests.length === 0 && unmapped.length === 0) continue;
      unreached.add(from);
      const held = `dbt's SQL on postgres reads the unquoted name as ${from}, which the warehouse object ${source} does not hold (registered as the warehouse names it), so dbt's tests of it`;
      notes.push(
        tests.length === 0
          ? `${declaration.name}: column ${from} -> ${to}: ${held} (${unmapped.join(', ')}) error, and are not mapped; set quote: true on the column in dbt to test ${to}`
          : `${declaration.name}: column ${from} -> ${to}: ${held} (${tests.join(', ')}) error, while the Gate 1 rules they became run on ${to}; set quote: true on the column in dbt, and run dbt docs generate so that gds maps each test against the catalog's names (a test dbt cannot run is then not mapped)`,
      );
    }
  }
  const folded = [...renames].filter(([from]) => !unreached.has(from));
  if (folded.length > 0)
    notes.push(
      `${declaration.name}: column${folded.length === 1 ? '' : 's'} ${folded.map(([from, to]) => `${from} -> ${to}`).join(', ')}: the warehouse object ${source} names ${folded.length === 1 ? 'it' : 'them'} in another case (an unquoted name is folded to upper case by Snowflake, to lower by PostgreSQL); registered as the warehouse names ${folded.length === 1 ? 'it' : 'them'}`,
    );
  if (quoted.length > 0)
    notes.push(
      `${declaration.name}: column${quoted.length === 1 ? '' : 's'} ${quoted.join(', ')} differ${quoted.length === 1 ? 's' : ''} in case from the warehouse object ${source}, and a name in mixed case is quoted (quote: true) so keeps its case: Gate 1 will not find ${quoted.length === 1 ? 'it' : 'them'}; rename the column in dbt or in the warehouse`,
    );
  if (renames.size === 0) return { declaration, notes };
  return { declaration: renamed(yaml, declaration, renames, warehouse), notes };
}

function renamed(
  yaml: Yaml,
  declaration: DbtDeclaration,
  renames: ReadonlyMap<string, string>,
  warehouse: WarehouseColumns,
): DbtDeclaration {
  const to = (name: string) => renames.get(name) ?? name;
  const reference = (target: string | undefined) => {
    if (target === undefined) return undefined;
    const parts = target.split('.');
    const column = parts.pop() ?? '';
    const found = warehouseNameOf(column, warehouse.get(parts.join('.').toLowerCase()));
    return found !== undefined && FOLDED.test(column) ? [...parts, found].join('.') : target;
  };
  const columns = declaration.columns.map((c) => {
    const references = reference(c.references);
    return { ...c, name: to(c.name), ...(references === undefined ? {} : { references }) };
  });
  const names = columns.map((c) => c.name);
  const contract =
    declaration.contract?.grainKeyColumns === undefined
      ? declaration.contract
      : { ...declaration.contract, grainKeyColumns: declaration.contract.grainKeyColumns.map(to) };
  const word = (text: string) =>
    text.replace(/'(?:[^']|'')*'|"((?:[^"]|"")+)"|\b[A-Za-z_][A-Za-z0-9_$]*\b/g, (match, inner?: string) =>
      match.startsWith("'")
        ? match
        : inner === undefined
          ? to(match)
          : renames.has(inner)
            ? sqlIdentifier(to(inner))
            : match,
    );
  return {
    ...withColumns(declaration, columns),
    ...(declaration.gate1Yaml === undefined
      ? {}
      : {
          gate1Yaml: renamedGate1(yaml, declaration.gate1Yaml, to, (sql) =>
            withColumnNames(word(sql), names),
          ),
        }),
    ...(contract === undefined ? {} : { contract }),
    ...(declaration.rules === undefined ? {} : { rules: declaration.rules.map(word) }),
  };
}

/** A gate1.yml with its column names renamed, its comments kept. */
function renamedGate1(
  yaml: Yaml,
  text: string,
  to: (name: string) => string,
  sql: (text: string) => string,
): string {
  const doc = yaml.parseDocument(text);
  const each = (list: string, visit: (index: number) => void) => {
    const items = doc.get(list) as { items?: unknown[] } | undefined;
    items?.items?.forEach((_item, index) => visit(index));
  };
  const rename = (path: Array<string | number>, change: (value: string) => string) => {
    const value = doc.getIn(path);
    if (typeof value === 'string') doc.setIn(path, doc.createNode(change(value)));
  };
  each('fieldOverrides', (i) => rename(['fieldOverrides', i, 'field'], to));
  each('patternChecks', (i) => rename(['patternChecks', i, 'column'], to));
  each('customPredicates', (i) => rename(['customPredicates', i, 'sql'], sql));
  each('uniqueChecks', (i) => {
    const columns = doc.getIn(['uniqueChecks', i, 'columns']) as { items?: unknown[] } | undefined;
    columns?.items?.forEach((_c, j) => rename(['uniqueChecks', i, 'columns', j], to));
  });
  return doc.toString({ lineWidth: 0 });
}
