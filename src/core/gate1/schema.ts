// The gate1.yml JSON Schema, a plain object so a build step can compile it with ajv standalone.

/**
 * Severities of a declared check, a closed set:
 * - HARD_FAIL: a failing check fails Gate 1 and blocks submission and certification;
 * - SOFT_FAIL: a failing check is recorded as failed in the proof but does not block;
 * - WARN: a failing check is recorded as a warning.
 */
export const GATE1_SEVERITIES = ['HARD_FAIL', 'SOFT_FAIL', 'WARN'] as const;
export type Gate1Severity = (typeof GATE1_SEVERITIES)[number];

/** A gate1.yml with no document in it (nothing but blank lines and comments): said alike by validate and diff. */
export const DECLARES_NOTHING =
  'the file declares nothing; write a mapping with patternChecks, customPredicates or fieldOverrides (`{}` declares no checks on purpose)';

/** True when the text holds no YAML document: only blank lines, comments and document markers. */
export function declaresNothing(text: string): boolean {
  return text.split(/\r\n|\r|\n/).every((line) => /^\s*(#.*)?$|^(---|\.\.\.)\s*$/.test(line));
}

export const MAX_NAME_LENGTH = 128;
/** PostgreSQL truncates identifiers to 63 bytes (NAMEDATALEN - 1). */
export const MAX_COLUMN_LENGTH = 63;
export const MAX_REGEX_LENGTH = 1000;
export const MAX_SQL_LENGTH = 4000;

const NO_CONTROL_CHARACTERS = '^[^\\u0000-\\u001f\\u007f]*$';

export const gate1Schema = {
  $id: 'https://gds.example/schemas/gate1.json',
  type: 'object',
  additionalProperties: false,
  properties: {
    patternChecks: { type: 'array', items: { $ref: '#/definitions/patternCheck' } },
    customPredicates: { type: 'array', items: { $ref: '#/definitions/customPredicate' } },
    fieldOverrides: { type: 'array', items: { $ref: '#/definitions/fieldOverride' } },
    uniqueChecks: { type: 'array', items: { $ref: '#/definitions/uniqueCheck' } },
  },
  definitions: {
    name: { type: 'string', minLength: 1, maxLength: MAX_NAME_LENGTH, pattern: NO_CONTROL_CHARACTERS },
    column: { type: 'string', minLength: 1, maxLength: MAX_COLUMN_LENGTH, pattern: NO_CONTROL_CHARACTERS },
    severity: { type: 'string', enum: [...GATE1_SEVERITIES] },
    rate: { type: 'number', minimum: 0, maximum: 1 },
    patternCheck: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'column', 'regex', 'severity'],
      properties: {
        name: { $ref: '#/definitions/name' },
        column: { $ref: '#/definitions/column' },
        regex: { type: 'string', minLength: 1, maxLength: MAX_REGEX_LENGTH },
        severity: { $ref: '#/definitions/severity' },
      },
    },
    customPredicate: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'sql', 'severity'],
      properties: {
        name: { $ref: '#/definitions/name' },
        sql: { type: 'string', minLength: 1, maxLength: MAX_SQL_LENGTH },
        severity: { $ref: '#/definitions/severity' },
      },
    },
    uniqueCheck: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'columns', 'severity'],
      properties: {
        name: { $ref: '#/definitions/name' },
        columns: { type: 'array', minItems: 1, items: { $ref: '#/definitions/column' } },
        severity: { $ref: '#/definitions/severity' },
        nullsDistinct: { type: 'boolean' },
      },
    },
    fieldOverride: {
      type: 'object',
      additionalProperties: false,
      required: ['field', 'nullRate'],
      properties: {
        field: { $ref: '#/definitions/column' },
        nullRate: {
          type: 'object',
          additionalProperties: false,
          required: ['warn', 'fail'],
          properties: { warn: { $ref: '#/definitions/rate' }, fail: { $ref: '#/definitions/rate' } },
        },
      },
    },
  },
} as const;

export interface PatternCheck {
  name: string;
  column: string;
  regex: string;
  severity: Gate1Severity;
}

export interface CustomPredicate {
  name: string;
  sql: string;
  severity: Gate1Severity;
}

export interface FieldOverride {
  field: string;
  nullRate: { warn: number; fail: number };
}

/**
 * No two rows share a value of `columns` (a uniqueness besides the grain key, such as a second dbt `unique`
 * test); a row with a NULL in any of them is not compared, as SQL's UNIQUE and dbt's `unique` test. With
 * `nullsDistinct: false` (PostgreSQL's UNIQUE NULLS NOT DISTINCT) NULL is compared as a value, as
 * dbt_utils.unique_combination_of_columns groups rows.
 */
export interface UniqueCheck {
  name: string;
  columns: string[];
  severity: Gate1Severity;
  nullsDistinct?: boolean;
}

export interface Gate1Document {
  patternChecks?: PatternCheck[];
  customPredicates?: CustomPredicate[];
  fieldOverrides?: FieldOverride[];
  uniqueChecks?: UniqueCheck[];
}

/** The keys allowed at each level, for "unknown key" messages. */
export const ALLOWED_KEYS = {
  document: Object.keys(gate1Schema.properties),
  patternCheck: Object.keys(gate1Schema.definitions.patternCheck.properties),
  customPredicate: Object.keys(gate1Schema.definitions.customPredicate.properties),
  fieldOverride: Object.keys(gate1Schema.definitions.fieldOverride.properties),
  uniqueCheck: Object.keys(gate1Schema.definitions.uniqueCheck.properties),
  nullRate: ['warn', 'fail'],
} as const;
