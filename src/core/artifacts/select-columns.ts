// The output columns of a query as dbt compiles it: `with a as (select id, amount from …), final as
// (select * from a) select * from final`. Read by PostgreSQL's own grammar; a star is resolved through the
// CTEs (and subqueries) that name their columns, and refused by name where the columns are not written in
// the SQL (a star over a warehouse table). Names are as PostgreSQL folds them (unquoted: lower case).
import { figureName, STAR, stringValue, typeOf } from './pg-column-names.js';
import type { PgGrammar } from './pg-grammar.js';
import { pgRefusal } from './pg-grammar.js';

type Node = Record<string, unknown>;

export interface SelectColumn {
  name: string;
  type?: string;
}

export type SelectColumns = { ok: true; columns: SelectColumn[] } | { ok: false; reason: string };

interface Cte {
  query: unknown;
  names: string[];
  scope: Scope;
}

type Scope = Map<string, Cte>;

class Unreadable extends Error {}

/** The columns the query's SELECT list produces; `grammar` is PostgreSQL's parser, already loaded. */
export function selectColumns(grammar: PgGrammar, sql: string): SelectColumns {
  let tree: { stmts?: Array<{ stmt?: Node }> };
  try {
    tree = grammar.parseSync(sql) as typeof tree;
  } catch (err) {
    return { ok: false, reason: `PostgreSQL's parser cannot read it: ${pgRefusal(err).message}` };
  }
  const statements = tree.stmts ?? [];
  if (statements.length !== 1)
    return { ok: false, reason: `it holds ${statements.length} statements, not one query` };
  return queryColumns(statements[0]?.stmt);
}

/** The columns of a parsed statement that is a query (a SelectStmt node). */
export function queryColumns(statement: unknown): SelectColumns {
  const select = asNode(statement)['SelectStmt'];
  if (!isNode(select)) return { ok: false, reason: 'it is not a query (SELECT or WITH … SELECT)' };
  try {
    return { ok: true, columns: columnsOf(select, new Map()) };
  } catch (err) {
    if (err instanceof Unreadable) return { ok: false, reason: err.message };
    throw err;
  }
}

/** Each query node's columns, read once: a CTE referenced by many columns is not read again for each. */
const read = new WeakMap<Node, SelectColumn[] | Unreadable>();

function columnsOf(select: Node, outer: Scope, depth = 0): SelectColumn[] {
  const known = read.get(select);
  if (known instanceof Unreadable) throw known;
  if (known) return known;
  try {
    const columns = readColumnsOf(select, outer, depth);
    read.set(select, columns);
    return columns;
  } catch (err) {
    if (err instanceof Unreadable) read.set(select, err);
    throw err;
  }
}

function readColumnsOf(select: Node, outer: Scope, depth: number): SelectColumn[] {
  if (depth > 64) throw new Unreadable('the query nests too deep to read');
  const scope = withCtes(select, outer);
  // A set operation names its columns after its leftmost branch.
  let branch = select;
  while (isNode(branch['larg'])) {
    const left = branch['larg'];
    branch = isNode(left['SelectStmt']) ? left['SelectStmt'] : left;
  }
  const branchScope = withCtes(branch, scope);
  if (Array.isArray(branch['valuesLists']))
    throw new Unreadable('a VALUES list names its columns column1, column2, …: name them with AS');
  const targets = (Array.isArray(branch['targetList']) ? branch['targetList'] : []) as Node[];
  const columns: SelectColumn[] = [];
  for (const [index, item] of targets.entries()) {
    const target = asNode(item['ResTarget']);
    const name = typeof target['name'] === 'string' ? target['name'] : figureName(target['val']);
    if (name === STAR) {
      columns.push(...starColumns(asNode(target['val']), branch, branchScope, depth));
      continue;
    }
    if (name === undefined)
      throw new Unreadable(
        `column ${index + 1} of the SELECT list is an expression with no name (the warehouse names it itself): give it one with AS <name>`,
      );
    const type = typeOf(target['val']) ?? referencedType(asNode(target['val']), branch, branchScope, depth);
    columns.push(type ? { name, type } : { name });
  }
  if (columns.length === 0) throw new Unreadable('the query selects no columns');
  return columns;
}

/**
 * The type of a plain column reference (`amount`, `s.amount`) to a CTE or subquery that gives it one (a
 * cast there), so `final as (select * from renamed)` keeps renamed's types; undefined when unknown.
 */
function referencedType(value: Node, select: Node, scope: Scope, depth: number): string | undefined {
  const fields = asNode(value['ColumnRef'])['fields'];
  if (!Array.isArray(fields) || fields.length === 0 || fields.length > 2) return undefined;
  const parts = fields.map((f) => stringValue(f));
  if (parts.some((p) => p === undefined)) return undefined;
  const column = parts.at(-1);
  const qualifier = parts.length === 2 ? parts[0] : undefined;
  try {
    const from = (Array.isArray(select['fromClause']) ? select['fromClause'] : []) as Node[];
    const items = from
      .flatMap(fromItems)
      .filter(
        (i) =>
          qualifier === undefined || i.alias === qualifier || (i.alias === undefined && i.name === qualifier),
      );
    const types = new Set<string | undefined>();
    for (const item of items) {
      if (!item.subquery && (item.schemaQualified || item.name === undefined || !scope.has(item.name))) {
        types.add(undefined);
        continue;
      }
      const found = itemColumns(item, scope, depth, '*').filter((c) => c.name === column);
      for (const c of found) types.add(c.type);
    }
    return types.size === 1 ? [...types][0] : undefined;
  } catch (err) {
    if (err instanceof Unreadable) return undefined;
    throw err;
  }
}

function withCtes(select: Node, outer: Scope): Scope {
  const clause = asNode(select['withClause']);
  const ctes = Array.isArray(clause['ctes']) ? (clause['ctes'] as Node[]) : [];
  if (ctes.length === 0) return outer;
  const scope: Scope = new Map(outer);
  for (const item of ctes) {
    const cte = asNode(item['CommonTableExpr']);
    const name = cte['ctename'];
    if (typeof name !== 'string') continue;
    const names = (Array.isArray(cte['aliascolnames']) ? cte['aliascolnames'] : []).map(
      (n) => stringValue(n) ?? '',
    );
    // A CTE sees the ones before it (and, WITH RECURSIVE, itself: its first branch names the columns).
    scope.set(name, { query: cte['ctequery'], names, scope: new Map(scope) });
  }
  return scope;
}

/** The columns a `*` or `t.*` stands for, where the SQL names them. */
function starColumns(ref: Node, select: Node, scope: Scope, depth: number): SelectColumn[] {
  const fields = (asNode(ref['ColumnRef'])['fields'] as unknown[] | undefined) ?? [];
  const qualifier = fields.length > 1 ? fields.slice(0, -1).map((f) => stringValue(f) ?? '') : [];
  const from = (Array.isArray(select['fromClause']) ? select['fromClause'] : []) as Node[];
  const items = from.flatMap(fromItems);
  const wanted = qualifier.at(-1);
  const chosen =
    wanted === undefined
      ? items
      : items.filter((i) => i.alias === wanted || (i.alias === undefined && i.name === wanted));
  if (wanted === undefined && chosen.some((i) => i.merged))
    throw new Unreadable('SELECT * over a JOIN … USING (or NATURAL JOIN) merges columns: list the columns');
  if (chosen.length === 0)
    throw new Unreadable(
      wanted === undefined
        ? 'SELECT * with no FROM names no columns'
        : `${wanted}.* names no relation of the FROM clause`,
    );
  return chosen.flatMap((item) =>
    itemColumns(item, scope, depth, wanted === undefined ? '*' : `${wanted}.*`),
  );
}

interface FromItem {
  /** A relation's own name (last part), for a RangeVar. */
  name?: string;
  schemaQualified: boolean;
  alias?: string;
  aliasColumns: string[];
  subquery?: Node;
  label: string;
  /** Part of a JOIN … USING or NATURAL JOIN, whose `*` merges the joined columns. */
  merged?: boolean;
}

function fromItems(node: Node): FromItem[] {
  if (isNode(node['JoinExpr'])) {
    const join = node['JoinExpr'];
    const merged = Boolean(join['usingClause'] || join['isNatural']);
    return [...fromItems(asNode(join['larg'])), ...fromItems(asNode(join['rarg']))].map((item) =>
      merged ? { ...item, merged } : item,
    );
  }
  const alias = asNode(asNode(node[Object.keys(node)[0] ?? ''])['alias']);
  const aliasName = typeof alias['aliasname'] === 'string' ? alias['aliasname'] : undefined;
  const aliasColumns = (Array.isArray(alias['colnames']) ? alias['colnames'] : []).map(
    (n) => stringValue(n) ?? '',
  );
  if (isNode(node['RangeVar'])) {
    const range = node['RangeVar'];
    const name = String(range['relname'] ?? '');
    const schema = typeof range['schemaname'] === 'string' ? range['schemaname'] : undefined;
    return [
      {
        name,
        schemaQualified: schema !== undefined,
        ...(aliasName === undefined ? {} : { alias: aliasName }),
        aliasColumns,
        label: [range['catalogname'], schema, name]
          .filter((p) => typeof p === 'string' && p !== '')
          .join('.'),
      },
    ];
  }
  if (isNode(node['RangeSubselect'])) {
    const subquery = asNode(asNode(node['RangeSubselect']['subquery'])['SelectStmt']);
    return [
      {
        schemaQualified: false,
        ...(aliasName === undefined ? {} : { alias: aliasName }),
        aliasColumns,
        subquery,
        label: `the subquery ${aliasName ?? ''}`.trim(),
      },
    ];
  }
  const kind = Object.keys(node)[0] ?? 'an item';
  throw new Unreadable(
    `SELECT * over ${kind === 'RangeFunction' ? 'a function' : kind}: the SQL does not name its columns`,
  );
}

function itemColumns(item: FromItem, scope: Scope, depth: number, star: string): SelectColumn[] {
  let columns: SelectColumn[];
  if (item.subquery) columns = columnsOf(item.subquery, scope, depth + 1);
  else {
    const cte = !item.schemaQualified && item.name !== undefined ? scope.get(item.name) : undefined;
    if (!cte)
      throw new Unreadable(
        `SELECT ${star} from ${item.label}: the columns of ${item.label} are not written in the SQL (list them, or read them from the catalog: dbt docs generate)`,
      );
    const query = asNode(asNode(cte.query)['SelectStmt']);
    if (Object.keys(query).length === 0) throw new Unreadable(`the CTE ${item.name ?? ''} is not a SELECT`);
    columns =
      cte.names.length > 0
        ? renamed(columnsOf(query, cte.scope, depth + 1), cte.names)
        : columnsOf(query, cte.scope, depth + 1);
  }
  return item.aliasColumns.length > 0 ? renamed(columns, item.aliasColumns) : columns;
}

function renamed(columns: SelectColumn[], names: string[]): SelectColumn[] {
  return columns.map((column, i) => {
    const name = names[i];
    return name === undefined ? column : { ...column, name };
  });
}

function asNode(value: unknown): Node {
  return isNode(value) ? value : {};
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
