// Cheap bounds on a definition artifact, checked before the full parse. The parser's time grows with
// the SQL's tokens and the YAML's nodes (and with the square of one mapping's keys): a 7 MB CREATE
// VIEW of 800,000 columns held the request thread 83 s, a YAML mapping of 30,000 keys 41 s. An
// artifact no warehouse could hold, or too big to read in about a second, is refused in linear scans.
import { artifactKindOf } from '../core/artifacts/index.js';
import { badRequest } from './errors.js';

/** The request body limit of the definition routes (the content is JSON-escaped inside it). */
export const ARTIFACT_BODY_LIMIT_BYTES = 2 * 1024 * 1024;
/** PostgreSQL's own limit on the columns of a table or view. */
export const MAX_VIEW_COLUMNS = 1600;
/** Words, numbers and symbols of a SQL artifact: room for 1,600 columns with short expressions. */
export const MAX_SQL_TOKENS = 20_000;
/** Lines and commas of a YAML or JSON artifact: room for 1,600 columns with a few keys each. */
export const MAX_DOCUMENT_NODES = 15_000;
/** Depth of `[`/`{` nesting in a YAML or JSON artifact (an artifact needs three or four). */
export const MAX_NESTING = 64;
/** Keys of one YAML mapping (the YAML reader checks them for duplicates pairwise). */
export const MAX_MAPPING_KEYS = 1_000;

/** Commas outside parentheses, quotes and comments: the select list's separators (and FROM's, GROUP BY's). */
function topLevelCommas(sql: string): number {
  let depth = 0;
  let commas = 0;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i];
    if (c === "'" || c === '"') {
      const end = sql.indexOf(c, i + 1);
      i = end < 0 ? sql.length : end; // a doubled quote closes and reopens: same result
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 1;
    } else if (c === '$') {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i, i + 64))?.[0];
      if (tag) {
        const end = sql.indexOf(tag, i + tag.length);
        i = end < 0 ? sql.length : end + tag.length - 1;
      }
    } else if (c === '(') depth++;
    else if (c === ')') depth = Math.max(0, depth - 1);
    else if (c === ',' && depth === 0) commas++;
  }
  return commas;
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

/**
 * Refuses (400 `artifact_too_large`) an artifact whose view would have more columns than PostgreSQL
 * allows, or too big to parse quickly. Kinds it cannot tell are left to the parser.
 */
export function checkArtifactBounds(input: { filename: string; content: string; mimeType?: string }): void {
  const kind = input.mimeType ?? artifactKindOf(input.filename);
  const { content } = input;
  const refuse = (message: string, details: Record<string, number>): never => {
    throw badRequest('artifact_too_large', message, details);
  };
  const n = (value: number) => value.toLocaleString('en');
  if (kind === 'sql') {
    const columns = topLevelCommas(content) + 1;
    if (columns > MAX_VIEW_COLUMNS) {
      refuse(
        `The view selects more than ${n(MAX_VIEW_COLUMNS)} columns (${n(columns)} listed), PostgreSQL's limit; split it into several views.`,
        { columns, limit: MAX_VIEW_COLUMNS },
      );
    }
    if (countUpTo(content, SQL_TOKEN, MAX_SQL_TOKENS) > MAX_SQL_TOKENS) {
      refuse(
        `The SQL artifact has more than ${n(MAX_SQL_TOKENS)} words and symbols, the most the server parses; a view of ${n(MAX_VIEW_COLUMNS)} columns with short expressions fits within it.`,
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
    const depth = flowDepth(content);
    if (depth > MAX_NESTING) {
      refuse(`The artifact nests lists and objects ${n(depth)} deep, over the limit of ${MAX_NESTING}.`, {
        depth,
        limit: MAX_NESTING,
      });
    }
    const keys = kind === 'yaml' ? largestYamlMapping(content) : 0;
    if (keys > MAX_MAPPING_KEYS) {
      refuse(`One mapping of the artifact has ${n(keys)} keys, over the limit of ${n(MAX_MAPPING_KEYS)}.`, {
        keys,
        limit: MAX_MAPPING_KEYS,
      });
    }
  }
}
