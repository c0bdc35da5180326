// src/core/gate1/schema-validator.ts as the single executable has it: the same function over the validator
// that scripts/build-binary.ts compiled from gate1Schema with ajv standalone, so no ajv compile at run time.
import type { SchemaValidator } from '../../src/core/gate1/schema-validator.js';

export type { SchemaError, SchemaValidator } from '../../src/core/gate1/schema-validator.js';

export async function loadSchemaValidator(): Promise<SchemaValidator> {
  const { default: validate } = await import('gds:gate1-standalone-validator');
  return (value) => (validate(value) ? [] : [...(validate.errors ?? [])]);
}
