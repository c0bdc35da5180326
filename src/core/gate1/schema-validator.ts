// ajv (30 ms of CPU and 13 MiB to load), loaded here only and compiled once, on first use: the validator is
// given to validateGate1, so the commands that check no gate1.yml never load it. The single executable
// replaces this module with ajv standalone code compiled at build time with the same options
// (scripts/build-binary.ts, scripts/sea/gate1-schema-validator.ts).
import type { ErrorObject, Options } from 'ajv';
import { onFirstUse } from '../on-first-use.js';
import { gate1Schema } from './schema.js';

export type SchemaError = ErrorObject;

/** Validates a plain value against the gate1.yml schema and returns every error (allErrors), each with its data (verbose). */
export type SchemaValidator = (value: unknown) => SchemaError[];

export const gate1AjvOptions = { allErrors: true, strict: true, verbose: true } as const satisfies Options;

export const loadSchemaValidator: () => Promise<SchemaValidator> = onFirstUse(async () => {
  const { Ajv } = await import('ajv');
  const compiled = new Ajv(gate1AjvOptions).compile(gate1Schema);
  return (value) => (compiled(value) ? [] : [...(compiled.errors ?? [])]);
});
