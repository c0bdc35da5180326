// Opt-in response checking: every response the server sends is compared with openapi.yaml (path,
// method, status, required headers, JSON body schema). Violations are recorded, never thrown, so a
// test can fail on them after the fact (see test/helpers/server.ts).
import type { ValidateFunction } from 'ajv/dist/2020.js';
import type { ContractDocument } from './contract.js';
import {
  CONTRACT_ID,
  createContractAjv,
  describeAjvErrors,
  pointerPart,
  sharedContract,
} from './contract.js';

export interface ContractViolation {
  method: string;
  url: string;
  status: number;
  problems: string[];
}

export interface ObservedResponse {
  method: string;
  url: string;
  /** Fastify's route pattern (`/api/tables/:tableId/records`); absent when no route matched. */
  route: string | undefined;
  status: number;
  headers: Record<string, unknown>;
  body: string | undefined;
}

type Node = Record<string, unknown>;

/** Headers of ours a response may carry only where the contract documents them for its status. */
const MUST_BE_DOCUMENTED = ['Idempotent-Replayed'];

interface Compiled {
  doc: ContractDocument;
  ajv: ReturnType<typeof createContractAjv>;
  /** Validators by JSON pointer, compiled on first use. */
  validators: Map<string, ValidateFunction>;
}

/** The shared contract's schemas, compiled once per process for every checker (a test file starts several servers). */
let sharedCompiled: Compiled | undefined;

function compile(doc: ContractDocument): Compiled {
  return { doc, ajv: createContractAjv(doc), validators: new Map() };
}

export class ContractChecker {
  readonly violations: ContractViolation[] = [];
  /** How many responses were checked. */
  checked = 0;
  private readonly doc: ContractDocument;
  private readonly ajv;
  private readonly validators;

  constructor(doc?: ContractDocument) {
    const compiled = doc ? compile(doc) : (sharedCompiled ??= compile(sharedContract()));
    this.doc = compiled.doc;
    this.ajv = compiled.ajv;
    this.validators = compiled.validators;
  }

  check(response: ObservedResponse): void {
    this.checked += 1;
    const problems = this.problemsOf(response);
    if (problems.length > 0) {
      this.violations.push({ method: response.method, url: response.url, status: response.status, problems });
    }
  }

  private problemsOf(r: ObservedResponse): string[] {
    // 421 (a Host that is not the server's) is answered on every path, known or not, before routing; 404
    // `route_not_found` on every path no route serves (a REST path without its stage among them).
    const anyPath =
      r.status === 421 ? 'MisdirectedRequest' : r.status === 404 && r.route === undefined ? 'NotFound' : '';
    if (anyPath !== '') {
      const [response, pointer] = this.resolve(
        { $ref: `#/components/responses/${anyPath}` },
        `/components/responses/${anyPath}`,
      );
      return [
        ...this.headerProblems(response, pointer, r.headers),
        ...this.bodyProblems(response, pointer, r),
      ];
    }
    const path = r.route?.replace(/:(\w+)/g, '{$1}');
    const item = path === undefined ? undefined : (this.doc.paths[path] as Node | undefined);
    if (!path || !item) return [`path ${r.route ?? r.url} is not in the contract`];
    const operation = item[r.method.toLowerCase()] as Node | undefined;
    if (!operation) return [`${r.method} ${path} is not in the contract`];
    const responses = operation.responses as Node;
    // 429 of failed authentication or minting: documented once, for every path that takes a credential.
    const declared = (responses[String(r.status)] ??
      (r.status === 429 ? { $ref: '#/components/responses/TooManyFailedAuthentications' } : undefined)) as
      Node | undefined;
    if (!declared) return [`status ${r.status} is not documented for ${r.method} ${path}`];
    const [response, pointer] = this.resolve(
      declared,
      `/paths/${pointerPart(path)}/${r.method.toLowerCase()}/responses/${r.status}`,
    );
    return [...this.headerProblems(response, pointer, r.headers), ...this.bodyProblems(response, pointer, r)];
  }

  private headerProblems(response: Node, pointer: string, headers: Record<string, unknown>): string[] {
    const problems: string[] = [];
    const documented = Object.keys((response.headers as Node | undefined) ?? {}).map((n) => n.toLowerCase());
    for (const name of MUST_BE_DOCUMENTED) {
      if (headers[name.toLowerCase()] !== undefined && !documented.includes(name.toLowerCase()))
        problems.push(`header ${name} is sent but not documented`);
    }
    for (const [name, declared] of Object.entries((response.headers as Node | undefined) ?? {})) {
      const [header, headerPointer] = this.resolve(
        declared as Node,
        `${pointer}/headers/${pointerPart(name)}`,
      );
      const raw = headers[name.toLowerCase()];
      if (raw === undefined) {
        if (header.required === true) problems.push(`required header ${name} is missing`);
        continue;
      }
      const schema = header.schema as Node | undefined;
      const value = schema?.type === 'integer' || schema?.type === 'number' ? Number(raw) : String(raw);
      const validate = this.validator(`${headerPointer}/schema`);
      if (!validate(value)) problems.push(`header ${name}: ${JSON.stringify(raw)} does not match its schema`);
    }
    return problems;
  }

  private bodyProblems(response: Node, pointer: string, r: ObservedResponse): string[] {
    const content = response.content as Node | undefined;
    const json = content?.['application/json'];
    const contentType = String(r.headers['content-type'] ?? '');
    if (!json) {
      // A documented other media type (the HTML of the device verification page) is not checked further.
      const mediaType = contentType.split(';')[0]?.trim() ?? '';
      if (!r.body || (content !== undefined && mediaType in content)) return [];
      return [`a body was sent but none is documented`];
    }
    if (!contentType.startsWith('application/json'))
      return [`content-type is "${contentType}", not application/json`];
    let body: unknown;
    try {
      body = JSON.parse(r.body ?? '');
    } catch {
      return ['the body is not JSON'];
    }
    const validate = this.validator(`${pointer}/content/application~1json/schema`);
    if (validate(body)) return [];
    return describeAjvErrors(validate.errors).map((e) => `body ${e.path}: ${e.problem}`);
  }

  /** Follows a local `$ref`; returns the node and its JSON pointer in the document. */
  private resolve(node: Node, pointer: string): [Node, string] {
    const ref = node.$ref;
    if (typeof ref !== 'string' || !ref.startsWith('#/')) return [node, pointer];
    let target: unknown = this.doc;
    for (const part of ref.slice(2).split('/')) {
      target = (target as Node)[part.replaceAll('~1', '/').replaceAll('~0', '~')];
    }
    return [target as Node, ref.slice(1)];
  }

  private validator(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${CONTRACT_ID}#${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }
}
