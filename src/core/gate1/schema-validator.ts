// ajv compiled once, at first use. A build step may replace this module with ajv standalone code.
import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { gate1Schema } from './schema.js';

export type SchemaError = ErrorObject;

let compiled: ValidateFunction | undefined;

/** Validates a plain value against the gate1.yml schema and returns every error (allErrors), each with its data (verbose). */
export function schemaErrors(value: unknown): SchemaError[] {
  compiled ??= new Ajv({ allErrors: true, strict: true, verbose: true }).compile(gate1Schema);
  return compiled(value) ? [] : [...(compiled.errors ?? [])];
}
