// ajv compiled once, at first use. The single executable replaces this module with ajv standalone code
// compiled at build time with the same options (scripts/build-binary.ts, scripts/sea/gate1-schema-validator.ts).
import { Ajv } from 'ajv';
import type { ErrorObject, Options, ValidateFunction } from 'ajv';
import { gate1Schema } from './schema.js';

export type SchemaError = ErrorObject;

export const gate1AjvOptions = { allErrors: true, strict: true, verbose: true } as const satisfies Options;

let compiled: ValidateFunction | undefined;

/** Validates a plain value against the gate1.yml schema and returns every error (allErrors), each with its data (verbose). */
export function schemaErrors(value: unknown): SchemaError[] {
  compiled ??= new Ajv(gate1AjvOptions).compile(gate1Schema);
  return compiled(value) ? [] : [...(compiled.errors ?? [])];
}
