// The few jq filters people pass to --jq most (`.id`, `.a.b`, `select(.state == "CERTIFIED")`, `{id,name}`,
// joined by `|`), evaluated without jq: loading jq's WebAssembly costs a process about 35 ms of CPU, more
// than the list it filters. Only a filter wholly inside this grammar is taken, and only a record whose
// answer is certain is answered here; everything else goes to jq as before (jq.ts):
//
//   filter  := stage ('|' stage)*
//   stage   := path | 'select(' path ')' | 'select(' path ('=='|'!=') literal ')' | '{' key (',' key)* '}'
//            | 'length' | 'ascii_downcase' | 'ascii_upcase'
//   path    := '.' | ('.' name)+                    name: [A-Za-z_][A-Za-z0-9_]*, not a jq keyword
//   key     := name | name ':' path
//   literal := "text without \ or control characters" | integer | true | false | null
//
// A record's answer is left to jq when a step would be jq's error (indexing a string, a number, an array)
// or when printing could differ from jq's: numbers other than safe integers, strings holding NUL, DEL or
// a lone surrogate (jq refuses the input). test/cli/jq-subset.test.ts compares the answers with jq's over many filters and records.
import { escapedJson } from '../core/ndjson.js';

/** One record's output lines (the record as one line of JSON) as --jq prints them (jq.ts: strings raw, other
 *  values compact JSON, escaped as NDJSON is), or undefined when jq must answer for this record. */
export type SimpleFilter = (line: string) => string[] | undefined;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** A stage's answer: no value (select dropped it), one value, or UNKNOWN (jq decides). */
const UNKNOWN = Symbol('unknown');
type Stage = (value: Json) => Json | undefined | typeof UNKNOWN;

const KEYWORDS = new Set([
  'and',
  'or',
  'not',
  'if',
  'then',
  'elif',
  'else',
  'end',
  'as',
  'def',
  'reduce',
  'foreach',
  'try',
  'catch',
  'label',
  'import',
  'include',
  '__loc__',
]);
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The filter as a function, or undefined when it is not wholly inside the subset (jq then runs it). */
export function compileSimpleFilter(filter: string): SimpleFilter | undefined {
  if (filter.length > 1000) return undefined;
  const stages: Stage[] = [];
  for (const text of splitTopLevel(filter, '|')) {
    const stage = compileStage(text.trim());
    if (stage === undefined) return undefined;
    stages.push(stage);
  }
  if (stages.length === 0) return undefined;
  return (line) => {
    // jq refuses the whole input at a lone surrogate's escape (JSON.stringify writes no other \uD8xx).
    if (/\\u[dD][89a-fA-F]/.test(line)) return undefined;
    let value = JSON.parse(line) as Json;
    for (const stage of stages) {
      const next = stage(value);
      if (next === UNKNOWN) return undefined;
      if (next === undefined) return [];
      value = next;
    }
    const text = printed(value);
    return text === undefined ? undefined : [text];
  };
}

/** `text` cut at `separator` outside parentheses, braces and strings; undefined pieces never occur. */
function splitTopLevel(text: string, separator: string): string[] {
  const pieces: string[] = [];
  let depth = 0;
  let inString = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '(' || c === '{') depth++;
    else if (c === ')' || c === '}') depth--;
    else if (c === separator && depth === 0) {
      pieces.push(text.slice(start, i));
      start = i + 1;
    }
  }
  pieces.push(text.slice(start));
  return pieces;
}

function compileStage(text: string): Stage | undefined {
  const path = compilePath(text);
  if (path !== undefined) return path;
  if (Object.hasOwn(BUILTINS, text)) return BUILTINS[text];
  const select = /^select\s*\((.*)\)$/s.exec(text);
  if (select) return compileSelect((select[1] ?? '').trim());
  const object = /^\{(.*)\}$/s.exec(text);
  if (object) return compileObject(object[1] ?? '');
  return undefined;
}

/** ASCII letters only, as jq changes them (any other character is kept). */
function asciiCase(text: string, to: 'lower' | 'upper'): string {
  return to === 'lower'
    ? text.replace(/[A-Z]+/g, (run) => run.toLowerCase())
    : text.replace(/[a-z]+/g, (run) => run.toUpperCase());
}

/**
 * jq's builtins taken here, for the inputs where their answer is certain: `length` (a string's code
 * points, an array's items, an object's keys, null's 0, a number's absolute value), `ascii_downcase` and
 * `ascii_upcase` of a string. UNKNOWN where jq fails (a boolean's length, a number's case).
 */
const BUILTINS: Record<string, Stage> = {
  length: (value) => {
    if (value === null) return 0;
    if (typeof value === 'string') return [...value].length;
    if (typeof value === 'number') return Math.abs(value);
    if (Array.isArray(value)) return value.length;
    if (typeof value === 'object') return Object.keys(value).length;
    return UNKNOWN;
  },
  ascii_downcase: (value) => (typeof value === 'string' ? asciiCase(value, 'lower') : UNKNOWN),
  ascii_upcase: (value) => (typeof value === 'string' ? asciiCase(value, 'upper') : UNKNOWN),
};

/** `.` or `.a.b…`: null for a missing key or a null value, UNKNOWN where jq would fail. */
function compilePath(text: string): Stage | undefined {
  if (text === '.') return (value) => value;
  if (!/^(\.[A-Za-z_][A-Za-z0-9_]*)+$/.test(text)) return undefined;
  const names = text.split('.').slice(1);
  if (names.some((name) => !NAME.test(name) || KEYWORDS.has(name))) return undefined;
  return (value) => {
    let current: Json = value;
    for (const name of names) {
      if (current === null) continue;
      if (typeof current !== 'object' || Array.isArray(current)) return UNKNOWN;
      current = Object.hasOwn(current, name) ? (current[name] ?? null) : null;
    }
    return current;
  };
}

function compileSelect(text: string): Stage | undefined {
  const comparison = /^(.*?)\s*(==|!=)\s*(.*)$/s.exec(text);
  const path = compilePath(comparison ? (comparison[1] ?? '').trim() : text);
  if (path === undefined) return undefined;
  if (!comparison) {
    return (value) => {
      const tested = path(value);
      if (tested === UNKNOWN || tested === undefined) return UNKNOWN;
      return tested === null || tested === false ? undefined : value;
    };
  }
  const literal = literalOf((comparison[3] ?? '').trim());
  if (literal === UNKNOWN) return undefined;
  const equal = comparison[2] === '==';
  return (value) => {
    const tested = path(value);
    if (tested === UNKNOWN || tested === undefined) return UNKNOWN;
    // A literal is a scalar: equal only to the same type and value (jq compares numbers by value).
    return (tested === literal) === equal ? value : undefined;
  };
}

function literalOf(text: string): Json | typeof UNKNOWN {
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (text === 'null') return null;
  if (/^-?(0|[1-9][0-9]{0,14})$/.test(text)) return Number(text);
  // No escapes, no interpolation `\(…)`, nothing a terminal or jq's lexer reads otherwise.
  if (/^"[^"\\\u0000-\u001f\u007f-\u009f]*"$/.test(text)) return text.slice(1, -1);
  return UNKNOWN;
}

/** `{a, b}` and `{a: .x.y}`: the keys in the order written. */
function compileObject(text: string): Stage | undefined {
  const entries: Array<[string, Stage]> = [];
  for (const part of splitTopLevel(text, ',')) {
    const entry = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?::(.*))?$/s.exec(part);
    if (!entry) return undefined;
    const key = entry[1] ?? '';
    if (KEYWORDS.has(key) || entries.some(([k]) => k === key)) return undefined;
    const path = compilePath(entry[2] === undefined ? `.${key}` : entry[2].trim());
    if (path === undefined) return undefined;
    entries.push([key, path]);
  }
  if (entries.length === 0) return undefined;
  return (value) => {
    const built: { [key: string]: Json } = {};
    for (const [key, path] of entries) {
      const field = path(value);
      if (field === UNKNOWN || field === undefined) return UNKNOWN;
      built[key] = field;
    }
    return built;
  };
}

/** jq -r -c's line for a value, or undefined when jq might print it otherwise. */
function printed(value: Json): string | undefined {
  // An empty line alone is one jq's batch in output-jq.ts does not print: jq answers it as before.
  if (typeof value === 'string') return value !== '' && plainString(value) ? value : undefined;
  return printable(value) ? escapedJson(JSON.stringify(value)) : undefined;
}

/** NUL, DEL and lone surrogates are where jq's printing and JSON.stringify's part. */
function plainString(text: string): boolean {
  return !/[\u0000\u007f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}

function printable(value: Json): boolean {
  if (value === null || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isSafeInteger(value) && !Object.is(value, -0);
  if (typeof value === 'string') return plainString(value);
  if (Array.isArray(value)) return value.every(printable);
  for (const key of Object.keys(value)) {
    if (!plainString(key) || /^[0-9]/.test(key) || !printable(value[key] ?? null)) return false;
  }
  return true;
}
