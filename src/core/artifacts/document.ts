import type { Document, LineCounter, Node } from 'yaml';
import type { Yaml } from '../libraries/yaml.js';
import { positionAt } from './position.js';
import type { ArtifactError, Position } from './types.js';

export type DocumentPath = ReadonlyArray<string | number>;

/** A parsed YAML or JSON document: its plain value, and where each part of it was written. */
export interface LocatedDocument {
  value: unknown;
  /** Position of the map key (or list item) the path ends at; the nearest located ancestor when the path goes further. */
  locate(path: DocumentPath): Position;
}

type Loaded = { ok: true; document: LocatedDocument } | { ok: false; error: ArtifactError };

/** Aliases let a small file expand into a huge value; this bounds it. */
const MAX_ALIAS_COUNT = 100;

export function yamlDocument(yaml: Yaml, content: string): Loaded {
  let lineCounter = new yaml.LineCounter();
  let doc = parseYaml(yaml, content, lineCounter);
  if (doc.errors[0]?.code === 'MISSING_CHAR' && /closing ["']quote/.test(doc.errors[0].message)) {
    // PyYAML and js-yaml (and so dbt, Soda, datacontract) read a quoted scalar whose next line is no deeper
    // than its key; the `yaml` package, strict to YAML 1.2's s-l+flow-in-block(n), does not. Such lines are
    // indented one step further and the file read again; only a clean second reading is kept.
    const relaxedCounter = new yaml.LineCounter();
    const relaxed = parseYaml(yaml, indentQuotedContinuations(content), relaxedCounter);
    if (relaxed.errors.length === 0) {
      doc = relaxed;
      lineCounter = relaxedCounter;
    }
  }
  const [first] = doc.errors;
  if (first) {
    const { line, col } = lineCounter.linePos(first.pos[0]);
    return {
      ok: false,
      error: { code: 'syntax_error', message: `YAML syntax error: ${first.message}`, line, column: col },
    };
  }
  try {
    const value: unknown = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    return { ok: true, document: { value, locate: locatorOf(yaml, doc, lineCounter) } };
  } catch (err) {
    return { ok: false, error: { code: 'syntax_error', message: `YAML error: ${(err as Error).message}` } };
  }
}

function parseYaml(yaml: Yaml, content: string, lineCounter: LineCounter): Document.Parsed {
  return yaml.parseDocument(content, {
    lineCounter,
    prettyErrors: false,
    uniqueKeys: true,
    logLevel: 'error',
  });
}

/** Continuation lines of a multi-line quoted scalar, indented past the key (or list item) the scalar belongs to. */
export function indentQuotedContinuations(text: string): string {
  const lines = text.split('\n');
  let open: { quote: string; indent: number } | undefined;
  for (const [i, original] of lines.entries()) {
    let line = original;
    let from = 0;
    if (open) {
      const indent = /^ */.exec(line)?.[0].length ?? 0;
      if (line.trim() !== '' && indent <= open.indent) {
        line = ' '.repeat(open.indent + 1 - indent) + line;
        lines[i] = line;
      }
      const end = closingQuote(line, 0, open.quote);
      if (end < 0) continue;
      open = undefined;
      from = end + 1;
    }
    if (from > 0) continue;
    const value = /^(\s*(?:-\s+)*)((?:[^\s#"'][^#"']*?:\s+)?)(["'])/.exec(line);
    if (!value) continue;
    const quote = value[3] ?? '"';
    const quoteAt = (value[1]?.length ?? 0) + (value[2]?.length ?? 0);
    if (closingQuote(line, quoteAt + 1, quote) < 0) open = { quote, indent: value[1]?.length ?? 0 };
  }
  return lines.join('\n');
}

function closingQuote(line: string, from: number, quote: string): number {
  for (let i = from; i < line.length; i++) {
    if (quote === '"' && line[i] === '\\') i++;
    else if (line[i] === quote) {
      if (quote === "'" && line[i + 1] === "'") i++;
      else return i;
    }
  }
  return -1;
}

/**
 * JSON is checked by the strict JSON parser; a duplicate key, and the positions of its parts (wanted only for an
 * error), come from reading it again as YAML (a superset), which is done only when needed: YAML's reader is two
 * orders slower, and a plan reads thousands of artifacts.
 */
export function loadJson(yaml: Yaml, content: string): Loaded {
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch (err) {
    return { ok: false, error: jsonSyntaxError(content, (err as Error).message) };
  }
  const asYaml = yamlReading(yaml, content);
  if (keysWritten(content) !== keysKept(value)) {
    const { doc, lineCounter } = asYaml();
    const duplicate = doc.errors.find((e) => e.code === 'DUPLICATE_KEY');
    if (duplicate) {
      const { line, col } = lineCounter.linePos(duplicate.pos[0]);
      return {
        ok: false,
        error: { code: 'syntax_error', message: 'JSON error: duplicate key in an object', line, column: col },
      };
    }
  }
  return { ok: true, document: { value, locate: lazyLocator(yaml, asYaml) } };
}

/**
 * The document of JSON text `content` that was written from `value` (JSON.stringify's, which writes no key
 * twice): nothing is parsed; the text is read as YAML only if a position is wanted (an error's).
 */
export function writtenJson(yaml: Yaml, content: string, value: unknown): LocatedDocument {
  return { value, locate: lazyLocator(yaml, yamlReading(yaml, content)) };
}

/** The text read as YAML (a superset of JSON) once, when first asked. */
function yamlReading(yaml: Yaml, content: string): () => { doc: Document; lineCounter: LineCounter } {
  let read: { doc: Document; lineCounter: LineCounter } | undefined;
  return () => {
    if (read !== undefined) return read;
    const lineCounter = new yaml.LineCounter();
    read = { doc: parseYaml(yaml, content, lineCounter), lineCounter };
    return read;
  };
}

function lazyLocator(
  yaml: Yaml,
  asYaml: () => { doc: Document; lineCounter: LineCounter },
): LocatedDocument['locate'] {
  let locate: LocatedDocument['locate'] | undefined;
  return (path) => {
    locate ??= locatorOf(yaml, asYaml().doc, asYaml().lineCounter);
    return locate(path);
  };
}

/**
 * The members of objects written in valid JSON text: each string token followed by a colon is a key. Read
 * character by character (a plan reads thousands of artifacts: a match object per string was most of the
 * garbage of reading one; with definitionSummary's and readColumns' loops, a no-change plan of 2,000 models
 * allocates 16 MB instead of 38 reading the artifacts it compares).
 */
function keysWritten(content: string): number {
  let keys = 0;
  const length = content.length;
  let at = content.indexOf('"');
  while (at >= 0) {
    // The string's end: the next quote no backslash escapes.
    let end = at + 1;
    for (; end < length; end += 1) {
      const code = content.charCodeAt(end);
      if (code === BACKSLASH) end += 1;
      else if (code === QUOTE) break;
    }
    if (end >= length) break;
    let next = end + 1;
    while (next < length && WHITE_SPACE.test(content[next] as string)) next += 1;
    if (content.charCodeAt(next) === COLON) keys += 1;
    at = content.indexOf('"', next);
  }
  return keys;
}

const WHITE_SPACE = /\s/;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

/** The members of the objects of a parsed value: fewer than written when a key was written twice. */
function keysKept(value: unknown): number {
  let keys = 0;
  const stack = [value]; // not recursive: a value may nest thousands deep
  while (stack.length > 0) {
    const next = stack.pop();
    if (next === null || typeof next !== 'object') continue;
    if (Array.isArray(next)) {
      for (const item of next as unknown[]) if (item !== null && typeof item === 'object') stack.push(item);
      continue;
    }
    for (const key in next) {
      if (!Object.hasOwn(next, key)) continue;
      keys += 1;
      const item = (next as Record<string, unknown>)[key];
      if (item !== null && typeof item === 'object') stack.push(item);
    }
  }
  return keys;
}

function jsonSyntaxError(content: string, parserMessage: string): ArtifactError {
  const at = /at position (\d+)/.exec(parserMessage);
  const offset = at ? Number(at[1]) : content.length;
  const reason = parserMessage
    .replace(/\s*in JSON at position \d+.*$/s, '')
    .replace(/, (?:\.\.\.)?".*" is not valid JSON$/s, '')
    .replace(/^Unexpected end of JSON input$/, 'unexpected end of input');
  return { code: 'syntax_error', message: `JSON syntax error: ${reason}`, ...positionAt(content, offset) };
}

function locatorOf(yaml: Yaml, doc: Document, lineCounter: LineCounter): LocatedDocument['locate'] {
  const { isAlias, isMap, isScalar, isSeq } = yaml;
  const at = (node: unknown): Position | undefined => {
    const offset = (node as Node | null)?.range?.[0];
    if (offset === undefined) return undefined;
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  return (path) => {
    let node: unknown = doc.contents;
    let found = at(node) ?? { line: 1, column: 1 };
    for (const segment of path) {
      if (isAlias(node)) break;
      let next: unknown;
      let mark: unknown;
      if (isMap(node)) {
        const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(segment));
        next = pair?.value;
        mark = pair?.key;
      } else if (isSeq(node) && typeof segment === 'number') {
        next = node.items[segment];
        mark = next;
      }
      const position = at(mark);
      if (!position) break;
      found = position;
      node = next;
    }
    return found;
  };
}
