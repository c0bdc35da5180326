// validateGate1: YAML syntax, the schema, then the checks the schema cannot express (regexes as
// PostgreSQL reads them, SQL safety, null-rate order, duplicate names). Every problem is reported.
import { closest } from '../did-you-mean.js';
import type { Diagnostic } from './diagnostic.js';
import { byPosition } from './diagnostic.js';
import type { Finding } from './finding.js';
import { checkPredicateSql, loadPredicateParser, PredicateParserMissing } from './predicate-sql.js';
import { checkRegex } from './regex-check.js';
import type { Gate1Document } from './schema.js';
import { ALLOWED_KEYS, DECLARES_NOTHING, GATE1_SEVERITIES, MAX_COLUMN_LENGTH } from './schema.js';
import type { Yaml } from '../libraries/yaml.js';
import { loadYaml } from '../libraries/yaml.js';
import type { SchemaError, SchemaValidator } from './schema-validator.js';
import { loadSchemaValidator } from './schema-validator.js';
import type { PathSegment } from './source-map.js';
import { formatPath, SourceMap } from './source-map.js';

export interface ValidateOptions {
  /** Shown in every diagnostic, e.g. `gate1.yml` or `<stdin>`. */
  fileName: string;
  /** The table's columns, when known (the server knows them): other column names are refused. */
  columns?: Iterable<string>;
}

/** What validateGate1 reads a gate1.yml with: yaml, and the schema's validator (ajv). */
export interface Gate1Libraries {
  yaml: Yaml;
  schemaErrors: SchemaValidator;
}

export async function loadGate1Libraries(): Promise<Gate1Libraries> {
  const [yaml, schemaErrors] = await Promise.all([loadYaml(), loadSchemaValidator()]);
  return { yaml, schemaErrors };
}

export interface ValidationResult {
  /** Every problem, in file order. */
  diagnostics: Diagnostic[];
  /** The parsed document, present when there is no error (warnings allowed). */
  document?: Gate1Document;
}

type Entry = Record<string, unknown>;

function isEntry(v: unknown): v is Entry {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return 'empty';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  const text = JSON.stringify(value);
  return `${typeof value === 'string' ? 'the text' : `the ${typeof value}`} ${text.length > 40 ? `${text.slice(0, 37)}…` : text}`;
}

const TYPE_WORDS: Record<string, string> = {
  array: "a list (one entry per line, each starting with '- ')",
  object: 'a mapping of keys to values',
  string: 'a text value',
  number: 'a number',
};

function didYouMean(given: string, options: readonly string[]): string {
  const best = closest(given, options);
  return best ? ` (did you mean ${best}?)` : '';
}

function allowedKeysAt(path: readonly PathSegment[]): readonly string[] {
  const [list, , key] = path;
  if (path.length === 0) return ALLOWED_KEYS.document;
  if (key === 'nullRate') return ALLOWED_KEYS.nullRate;
  if (list === 'patternChecks') return ALLOWED_KEYS.patternCheck;
  if (list === 'customPredicates') return ALLOWED_KEYS.customPredicate;
  if (list === 'uniqueChecks') return ALLOWED_KEYS.uniqueCheck;
  return ALLOWED_KEYS.fieldOverride;
}

function parsePointer(pointer: string): PathSegment[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

class Gate1Validator {
  readonly diagnostics: Diagnostic[] = [];
  private map!: SourceMap;

  constructor(
    private readonly libraries: Gate1Libraries,
    private readonly text: string,
    private readonly opts: ValidateOptions,
  ) {}

  private add(
    path: readonly PathSegment[],
    at: { line: number; column: number },
    severity: Diagnostic['severity'],
    code: string,
    message: string,
  ): void {
    this.diagnostics.push({
      file: this.opts.fileName,
      ...at,
      path: formatPath(path),
      severity,
      code,
      message,
    });
  }

  run(): ValidationResult {
    const { yaml, schemaErrors } = this.libraries;
    const lines = new yaml.LineCounter();
    const doc = yaml.parseDocument(this.text, {
      lineCounter: lines,
      prettyErrors: false,
      uniqueKeys: true,
      logLevel: 'error',
    });
    this.map = new SourceMap(yaml, doc, lines, this.text);
    for (const [list, severity] of [
      [doc.errors, 'error'],
      [doc.warnings, 'warning'],
    ] as const) {
      for (const e of list) {
        const message = e.message.split('\n')[0] ?? e.message;
        this.add(
          [],
          this.map.position(e.pos[0]),
          severity,
          `yaml-${e.code.toLowerCase().replaceAll('_', '-')}`,
          `${message}; fix the YAML syntax here`,
        );
      }
    }
    if (doc.errors.length > 0) return this.result();
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (err) {
      this.add(
        [],
        { line: 1, column: 1 },
        'error',
        'yaml-alias',
        `${(err as Error).message}; write the entries out instead of expanding aliases`,
      );
      return this.result();
    }
    if (value === null || value === undefined) {
      this.add([], { line: 1, column: 1 }, 'error', 'empty-document', DECLARES_NOTHING);
      return this.result();
    }
    for (const e of schemaErrors(value)) this.schemaDiagnostic(e);
    if (isEntry(value)) this.checkEntries(value);
    const valid = !this.diagnostics.some((d) => d.severity === 'error');
    return this.result(valid ? (value as Gate1Document) : undefined);
  }

  private result(document?: Gate1Document): ValidationResult {
    const diagnostics = this.diagnostics.sort(byPosition);
    return document ? { diagnostics, document } : { diagnostics };
  }

  private schemaDiagnostic(e: SchemaError): void {
    const path = parsePointer(e.instancePath);
    const label = path.length > 0 ? formatPath(path) : 'the document';
    const at = this.map.at(path);
    switch (e.keyword) {
      case 'type': {
        const expected = String(e.params.type);
        const hint =
          path.length === 0 ? ' with the keys patternChecks, customPredicates and fieldOverrides' : '';
        this.add(
          path,
          at,
          'error',
          'schema-type',
          `${label} must be ${TYPE_WORDS[expected] ?? expected}${hint}, not ${describe(e.data)}`,
        );
        return;
      }
      case 'required': {
        const missing = String(e.params.missingProperty);
        const keys = allowedKeysAt([...path, 'x']);
        this.add(
          [...path, missing],
          at,
          'error',
          'schema-required',
          `missing "${missing}": this entry needs ${keys.join(', ')}`,
        );
        return;
      }
      case 'additionalProperties': {
        const extra = String(e.params.additionalProperty);
        const keys = allowedKeysAt(path);
        this.add(
          [...path, extra],
          this.map.at([...path, extra], true),
          'error',
          'schema-unknown-key',
          `unknown key "${extra}"${didYouMean(extra, keys)}; the keys allowed here are ${keys.join(', ')}`,
        );
        return;
      }
      case 'enum':
        this.add(
          path,
          at,
          'error',
          'schema-severity',
          `unknown severity ${typeof e.data === 'string' ? JSON.stringify(e.data) : describe(e.data)}${didYouMean(String(e.data), GATE1_SEVERITIES)}; use one of ${GATE1_SEVERITIES.join(', ')}`,
        );
        return;
      case 'minimum':
      case 'maximum': {
        const n = Number(e.data);
        const percent = n >= 2 && n <= 100 ? ` (did you mean ${n / 100}?)` : '';
        this.add(
          path,
          at,
          'error',
          'nullrate-range',
          `${label} is ${n}, outside [0, 1]; a null rate is a fraction of rows, 0.05 meaning 5%${percent}`,
        );
        return;
      }
      case 'minLength':
        this.add(path, at, 'error', 'schema-empty', `${label} must not be empty`);
        return;
      case 'maxLength': {
        const why =
          Number(e.params.limit) === MAX_COLUMN_LENGTH ? ' (PostgreSQL names are at most 63 bytes)' : '';
        this.add(
          path,
          at,
          'error',
          'schema-too-long',
          `${label} is longer than ${String(e.params.limit)} characters${why}; shorten it`,
        );
        return;
      }
      case 'pattern':
        this.add(
          path,
          at,
          'error',
          'schema-control-character',
          `${label} contains control characters; remove them`,
        );
        return;
      default:
        this.add(
          path,
          at,
          'error',
          `schema-${e.keyword.toLowerCase()}`,
          `${label} ${e.message ?? 'is invalid'}`,
        );
    }
  }

  private checkEntries(doc: Entry): void {
    const names = new Map<string, PathSegment[]>();
    const fields = new Map<string, PathSegment[]>();
    const columns = this.opts.columns ? new Set(this.opts.columns) : undefined;
    this.forEach(doc, 'patternChecks', (entry, path) => {
      this.unique(names, entry.name, [...path, 'name'], 'duplicate-name', 'check name');
      if (typeof entry.regex === 'string') this.findings([...path, 'regex'], checkRegex(entry.regex));
      this.knownColumn(columns, entry.column, [...path, 'column']);
    });
    this.forEach(doc, 'customPredicates', (entry, path) => {
      this.unique(names, entry.name, [...path, 'name'], 'duplicate-name', 'check name');
      if (typeof entry.sql === 'string') {
        this.findings([...path, 'sql'], checkPredicateSql(entry.sql, columns ? { columns } : {}));
      }
    });
    this.forEach(doc, 'uniqueChecks', (entry, path) => {
      this.unique(names, entry.name, [...path, 'name'], 'duplicate-name', 'check name');
      if (Array.isArray(entry.columns))
        entry.columns.forEach((column: unknown, i) =>
          this.knownColumn(columns, column, [...path, 'columns', i]),
        );
    });
    this.forEach(doc, 'fieldOverrides', (entry, path) => {
      this.unique(fields, entry.field, [...path, 'field'], 'duplicate-field', 'field');
      this.knownColumn(columns, entry.field, [...path, 'field']);
      const rate = entry.nullRate;
      if (!isEntry(rate) || typeof rate.warn !== 'number' || typeof rate.fail !== 'number') return;
      if (rate.warn > rate.fail && rate.fail >= 0 && rate.warn <= 1) {
        const warnPath = [...path, 'nullRate', 'warn'];
        this.add(
          warnPath,
          this.map.at(warnPath),
          'error',
          'nullrate-order',
          `warn (${rate.warn}) is above fail (${rate.fail}), so the warning could never come before the failure; make warn at most fail`,
        );
      }
    });
  }

  private forEach(doc: Entry, list: string, visit: (entry: Entry, path: PathSegment[]) => void): void {
    const items = doc[list];
    if (!Array.isArray(items)) return;
    items.forEach((entry: unknown, i) => {
      if (isEntry(entry)) visit(entry, [list, i]);
    });
  }

  private findings(path: PathSegment[], findings: Finding[]): void {
    for (const f of findings)
      this.add(path, this.map.inString(path, f.index ?? 0), f.severity, f.code, f.message);
  }

  private unique(
    seen: Map<string, PathSegment[]>,
    value: unknown,
    path: PathSegment[],
    code: string,
    what: string,
  ): void {
    if (typeof value !== 'string') return;
    const first = seen.get(value);
    if (!first) {
      seen.set(value, path);
      return;
    }
    const firstLine = this.map.at(first).line;
    this.add(
      path,
      this.map.at(path),
      'error',
      code,
      `the ${what} "${value}" is already used at line ${firstLine} (${formatPath(first)}); each ${what} must be unique, rename or merge one`,
    );
  }

  private knownColumn(columns: Set<string> | undefined, value: unknown, path: PathSegment[]): void {
    if (!columns || typeof value !== 'string' || columns.has(value)) return;
    this.add(
      path,
      this.map.at(path),
      'error',
      'unknown-column',
      `the table has no column "${value}"; use one of ${[...columns].join(', ')}`,
    );
  }
}

/**
 * Validates the text of a gate1.yml file with the libraries given (loadGate1Libraries). Pure: no I/O. Never
 * throws on any input (once PostgreSQL's parser is loaded).
 */
export function validateGate1With(
  libraries: Gate1Libraries,
  text: string,
  opts: ValidateOptions,
): ValidationResult {
  return new Gate1Validator(libraries, text, opts).run();
}

/**
 * validateGate1 for one run of the CLI, which imports this module rather than index.ts: PostgreSQL's parser
 * loads only when a predicate needs it (plain comparisons do not, plain-predicate.ts); the file is then
 * validated a second time, with the parser (a YAML parse more, against the parser's 35 ms).
 */
export async function validateGate1Lazily(text: string, opts: ValidateOptions): Promise<ValidationResult> {
  const libraries = await loadGate1Libraries();
  try {
    return validateGate1With(libraries, text, opts);
  } catch (error) {
    if (!(error instanceof PredicateParserMissing)) throw error;
    await loadPredicateParser();
    return validateGate1With(libraries, text, opts);
  }
}
