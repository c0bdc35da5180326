// `gds api`: one authenticated call to any path of the service, like `gh api`. Fields go into the JSON
// body (POST/PUT/PATCH) or the query (GET/DELETE, or when --input gives the body). The path must be a
// path of the configured service: the token never goes to another host.
import { CliError, ExitCode, exitCodeForStatus } from '../core/errors.js';
import type { ExitCodeValue } from '../core/errors.js';
import type { ApiClient, HttpMethod } from '../client/index.js';
import { uncheckedPath } from '../client/transport.js';

export type RawClient = Pick<ApiClient, 'request'>;
export type FieldValue = string | number | boolean | null;

export interface ApiCallInput {
  path: string;
  /** Default: POST when there is a body (fields or input), else GET. */
  method?: HttpMethod | undefined;
  fields?: ReadonlyArray<readonly [string, FieldValue]>;
  /** A parsed JSON body (from --input); the fields then go into the query. */
  body?: unknown;
  headers?: ReadonlyArray<readonly [string, string]>;
  /** Added to the query (--paginate's cursor or page). */
  query?: Record<string, string>;
  signal?: AbortSignal;
}

export interface ApiCallResult {
  status: number;
  /** The answer's headers (`-i`), lower-case names; empty when the transport does not list them. */
  headers: Array<[string, string]>;
  /** The parsed response body (undefined when empty); for a failure, the service's error body. */
  body: unknown;
  /** 0 for a 2xx, else the exit code of the status (exitCodeForStatus). */
  exitCode: ExitCodeValue;
}

const clientHeaders = new Set([
  'authorization',
  'host',
  'content-type',
  'content-length',
  'accept',
  'user-agent',
]);

/** Sends the call; a non-2xx answer is a result (its error body and exit code), not a throw. */
export async function callApi(
  client: RawClient,
  baseUrl: string,
  input: ApiCallInput,
): Promise<ApiCallResult> {
  const path = checkPath(input.path, baseUrl);
  const fields = input.fields ?? [];
  const method = input.method ?? (fields.length > 0 || input.body !== undefined ? 'POST' : 'GET');
  if (method === 'GET' && input.body !== undefined) {
    throw new CliError('A GET request carries no body, and --input gives one.', {
      exitCode: ExitCode.Usage,
      code: 'body_on_get',
      suggestion: 'Use -X POST (or PUT, PATCH) with --input, or give the values as -f fields for the query.',
    });
  }
  const fieldsInBody = input.body === undefined && ['POST', 'PUT', 'PATCH'].includes(method);
  const fieldObject = nestedObject(fields);
  const fromFields = fieldsInBody ? undefined : queryOf(fields);
  const query = input.query === undefined ? fromFields : { ...fromFields, ...input.query };
  const body = input.body ?? (fieldsInBody && fields.length > 0 ? fieldObject : undefined);
  try {
    const res = await client.request<unknown>({
      method,
      path: uncheckedPath(path),
      ...(query ? { query } : {}),
      ...(body === undefined ? {} : { body }),
      headers: headerObject(input.headers ?? []),
      ...(input.signal ? { signal: input.signal } : {}),
    });
    return {
      status: res.status,
      headers: res.headers.entries?.() ?? [],
      body: res.data,
      exitCode: ExitCode.Ok,
    };
  } catch (error) {
    if (!(error instanceof Error) || error.name !== 'ApiError') throw error;
    const failure = error as Error & {
      status: number;
      code: string;
      details: unknown;
      headers?: Array<[string, string]>;
    };
    // A success whose body is not JSON is the client's failure to read it, not an answer to print.
    if (failure.status < 400) throw error;
    const envelope = { code: failure.code, message: failure.message, ...detailsOf(failure.details) };
    return {
      status: failure.status,
      headers: failure.headers ?? [],
      body: { error: envelope },
      exitCode: exitCodeForStatus(failure.status),
    };
  }
}

/** `key=value` of -f (always a string) or -F (true, false, null and numbers typed). */
export function parseField(text: string, typed: boolean): readonly [string, FieldValue] {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new Error(`${JSON.stringify(text)} is not key=value`);
  const key = text.slice(0, eq);
  const raw = text.slice(eq + 1);
  if (!typed) return [key, raw];
  if (raw === 'true' || raw === 'false') return [key, raw === 'true'];
  if (raw === 'null') return [key, null];
  if (/^-?\d+(\.\d+)?$/.test(raw)) return [key, Number(raw)];
  return [key, raw];
}

/** `Name: value` of -H. */
export function parseHeader(text: string): readonly [string, string] {
  const colon = text.indexOf(':');
  const name = colon === -1 ? '' : text.slice(0, colon).trim();
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
    throw new Error(`${JSON.stringify(text)} is not "Name: value"`);
  if (clientHeaders.has(name.toLowerCase())) {
    throw new Error(`${name} is set by gds itself and cannot be given with -H`);
  }
  return [name, text.slice(colon + 1).trim()];
}

function checkPath(path: string, baseUrl: string): string {
  const refuse = (why: string) =>
    new CliError(`${JSON.stringify(path)} ${why}`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_path',
      suggestion:
        'Give a path of the service starting with /, e.g. gds api /api/workspace/members. The host comes from --base, SERVICE_API_URL or the profile, so the token never goes elsewhere.',
    });
  // `gds api api/me`, as gh takes `repos/x/y`: the leading / is implied. A URL or //host is refused.
  if (!path.startsWith('/') && !/^[a-z][a-z0-9+.-]*:/i.test(path)) path = `/${path}`;
  if (!path.startsWith('/') || path.startsWith('//'))
    throw refuse('is not a path of the service (it must start with a single /).');
  const base = new URL(baseUrl);
  if (new URL(baseUrl + path).origin !== base.origin) throw refuse('would leave the service host.');
  return path;
}

function queryOf(fields: ReadonlyArray<readonly [string, FieldValue]>): Record<string, string> | undefined {
  if (fields.length === 0) return undefined;
  return Object.fromEntries(fields.map(([k, v]) => [k, String(v)]));
}

function headerObject(headers: ReadonlyArray<readonly [string, string]>): Record<string, string> {
  return Object.fromEntries(headers);
}

function detailsOf(details: unknown): { details?: unknown } {
  return details === undefined ? {} : { details };
}

/**
 * The JSON body of -f/-F fields, as gh builds it: `a=1` sets a key, `a[b]=1` a key of an object,
 * `a[]=1` appends to an array (`a[][b]=1` is refused: too clever to guess).
 */
export function nestedObject(fields: ReadonlyArray<readonly [string, FieldValue]>): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [key, value] of fields) {
    const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
    if (match === null)
      throw usage(`${JSON.stringify(key)} is not a field name (name, name[key] or name[]).`);
    const path = [match[1] ?? '', ...[...(match[2] ?? '').matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1] ?? '')];
    let holder: Record<string, unknown> | unknown[] = root;
    for (let i = 0; i < path.length; i += 1) {
      const segment = path[i] ?? '';
      const last = i === path.length - 1;
      const nextIsArray = path[i + 1] === '';
      if (Array.isArray(holder)) {
        if (segment !== '' || !last)
          throw usage(`${JSON.stringify(key)}: only name[]=value appends to an array.`);
        holder.push(value);
        break;
      }
      if (last) {
        if (segment === '') throw usage(`${JSON.stringify(key)} has an empty key.`);
        holder[segment] = value;
        break;
      }
      const existing = holder[segment];
      const wanted = nextIsArray ? Array.isArray(existing) : isPlainObject(existing);
      if (existing !== undefined && !wanted) {
        throw usage(`${JSON.stringify(key)} conflicts with another field of the same name.`);
      }
      if (existing === undefined) holder[segment] = nextIsArray ? [] : {};
      holder = holder[segment] as Record<string, unknown> | unknown[];
    }
  }
  return root;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function usage(message: string): CliError {
  return new CliError(message, {
    exitCode: ExitCode.Usage,
    code: 'invalid_field',
    suggestion: 'Fields are key=value, key[sub]=value or key[]=value (see gds api --help).',
  });
}

/** Where the next page is, for --paginate: the body's `nextCursor` (cursor=…) or `nextPage` (page=…). */
export function nextPageQuery(body: unknown): Record<string, string> | undefined {
  if (!isPlainObject(body)) return undefined;
  const cursor = body.nextCursor ?? body.next_cursor;
  if (typeof cursor === 'string' && cursor !== '') return { cursor };
  const page = body.nextPage ?? body.next_page;
  if (typeof page === 'number' || (typeof page === 'string' && page !== '')) return { page: String(page) };
  return undefined;
}

/** The items of one page for --paginate: the body itself when it is a list, else its first list field. */
export function pageItems(body: unknown): unknown[] {
  if (Array.isArray(body)) return body;
  if (!isPlainObject(body)) return [body];
  const list = Object.values(body).find((value) => Array.isArray(value));
  return Array.isArray(list) ? list : [body];
}
