// A dbt model contract's constraints (dbt 1.5+, applied only when `contract: {enforced: true}`) as the tests
// that mean the same, so they become the same Gate 1 rules: not_null → required, unique → a uniqueness
// (the grain key or a uniqueCheck), primary_key → both (and the preferred grain key), check → a predicate,
// foreign_key → the column's reference. Each is traced to `<model>:constraint:<type>:<columns>`. Only the
// constraints the adapter's warehouse enforces are rules: elsewhere dbt writes a constraint the warehouse does
// not enforce (a unique on Snowflake) or none at all (a check on Snowflake), and its build passes rows that
// break it; a Gate 1 rule would be stricter than dbt.
import type { ManifestConstraint, ManifestNode, ManifestTest } from './manifest.js';
import type { NotMappedTest } from './types.js';

export interface ConstraintTests {
  tests: ManifestNode[];
  notMapped: NotMappedTest[];
  /** The columns of a primary_key constraint, when the model has one. */
  primaryKey: string[];
  /** The model declares constraints but enforces no contract: dbt applies none of them, nor does gds. */
  ignored: boolean;
}

/** The constraint types dbt-adapters' CONSTRAINT_SUPPORT has as ENFORCED, where the warehouse enforces them. */
const ALL = ['not_null', 'unique', 'primary_key', 'foreign_key', 'check'] as const;
const ENFORCED: Readonly<Record<string, readonly string[]>> = {
  postgres: ALL,
  duckdb: ALL,
  sqlserver: ALL,
  snowflake: ['not_null'],
  redshift: ['not_null'],
  // dbt-bigquery writes primary and foreign keys `not enforced`: BigQuery never checks them.
  bigquery: ['not_null'],
  databricks: ['not_null', 'check'],
  materialize: ['not_null'],
};

/** The constraint types dbt does not write on the adapter's warehouse (its CONSTRAINT_SUPPORT: NOT_SUPPORTED). */
const NOT_SUPPORTED: Readonly<Record<string, readonly string[]>> = {
  snowflake: ['check'],
  redshift: ['check'],
  bigquery: ['check', 'unique'],
  databricks: ['unique'],
  materialize: ['check', 'unique', 'primary_key', 'foreign_key'],
};

/** Why a constraint of `type` is no rule on `adapter`, or undefined when the warehouse enforces it. */
function notEnforced(type: string, adapter: string | undefined): string | undefined {
  if (type === 'custom' || !(ALL as readonly string[]).includes(type)) return undefined;
  const on = adapter ?? 'an unknown adapter';
  const enforced = adapter === undefined ? undefined : ENFORCED[adapter];
  if (enforced === undefined)
    return type === 'not_null'
      ? undefined
      : `gds does not know whether ${on} enforces a ${type} constraint (dbt's adapter decides); a data test checks it`;
  if (enforced.includes(type)) return undefined;
  return NOT_SUPPORTED[adapter ?? '']?.includes(type) === true
    ? `dbt writes no ${type} constraint on ${on} (not supported there), so nothing checks it; a data test would`
    : `${on} does not enforce a ${type} constraint (dbt writes it as metadata), so dbt's build passes rows that break it; a data test checks it`;
}

export function constraintTests(node: ManifestNode, adapter?: string): ConstraintTests {
  const out: ConstraintTests = { tests: [], notMapped: [], primaryKey: [], ignored: false };
  // `written`: each column as dbt's DDL writes it, a column-level one quoted when its column has quote: true.
  const all: Array<{ constraint: ManifestConstraint; columns: string[]; written: string[] }> = [
    ...node.columns.flatMap((c) =>
      c.constraints.map((constraint) => ({
        constraint,
        columns: [c.name],
        written: [c.quote === true ? `"${c.name}"` : c.name],
      })),
    ),
    ...node.constraints.map((constraint) => ({
      constraint,
      columns: constraint.columns,
      written: constraint.columns,
    })),
  ];
  if (all.length === 0) return out;
  if (!node.contractEnforced) return { ...out, ignored: true };
  for (const { constraint, columns, written } of all) {
    const id = `${node.uniqueId}:constraint:${constraint.type}${columns.length > 0 ? `:${columns.join(',')}` : ''}`;
    const test = (
      name: string,
      kwargs: Record<string, unknown>,
      namespace?: string,
      suffix = '',
    ): ManifestNode => {
      const info: ManifestTest = {
        name,
        ...(namespace === undefined ? {} : { namespace }),
        kwargs,
        attachedNode: node.uniqueId,
        severity: 'error',
      };
      const uniqueId = `${id}${suffix}`;
      return {
        ...node,
        uniqueId,
        resourceType: 'test',
        name: `${constraint.name ?? `${node.name}_${constraint.type}_${columns.join('_')}`}${suffix === '' ? '' : suffix.replace(/[^\w]/g, '_')}`,
        test: info,
      };
    };
    const notNull = () =>
      columns.map((column, i) =>
        test('not_null', { column_name: written[i] }, undefined, `:not_null:${column}`),
      );
    const unique = () =>
      columns.length === 1
        ? test('unique', { column_name: written[0] })
        : test('unique_combination_of_columns', { combination_of_columns: written }, 'dbt_utils');
    const refuse = (reason: string) => out.notMapped.push({ test: id, reason });
    const unenforced = notEnforced(constraint.type, adapter);
    if (unenforced !== undefined) {
      // A primary key still says which unique test is the grain key, as dbt's primary_key inference does.
      if (constraint.type === 'primary_key' && columns.length > 0) out.primaryKey = columns;
      refuse(unenforced);
      continue;
    }
    if (constraint.type !== 'check' && constraint.type !== 'custom' && columns.length === 0) {
      refuse(`the ${constraint.type} constraint names no column`);
      continue;
    }
    switch (constraint.type) {
      case 'not_null':
        out.tests.push(...notNull());
        break;
      case 'unique':
        out.tests.push(unique());
        break;
      case 'primary_key':
        out.tests.push(...notNull(), unique());
        out.primaryKey = columns;
        break;
      case 'check':
        if (constraint.expression === undefined) refuse('the check constraint has no expression');
        else out.tests.push(test('expression_is_true', { expression: constraint.expression }, 'dbt_utils'));
        break;
      case 'foreign_key': {
        const [column] = written;
        if (written.length !== 1 || column === undefined) {
          refuse('a foreign key over several columns: a column declares one reference');
          break;
        }
        const target = foreignKeyTarget(constraint);
        if (target === undefined)
          refuse(
            `its target (${constraint.to ?? constraint.expression ?? 'none'}) is not ref(), source() or schema.table (column)`,
          );
        else out.tests.push(test('relationships', { column_name: column, ...target }));
        break;
      }
      default:
        refuse(
          `a ${constraint.type || 'custom'} constraint is SQL of the warehouse's own; gds has no Gate 1 rule for it`,
        );
    }
  }
  return out;
}

/** `to: ref('x')` with `to_columns` (dbt 1.9+), or the expression `schema.table (column)` before that. */
function foreignKeyTarget(constraint: ManifestConstraint): { to: string; field: string } | undefined {
  const [field] = constraint.toColumns;
  if (constraint.to !== undefined && field !== undefined && constraint.toColumns.length === 1)
    return { to: constraint.to, field };
  const written =
    /^\s*((?:"[^"]+"|[\w$]+)(?:\.(?:"[^"]+"|[\w$]+)){1,2})\s*\(\s*("[^"]+"|[\w$]+)\s*\)\s*$/.exec(
      constraint.expression ?? '',
    );
  if (!written) return undefined;
  const parts = (written[1] ?? '').split('.').map((p) => p.replace(/^"|"$/g, ''));
  const [schema, table] = parts.slice(-2);
  // The column as the DDL writes it, quoted or not: the warehouse folds an unquoted one (names.ts).
  return { to: `relation('${schema ?? ''}', '${table ?? ''}')`, field: written[2] ?? '' };
}
