// Cheap bounds on a definition artifact, checked before the full parse: the parser's time grows with
// the number of list items (a 7 MB CREATE VIEW of 800,000 columns held the request thread 83 s), so
// an artifact no warehouse could hold is refused in one linear scan.
import { artifactKindOf } from '../core/artifacts/index.js';
import { badRequest } from './errors.js';

/** The request body limit of the definition routes (the content is JSON-escaped inside it). */
export const ARTIFACT_BODY_LIMIT_BYTES = 2 * 1024 * 1024;
/** PostgreSQL's own limit on the columns of a table or view. */
export const MAX_VIEW_COLUMNS = 1600;
/** List items (commas, YAML `- ` entries) in one artifact: room for 1,600 columns with their expressions. */
export const MAX_LIST_ITEMS = 10_000;

interface ListCounts {
  /** Commas outside any parentheses, quotes and comments: the select list's separators (and FROM's, GROUP BY's). */
  topLevel: number;
  /** Every comma outside quotes and comments. */
  total: number;
}

/** One pass over SQL text, skipping '…', "…", $tag$…$tag$, -- and /* … *\/. */
function countSqlCommas(sql: string): ListCounts {
  let depth = 0;
  let topLevel = 0;
  let total = 0;
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
    else if (c === ',') {
      total++;
      if (depth === 0) topLevel++;
    }
  }
  return { topLevel, total };
}

/** YAML and JSON: commas and block-sequence entries (`- `) anywhere. */
function countDocumentItems(text: string): number {
  let items = 0;
  for (let i = text.indexOf(','); i >= 0; i = text.indexOf(',', i + 1)) items++;
  for (const _ of text.matchAll(/^[ \t]*-(?=[ \t]|$)/gm)) items++;
  return items;
}

/**
 * Refuses (400 `artifact_too_large`) an artifact whose view would have more columns than PostgreSQL
 * allows or whose lists are too long to read in reasonable time. Kinds it cannot tell are left to the parser.
 */
export function checkArtifactBounds(input: { filename: string; content: string; mimeType?: string }): void {
  const kind = input.mimeType ?? artifactKindOf(input.filename);
  const refuse = (message: string, details: Record<string, number>) => {
    throw badRequest('artifact_too_large', message, details);
  };
  if (kind === 'sql') {
    const { topLevel, total } = countSqlCommas(input.content);
    if (topLevel + 1 > MAX_VIEW_COLUMNS) {
      refuse(
        `The view selects more than ${MAX_VIEW_COLUMNS.toLocaleString('en')} columns (${(topLevel + 1).toLocaleString('en')} listed), PostgreSQL's limit; split it into several views.`,
        { columns: topLevel + 1, limit: MAX_VIEW_COLUMNS },
      );
    }
    if (total > MAX_LIST_ITEMS) {
      refuse(
        `The SQL artifact has ${total.toLocaleString('en')} list items (commas), over the limit of ${MAX_LIST_ITEMS.toLocaleString('en')}; a view of at most ${MAX_VIEW_COLUMNS.toLocaleString('en')} columns fits well within it.`,
        { items: total, limit: MAX_LIST_ITEMS },
      );
    }
  } else if (kind === 'yaml' || kind === 'json') {
    const items = countDocumentItems(input.content);
    if (items > MAX_LIST_ITEMS) {
      refuse(
        `The artifact has ${items.toLocaleString('en')} list items, over the limit of ${MAX_LIST_ITEMS.toLocaleString('en')}; a table has at most ${MAX_VIEW_COLUMNS.toLocaleString('en')} columns (PostgreSQL's limit).`,
        { items, limit: MAX_LIST_ITEMS },
      );
    }
  }
}
