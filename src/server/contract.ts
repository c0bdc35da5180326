// The contract document (src/contract/openapi.yaml) loaded once, with an ajv instance that knows it,
// so request bodies are checked against the same schemas the client is typed from.
import { checkInput } from './input-rule.js';
import { readFileSync } from 'node:fs';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { badRequest } from './errors.js';

export const CONTRACT_ID = 'gds-contract';

export interface ContractDocument {
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, Record<string, unknown>>;
}

export function loadContract(): ContractDocument {
  const text = readFileSync(new URL('../contract/openapi.yaml', import.meta.url), 'utf8');
  return parse(text) as ContractDocument;
}

let parsed: ContractDocument | undefined;

/** The contract parsed once per process, read (never changed) by the request and response checks. */
export function sharedContract(): ContractDocument {
  parsed ??= loadContract();
  return parsed;
}

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

export function createContractAjv(doc: ContractDocument): Ajv2020 {
  // strict off: the document carries OpenAPI keywords (description, example…) beside JSON Schema.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat('date-time', (value: string) => DATE_TIME.test(value) && !Number.isNaN(Date.parse(value)));
  ajv.addFormat('email', /^[^\s@]+@[^\s@]+\.[^\s@]+$/);
  ajv.addSchema({ ...doc, $id: CONTRACT_ID });
  return ajv;
}

/** A JSON pointer fragment for a path key such as `/api/tables/{tableId}/records`. */
export function pointerPart(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

let shared: { ajv: Ajv2020; validators: Map<string, ValidateFunction> } | undefined;

function schemaValidator(name: string): ValidateFunction {
  shared ??= { ajv: createContractAjv(sharedContract()), validators: new Map() };
  let validate = shared.validators.get(name);
  if (!validate) {
    validate = shared.ajv.compile({ $ref: `${CONTRACT_ID}#/components/schemas/${name}` });
    shared.validators.set(name, validate);
  }
  return validate;
}

export function describeAjvErrors(
  errors: ErrorObject[] | null | undefined,
): Array<{ path: string; problem: string }> {
  return (errors ?? []).map((e) => ({ path: e.instancePath || '/', problem: e.message ?? e.keyword }));
}

/** The body as the named contract schema's type, or a 400 listing what is wrong with it. */
export function parseBody<T>(schemaName: string, body: unknown): T {
  const validate = schemaValidator(schemaName);
  if (validate(body)) {
    checkInput(body, 'body');
    return body as T;
  }
  const problems = describeAjvErrors(validate.errors);
  const summary = problems.map((p) => `${p.path} ${p.problem}`).join('; ');
  throw badRequest('invalid_body', `The request body does not match ${schemaName}: ${summary}.`, {
    problems,
  });
}
