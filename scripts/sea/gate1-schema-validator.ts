// src/core/gate1/schema-validator.ts as the single executable has it: the same function over the validator
// that scripts/build-binary.ts compiled from gate1Schema with ajv standalone, so no ajv compile at run time.
import validate from 'gds:gate1-standalone-validator';
import type { SchemaError } from '../../src/core/gate1/schema-validator.js';

export type { SchemaError };

export function schemaErrors(value: unknown): SchemaError[] {
  return validate(value) ? [] : [...(validate.errors ?? [])];
}
