// A PostgreSQL view read by PostgreSQL's own grammar: whatever the server accepts is read, and each output
// column is named the way the server names it (its alias, else the rules of FigureColname in parse_target.c),
// or refused where the server would call it ?column?.
import { MAX_IDENTIFIER_BYTES } from './identifiers.js';
import { charOffsetsOf, pgGrammar, pgRefusal } from './pg-grammar.js';
import type { PgGrammar } from './pg-grammar.js';
import { isDbtTemporary, modelOfFile, underDbtTarget, withoutDbtSuffix } from './dbt-sql.js';
import { figureName, isNode, STAR, stringValue, typeOf } from './pg-column-names.js';
import { queryColumns } from './select-columns.js';
import { notAView, SELECT_STAR_MESSAGE, statementWords, VIEW_SHAPE } from './view-shape.js';
import type { ViewReading, ViewShape } from './view-shape.js';

type Node = Record<string, unknown>;

export async function readPostgresView(content: string, fileName = ''): Promise<ViewReading> {
  const grammar = await pgGrammar();
  let tree: { stmts?: Array<{ stmt?: Node; stmt_location?: number }> };
  try {
    tree = grammar.parseSync(content) as typeof tree;
  } catch (err) {
    const { message, offset } = pgRefusal(err);
    return { ok: false, code: 'syntax_error', message: `PostgreSQL refuses the SQL: ${message}`, at: offset };
  }
  const charOffset = charOffsetsOf(content);
  const at = (bytes: unknown) => charOffset(typeof bytes === 'number' ? bytes : 0);
  const statements = tree.stmts ?? [];
  const [first, second] = statements;
  if (!first?.stmt)
    return { ok: false, code: 'empty_file', message: `the file holds no SQL statement: write ${VIEW_SHAPE}` };
  const firstAt = at(first.stmt_location);
  const compiled = second ? undefined : dbtCompiledModel(first.stmt, fileName);
  if (compiled) return compiled;
  const view = viewOf(first.stmt, fileName);
  if (!view) {
    const words = statementWords(content, firstAt);
    return {
      ok: false,
      code: 'not_a_view',
      message: `${notAView(words)}: the file must hold ${VIEW_SHAPE}`,
      at: firstAt,
    };
  }
  if (second) {
    const secondAt = at(second.stmt_location);
    return {
      ok: false,
      code: 'multiple_statements',
      message: `found ${statements.length} statements: a second statement, ${statementWords(content, secondAt)}, follows the view; the file must hold ${VIEW_SHAPE} and nothing else`,
      at: secondAt,
    };
  }
  if (view.relation['relpersistence'] === 't') {
    return {
      ok: false,
      code: 'not_a_view',
      message: 'CREATE TEMPORARY VIEW ends with the session: define a permanent view',
      at: firstAt,
    };
  }
  const name = ['catalogname', 'schemaname', 'relname']
    .map((k) => view.relation[k])
    .filter((p): p is string => typeof p === 'string' && p !== '');
  // dbt builds a model as `<name>__dbt_tmp` and swaps it in: the table is the model's own name.
  const temporary = isDbtTemporary(name.at(-1) ?? '');
  if (temporary) name[name.length - 1] = withoutDbtSuffix(name.at(-1) ?? '');
  const shape: ViewShape = {
    name,
    nameAt: at(view.relation['location']),
    columns: [],
    ...(view.dbtRun || temporary ? { dbt: 'run' as const } : {}),
  };
  const declared = view.columnNames.map((n) => stringValue(n) ?? '');
  const select = leftmostSelect(view.query);
  const targets = (Array.isArray(select['targetList']) ? select['targetList'] : []) as Node[];
  if (targets.length === 0 && Array.isArray(select['valuesLists']) && declared.length === 0) {
    return {
      ok: false,
      code: 'unnamed_column',
      message: 'a VALUES list names its columns column1, column2, …: declare them after the view name',
      at: firstAt,
    };
  }
  // The scanner's tokens (13 µs each in WebAssembly, most of the time of a long view) are read only where they
  // decide something: a name that may be too long, a star, and the position of a column an error points at.
  let scanned: Tokens | undefined;
  const tokens = () => (scanned ??= tokensOf(grammar, content, charOffset));
  const long = mayHoldLongName(content, tree)
    ? tokens().list.find((t) => t.identifier && Buffer.byteLength(unquote(t.text)) > MAX_IDENTIFIER_BYTES)
    : undefined;
  if (long) {
    return {
      ok: false,
      code:
        long.start < (targets[0] ? at((targets[0]['ResTarget'] as Node)['location']) : 0)
          ? 'invalid_table'
          : 'invalid_column',
      message: `the name ${JSON.stringify(unquote(long.text).slice(0, 20) + '…')} is longer than ${MAX_IDENTIFIER_BYTES} bytes, where PostgreSQL cuts names short: shorten it`,
      at: long.start,
    };
  }
  for (const [index, item] of targets.entries()) {
    const target = (item['ResTarget'] ?? {}) as Node;
    const itemAt = at(target['location']);
    const figured = typeof target['name'] === 'string' ? target['name'] : figureName(target['val']);
    if (figured === STAR) {
      if (declared.length === 0) {
        // `select * from final`, where a CTE above names every column (as almost every dbt model ends).
        const resolved = queryColumns(view.query);
        if (resolved.ok) {
          shape.columns = resolved.columns.map((c) => ({ ...c, at: shape.nameAt }));
          return { ok: true, view: shape };
        }
        return {
          ok: false,
          code: 'select_star',
          message: `${SELECT_STAR_MESSAGE} (${resolved.reason})`,
          at: starAt(tokens(), itemAt),
        };
      }
      // The star's columns are unknown here: the declared list names them.
      for (const rest of declared.slice(index)) shape.columns.push({ name: rest, at: shape.nameAt });
      return { ok: true, view: shape };
    }
    const declaredName = declared[index];
    if (declaredName === undefined && figured === undefined) {
      return {
        ok: false,
        code: 'unnamed_column',
        message: `column ${index + 1} of the SELECT list is an expression PostgreSQL names ?column?: give it a name with AS <name>`,
        at: itemAt,
      };
    }
    const type = typeOf(target['val']);
    const name = declaredName ?? (figured as string);
    if (declaredName === undefined) {
      // Where the name is written is looked up when a message points at it (a bad or duplicate name).
      let located: number | undefined;
      shape.columns.push({
        name,
        get at() {
          return (located ??= nameAt(tokens(), itemAt, name));
        },
        ...(type ? { type } : {}),
      });
    } else shape.columns.push({ name, at: shape.nameAt, ...(type ? { type } : {}) });
  }
  if (declared.length > targets.length) {
    return {
      ok: false,
      code: 'invalid_column',
      message: `the view declares ${declared.length} column names and its SELECT has ${targets.length} columns`,
      at: shape.nameAt,
    };
  }
  return { ok: true, view: shape };
}

interface PgView {
  relation: Node;
  columnNames: unknown[];
  query: unknown;
  /** dbt's run SQL of a table model: `create table <name>__dbt_tmp as (…)`. */
  dbtRun?: boolean;
}

/**
 * dbt's compiled SQL of a model (`target/compiled/…/<model>.sql`): one bare query, `with … select` or, under
 * target/compiled, a plain `select`. Its table is the model, named after the file; its columns those the
 * query names (a star resolved through the CTEs). Undefined when the statement is not such a query.
 */
function dbtCompiledModel(statement: Node, fileName: string): ViewReading | undefined {
  const select = statement['SelectStmt'];
  if (!isNode(select)) return undefined;
  if (!isNode(select['withClause']) && !underDbtTarget(fileName, 'compiled')) return undefined;
  const table = modelOfFile(fileName);
  const resolved = queryColumns(statement);
  if (!resolved.ok)
    return {
      ok: false,
      code: 'select_star',
      message: `this is dbt's compiled SQL of the model ${table}, and gds cannot name its columns: ${resolved.reason}`,
    };
  return {
    ok: true,
    view: {
      name: [table],
      nameAt: 0,
      columns: resolved.columns.map((c) => ({ ...c, at: 0 })),
      dbt: 'compiled',
    },
  };
}

/** `CREATE VIEW` and `CREATE MATERIALIZED VIEW` (a CreateTableAsStmt of a materialized view); nothing else. */
function viewOf(statement: Node, fileName = ''): PgView | undefined {
  const plain = statement['ViewStmt'] as Node | undefined;
  if (plain) {
    return {
      relation: (plain['view'] ?? {}) as Node,
      columnNames: (plain['aliases'] as unknown[] | undefined) ?? [],
      query: plain['query'],
    };
  }
  const created = statement['CreateTableAsStmt'] as Node | undefined;
  const into = (created?.['into'] ?? {}) as Node;
  const relname = ((into['rel'] ?? {}) as Node)['relname'];
  const dbtRun =
    created?.['objtype'] === 'OBJECT_TABLE' &&
    ((typeof relname === 'string' && isDbtTemporary(relname)) || underDbtTarget(fileName, 'run'));
  if (!created || (created['objtype'] !== 'OBJECT_MATVIEW' && !dbtRun)) return undefined;
  return {
    relation: (into['rel'] ?? {}) as Node,
    columnNames: (into['colNames'] as unknown[] | undefined) ?? [],
    query: created['query'],
    ...(dbtRun ? { dbtRun } : {}),
  };
}

/** The SELECT whose target list names a set operation's columns: its leftmost branch. */
function leftmostSelect(query: unknown): Node {
  let select = ((query as Node | undefined)?.['SelectStmt'] ?? {}) as Node;
  while (isNode(select['larg'])) {
    const left: Node = select['larg'];
    select = isNode(left['SelectStmt']) ? left['SelectStmt'] : left;
  }
  return select;
}

interface Token {
  start: number;
  text: string;
  identifier: boolean;
}

/** The tokens in order, and the index of the token starting at each character offset. */
interface Tokens {
  list: Token[];
  indexAt: Map<number, number>;
}

function tokensOf(grammar: PgGrammar, content: string, charOffset: (byteOffset: number) => number): Tokens {
  let list: Token[];
  try {
    list = grammar
      .scanSync(content)
      .tokens.filter((t) => t.tokenName !== 'SQL_COMMENT' && t.tokenName !== 'C_COMMENT')
      .map((t) => ({
        start: charOffset(t.start),
        text: t.text,
        identifier: t.tokenName === 'IDENT',
      }));
  } catch {
    list = [];
  }
  return { list, indexAt: new Map(list.map((t, index) => [t.start, index])) };
}

/**
 * Whether the view may hold a name longer than PostgreSQL keeps (63 bytes); false means no token can be, and
 * the scanner need not run (its tokens cost a 262-line view 10 ms). Without a quoted name or a run of 22
 * name characters (3 bytes each at most) in the text, none can be. Else the parse tree tells: PostgreSQL's
 * scanner cuts every longer name to at most 63 bytes at a character's end (60 to 63 bytes) before the
 * grammar puts it in the tree, so a tree without a string of 60 bytes or more held no longer name (a name
 * the grammar leaves out of the tree is one the server ignores too).
 */
export function mayHoldLongName(content: string, tree: unknown): boolean {
  if (!content.includes('"') && !/[A-Za-z0-9_$\u0080-\uffff]{22}/.test(content)) return false;
  return holdsStringOf(tree, MAX_IDENTIFIER_BYTES - 3);
}

function holdsStringOf(node: unknown, bytes: number): boolean {
  if (typeof node === 'string') return node.length * 3 >= bytes && Buffer.byteLength(node) >= bytes;
  if (Array.isArray(node)) return node.some((item) => holdsStringOf(item, bytes));
  if (isNode(node)) return Object.values(node).some((value) => holdsStringOf(value, bytes));
  return false;
}

const ITEM_END = new Set(['from', 'where', 'group', 'having', 'window', 'order', 'limit', 'offset', 'fetch']);
ITEM_END.add('union').add('intersect').add('except').add('into').add(';').add(',');

/** The tokens of the SELECT item that starts at `itemAt` (each item's own, so all items cost one pass). */
function itemTokens(tokens: Tokens, itemAt: number): Token[] {
  const first = tokens.indexAt.get(itemAt);
  if (first === undefined) return [];
  const item: Token[] = [];
  let depth = 0;
  for (let index = first; index < tokens.list.length; index++) {
    const token = tokens.list[index] as Token;
    if (token.text === '(' || token.text === '[') depth++;
    else if (token.text === ')' || token.text === ']') depth--;
    if (depth < 0 || (depth === 0 && ITEM_END.has(token.text.toLowerCase()))) break;
    item.push(token);
  }
  return item;
}

/** Where the item's name is written: its alias, or the last part of a column reference; else the item. */
function nameAt(tokens: Tokens, itemAt: number, name: string): number {
  const last = itemTokens(tokens, itemAt).at(-1);
  if (!last) return itemAt;
  const text = unquote(last.text);
  return text === name || text.toLowerCase() === name ? last.start : itemAt;
}

function starAt(tokens: Tokens, itemAt: number): number {
  return itemTokens(tokens, itemAt).find((t) => t.text === '*')?.start ?? itemAt;
}

function unquote(text: string): string {
  return text.startsWith('"') ? text.slice(1, -1).replaceAll('""', '"') : text;
}
