// How PostgreSQL names a column of a SELECT list it is not told the name of (FigureColname of
// parse_target.c), and the type a top-level cast gives it; over the tree of PostgreSQL's parser.
type Node = Record<string, unknown>;

export const STAR = Symbol('star');
type Figured = string | typeof STAR | undefined;

const NAMED_FUNCTIONS: Readonly<Record<string, string>> = {
  A_ArrayExpr: 'array',
  RowExpr: 'row',
  CoalesceExpr: 'coalesce',
  GroupingFunc: 'grouping',
  XmlSerialize: 'xmlserialize',
  MergeSupportFunc: 'merge_action',
};

const SQL_VALUE_FUNCTIONS: Readonly<Record<string, string>> = {
  SVFOP_CURRENT_DATE: 'current_date',
  SVFOP_CURRENT_TIME: 'current_time',
  SVFOP_CURRENT_TIME_N: 'current_time',
  SVFOP_CURRENT_TIMESTAMP: 'current_timestamp',
  SVFOP_CURRENT_TIMESTAMP_N: 'current_timestamp',
  SVFOP_LOCALTIME: 'localtime',
  SVFOP_LOCALTIME_N: 'localtime',
  SVFOP_LOCALTIMESTAMP: 'localtimestamp',
  SVFOP_LOCALTIMESTAMP_N: 'localtimestamp',
  SVFOP_CURRENT_ROLE: 'current_role',
  SVFOP_CURRENT_USER: 'current_user',
  SVFOP_USER: 'user',
  SVFOP_SESSION_USER: 'session_user',
  SVFOP_CURRENT_CATALOG: 'current_catalog',
  SVFOP_CURRENT_SCHEMA: 'current_schema',
};

/** FigureColname of parse_target.c for the expressions a view's SELECT list holds; undefined is ?column?. */
export function figureName(value: unknown): Figured {
  return figure(value).name;
}

function figure(value: unknown): { name?: string | typeof STAR; strong: boolean } {
  if (!isNode(value)) return { strong: false };
  const [kind, raw] = Object.entries(value)[0] ?? [];
  const node = (raw ?? {}) as Node;
  switch (kind) {
    case 'ColumnRef': {
      const last = (node['fields'] as Node[] | undefined)?.at(-1);
      if (last && 'A_Star' in last) return { name: STAR, strong: true };
      return named(stringValue(last), true);
    }
    case 'A_Indirection': {
      const last = (node['indirection'] as Node[] | undefined)?.at(-1);
      if (last && 'A_Star' in last) return { name: STAR, strong: true };
      const field = stringValue(last);
      return field === undefined ? figure(node['arg']) : { name: field, strong: true };
    }
    case 'FuncCall':
      return named(stringValue((node['funcname'] as unknown[] | undefined)?.at(-1)), true);
    case 'A_Expr':
      return node['kind'] === 'AEXPR_NULLIF' ? { name: 'nullif', strong: true } : { strong: false };
    case 'TypeCast': {
      const inner = figure(node['arg']);
      if (inner.strong) return inner;
      const names = ((node['typeName'] as Node | undefined)?.['names'] as unknown[] | undefined) ?? [];
      return named(stringValue(names.at(-1)), false);
    }
    case 'CollateClause':
      return figure(node['arg']);
    case 'SubLink': {
      const type = node['subLinkType'];
      if (type === 'EXISTS_SUBLINK') return { name: 'exists', strong: true };
      if (type === 'ARRAY_SUBLINK') return { name: 'array', strong: true };
      return { strong: false };
    }
    case 'CaseExpr': {
      const otherwise = figure(node['defresult']);
      return otherwise.strong ? otherwise : { name: 'case', strong: false };
    }
    case 'MinMaxExpr':
      return { name: node['op'] === 'IS_LEAST' ? 'least' : 'greatest', strong: true };
    case 'SQLValueFunction':
      return named(SQL_VALUE_FUNCTIONS[String(node['op'])], true);
    default:
      return named(kind === undefined ? undefined : NAMED_FUNCTIONS[kind], true);
  }
}

function named(name: string | undefined, strong: boolean): { name?: string; strong: boolean } {
  return name === undefined ? { strong: false } : { name, strong };
}

/** PostgreSQL's internal names of the built-in types, as a person writes them. */
const TYPE_SPELLING: Readonly<Record<string, string>> = {
  bool: 'boolean',
  int2: 'smallint',
  int4: 'integer',
  int8: 'bigint',
  float4: 'real',
  float8: 'double precision',
  bpchar: 'char',
  timestamptz: 'timestamptz',
  timetz: 'timetz',
};

/** The type a top-level cast gives the column (`x::date`, `CAST(x AS numeric(12,2))` → numeric). */
export function typeOf(value: unknown): string | undefined {
  const cast = isNode(value) ? (value['TypeCast'] as Node | undefined) : undefined;
  const typeName = cast?.['typeName'] as Node | undefined;
  const names = ((typeName?.['names'] as unknown[] | undefined) ?? []).map(stringValue);
  const last = names.at(-1);
  if (last === undefined) return undefined;
  const base = names[0] === 'pg_catalog' ? (TYPE_SPELLING[last] ?? last) : last;
  return Array.isArray(typeName?.['arrayBounds']) ? `${base}[]` : base;
}

export function stringValue(node: unknown): string | undefined {
  const value = isNode(node) && isNode(node['String']) ? node['String']['sval'] : undefined;
  return typeof value === 'string' ? value : undefined;
}

export function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
