// Cheap bounds on a definition artifact and on a gate1.yml, checked before the full parse, by the
// service on what it receives and by gds on what it reads (the same numbers, one definition). The
// parser's time grows with the SQL's tokens and the YAML's nodes (and with the square of one mapping's
// keys): a 7 MB CREATE VIEW of 800,000 columns held the request thread 83 s, a YAML mapping of 30,000
// keys 41 s, and gds read a view of 50,000 columns for more than 150 s before the service refused it
// in 10 ms. An artifact no warehouse could hold, or too big to read in about a second, is refused in
// linear scans. Pure: no I/O.
import { countText } from './count-text.js';
import { characterCount } from './text-bounds.js';

/** The largest request body the service takes (recertify, §8: 413 over 25 MB); every other route's too. */
export const REQUEST_BODY_LIMIT_BYTES = 25 * 1024 * 1024;
/**
 * The most bytes gds reads of a dbt manifest.json (`recertify --manifest`): gds sends only its reduction
 * (relation names), so it may be bigger than a request body, but not without end (a FIFO, /dev/zero).
 */
export const MANIFEST_READ_LIMIT_BYTES = 256 * 1024 * 1024;
/** The most bytes of a token read from stdin (`--token -`): a request's headers hold 16 KiB in all. */
export const TOKEN_READ_LIMIT_BYTES = 16 * 1024;
/** The request body limit of the definition routes (the content is JSON-escaped inside it). */
export const ARTIFACT_BODY_LIMIT_BYTES = 2 * 1024 * 1024;
/** The most characters of a gate1.yml (the contract's `Gate1ApplyRequest.content` maxLength, 256 Ki). */
export const MAX_GATE1_CHARACTERS = 262_144;
/** Lines and commas of a gate1.yml: four lines a check, for the 3,000 checks that fit in 256 Ki characters. */
export const MAX_GATE1_NODES = 20_000;
/** PostgreSQL's own limit on the columns of a table or view. */
export const MAX_VIEW_COLUMNS = 1600;
/**
 * Words, numbers and symbols of a SQL artifact: room for 1,600 columns of 30-argument expressions, or a view
 * of 6,000 CTEs. Reading is linear in them: 100,000 took 0.9-1.1 s to parse (both shapes, 2 busy cores).
 */
export const MAX_SQL_TOKENS = 100_000;
/** Lines and commas of a YAML or JSON artifact: room for 1,600 columns with a few keys each. */
export const MAX_DOCUMENT_NODES = 15_000;
/** Depth of `[`/`{` nesting in a YAML or JSON artifact (an artifact needs three or four). */
export const MAX_NESTING = 64;
/** Keys of one YAML mapping (the YAML reader checks them for duplicates pairwise). */
export const MAX_MAPPING_KEYS = 1_000;

/** Words that end a select list begun at the same depth (SELECT's clauses, or the next query of a UNION). */
const SELECT_LIST_ENDS = new Set([
  'from',
  'into',
  'where',
  'group',
  'having',
  'window',
  'union',
  'intersect',
  'except',
  'order',
  'limit',
  'offset',
  'fetch',
  'for',
]);

const isWordStart = (code: number) =>
  (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95; // A-Z a-z _
const isWordPart = (code: number) => isWordStart(code) || (code >= 48 && code <= 57) || code === 36; // 0-9 $

/**
 * The most columns one SELECT lists: the commas of a select list (from SELECT to its FROM, WHERE, … at the
 * same depth of parentheses and brackets) plus one, outside quotes and comments. Commas between CTEs, in FROM, GROUP BY
 * or a function's arguments are not columns. A clause's word after AS or a dot is a name (`x AS order`, `t.limit`),
 * which ends no list. A linear scan, not a parse.
 */
function selectedColumns(sql: string): number {
  let depth = 0;
  /** By depth: the commas of the select list open there, or -1 when none is. */
  const open: number[] = [-1];
  let most = 0;
  /** After AS or a dot: the next word names a column or alias, even a clause's word. */
  let nameNext = false;
  const end = (at: number) => {
    const commas = open[at] ?? -1;
    if (commas >= 0) most = Math.max(most, commas + 1);
    open[at] = -1;
  };
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i];
    const code = sql.charCodeAt(i);
    const named = nameNext;
    if (code > 32) nameNext = c === '.';
    if (c === "'" || c === '"') {
      const close = sql.indexOf(c, i + 1);
      i = close < 0 ? sql.length : close; // a doubled quote closes and reopens: same result
    } else if (c === '-' && sql[i + 1] === '-') {
      const close = sql.indexOf('\n', i);
      i = close < 0 ? sql.length : close;
    } else if (c === '/' && sql[i + 1] === '*') {
      const close = sql.indexOf('*/', i + 2);
      i = close < 0 ? sql.length : close + 1;
    } else if (c === '$') {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i, i + 64))?.[0];
      if (tag) {
        const close = sql.indexOf(tag, i + tag.length);
        i = close < 0 ? sql.length : close + tag.length - 1;
      }
    } else if (c === '(' || c === '[') open[++depth] = -1;
    else if (c === ')' || c === ']') {
      end(depth);
      depth = Math.max(0, depth - 1);
    } else if (c === ',') {
      if ((open[depth] ?? -1) >= 0) open[depth] = (open[depth] ?? 0) + 1;
    } else if (isWordStart(code)) {
      let next = i + 1;
      while (next < sql.length && isWordPart(sql.charCodeAt(next))) next++;
      // Only words of 3 to 9 letters can be SELECT or a clause that ends its list.
      if (next - i === 2)
        nameNext = (code | 32) === 97 && (sql.charCodeAt(i + 1) | 32) === 115; // AS
      else if (next - i >= 3 && next - i <= 9) {
        const word = sql.slice(i, next).toLowerCase();
        // SELECT follows AS in CREATE VIEW v AS SELECT: it is always SELECT.
        if (word === 'select') {
          end(depth);
          open[depth] = 0;
        } else if (!named && SELECT_LIST_ENDS.has(word)) end(depth);
      }
      i = next - 1;
    } else if (code >= 48 && code <= 57) {
      while (i + 1 < sql.length && isWordPart(sql.charCodeAt(i + 1))) i++; // 1e10, 2x: not a word
    }
  }
  for (let at = 0; at < open.length; at++) end(at);
  return most;
}

/** Whether `text` holds `character` more than `limit` times. */
function holdsMore(text: string, character: string, limit: number): boolean {
  let at = -1;
  for (let seen = 0; seen <= limit; seen++) {
    at = text.indexOf(character, at + 1);
    if (at < 0) return false;
  }
  return true;
}

/** Matches of `pattern` (global) in `text`, counting no further than `limit + 1`. */
function countUpTo(text: string, pattern: RegExp, limit: number): number {
  let n = 0;
  pattern.lastIndex = 0;
  while (n <= limit && pattern.exec(text)) n++;
  return n;
}

/** A quoted string or name, a comment, a word, a number or one symbol. */
// An unterminated one runs to the end, so each character is read once.
const SQL_TOKEN =
  /'(?:[^']|'')*(?:'|$)|"(?:[^"]|"")*(?:"|$)|--[^\n]*|\/\*(?:[^*]|\*(?!\/))*(?:\*\/|$)|[A-Za-z_][A-Za-z0-9_$]*|[0-9]+|[^\sA-Za-z0-9_]/g;
const DOCUMENT_NODE = /\n|,/g;

/** How deep `[` and `{` nest (quotes not told apart: a bound, not a parse). */
function flowDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (const c of text) {
    if (c === '[' || c === '{') deepest = Math.max(deepest, ++depth);
    else if ((c === ']' || c === '}') && depth > 0) depth--;
  }
  return deepest;
}

/** The most keys of one mapping: block mappings by indentation, flow mappings `{…}` by braces. */
function largestYamlMapping(text: string): number {
  let largest = 0;
  const blockKeys = new Map<number, number>(); // indentation → keys of the mapping open there
  for (const line of text.split('\n')) {
    const match = /^( *)((?:- +)*)([^\s#\-{[][^:#]*):(?:\s|$)/.exec(line);
    if (!match) continue;
    const [, indent = '', markers = ''] = match;
    const at = indent.length + markers.length;
    for (const open of blockKeys.keys()) {
      if (open > at || (markers && open >= indent.length)) blockKeys.delete(open);
    }
    const keys = (blockKeys.get(at) ?? 0) + 1;
    blockKeys.set(at, keys);
    largest = Math.max(largest, keys);
  }
  const flowKeys: number[] = [];
  for (const c of text) {
    if (c === '{') flowKeys.push(0);
    else if (c === '}') flowKeys.pop();
    else if (c === ':' && flowKeys.length > 0) {
      const keys = (flowKeys.pop() ?? 0) + 1;
      flowKeys.push(keys);
      largest = Math.max(largest, keys);
    }
  }
  return largest;
}

/** Why a text is refused before it is parsed: the service's 400 `artifact_too_large` / `gate1_too_large`. */
export interface BoundsRefusal {
  code: 'artifact_too_large' | 'gate1_too_large';
  message: string;
  /** The count found (when known) and the limit it passes. */
  details: Record<string, number>;
}

class Refused extends Error {
  constructor(readonly refusal: BoundsRefusal) {
    super(refusal.message);
  }
}

const n = countText;

function refusing(code: BoundsRefusal['code']) {
  return (message: string, details: Record<string, number>): never => {
    throw new Refused({ code, message, details });
  };
}

function refusalOf(check: () => void): BoundsRefusal | undefined {
  try {
    check();
    return undefined;
  } catch (error) {
    if (error instanceof Refused) return error.refusal;
    throw error;
  }
}

/**
 * Why an artifact of `kind` (`sql`, `yaml`, `json`: a definition's `mimeType`, else its file name's) is
 * refused: its view would have more columns than PostgreSQL allows, or it is too big to parse quickly.
 * Undefined when it is within bounds, or of a kind these checks cannot tell (left to the parser).
 */
export function artifactBoundsRefusal(kind: string | undefined, content: string): BoundsRefusal | undefined {
  return refusalOf(() => checkArtifact(kind, content));
}

function checkArtifact(kind: string | undefined, content: string): void {
  const refuse = refusing('artifact_too_large');
  if (kind === 'sql') {
    // Every column after the first follows a comma, and every word or symbol takes a character at least: a
    // view short of a bound by those counts is within it without a scan.
    const columns = holdsMore(content, ',', MAX_VIEW_COLUMNS - 1) ? selectedColumns(content) : 0;
    if (columns > MAX_VIEW_COLUMNS) {
      refuse(
        `The view selects more than ${n(MAX_VIEW_COLUMNS)} columns (${n(columns)} listed), PostgreSQL's limit; split it into several views.`,
        { columns, limit: MAX_VIEW_COLUMNS },
      );
    }
    if (content.length > MAX_SQL_TOKENS && countUpTo(content, SQL_TOKEN, MAX_SQL_TOKENS) > MAX_SQL_TOKENS) {
      refuse(
        `The SQL artifact has more than ${n(MAX_SQL_TOKENS)} words and symbols, the most the server parses; a view of ${n(MAX_VIEW_COLUMNS)} columns with long expressions fits within it.`,
        { limit: MAX_SQL_TOKENS },
      );
    }
  } else if (kind === 'yaml' || kind === 'json') {
    if (countUpTo(content, DOCUMENT_NODE, MAX_DOCUMENT_NODES) > MAX_DOCUMENT_NODES) {
      refuse(
        `The artifact has more than ${n(MAX_DOCUMENT_NODES)} lines and list items, the most the server parses; a table has at most ${n(MAX_VIEW_COLUMNS)} columns (PostgreSQL's limit).`,
        { limit: MAX_DOCUMENT_NODES },
      );
    }
    checkDocumentShape('artifact', content, kind === 'yaml', refuse);
  }
}

/** Nesting and (for YAML) the keys of one mapping. */
function checkDocumentShape(
  what: string,
  content: string,
  yaml: boolean,
  refuse: (message: string, details: Record<string, number>) => never,
): void {
  const depth = flowDepth(content);
  if (depth > MAX_NESTING) {
    refuse(`The ${what} nests lists and objects ${n(depth)} deep, over the limit of ${MAX_NESTING}.`, {
      depth,
      limit: MAX_NESTING,
    });
  }
  const keys = yaml ? largestYamlMapping(content) : 0;
  if (keys > MAX_MAPPING_KEYS) {
    refuse(`One mapping of the ${what} has ${n(keys)} keys, over the limit of ${n(MAX_MAPPING_KEYS)}.`, {
      keys,
      limit: MAX_MAPPING_KEYS,
    });
  }
}

/**
 * Why a gate1.yml is refused before it is parsed: longer than MAX_GATE1_CHARACTERS (code points, as the
 * contract counts them), more lines and list items than MAX_GATE1_NODES, nested too deep, or one mapping of too many keys.
 */
export function gate1BoundsRefusal(content: string): BoundsRefusal | undefined {
  return refusalOf(() => {
    const refuse = refusing('gate1_too_large');
    // UTF-16 units bound the code points from above: count these only when it could matter.
    const characters = content.length > MAX_GATE1_CHARACTERS ? characterCount(content) : content.length;
    if (characters > MAX_GATE1_CHARACTERS) {
      refuse(
        `The gate1.yml is ${n(characters)} characters long, over the limit of ${n(MAX_GATE1_CHARACTERS)} characters.`,
        { characters, limit: MAX_GATE1_CHARACTERS },
      );
    }
    if (countUpTo(content, DOCUMENT_NODE, MAX_GATE1_NODES) > MAX_GATE1_NODES) {
      refuse(
        `The gate1.yml has more than ${n(MAX_GATE1_NODES)} lines and list items, the most the service parses.`,
        { limit: MAX_GATE1_NODES },
      );
    }
    checkDocumentShape('gate1.yml', content, true, refuse);
  });
}
