// `gds api`: one authenticated call to any path of the service, like `gh api`. Fields go into the JSON
// body (POST/PUT/PATCH) or the query (GET/DELETE, or when --input gives the body). The path must be a
// path of the configured service: the token never goes to another host.
import { CliError, ExitCode, exitCodeForStatus } from '../cli/errors.js';
import type { ExitCodeValue } from '../cli/errors.js';
import type { ApiClient, HttpMethod } from '../client/index.js';

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
  signal?: AbortSignal;
}

export interface ApiCallResult {
  status: number;
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
  const fieldsInBody = input.body === undefined && ['POST', 'PUT', 'PATCH'].includes(method);
  const fieldObject = Object.fromEntries(fields);
  const query = fieldsInBody ? undefined : queryOf(fields);
  const body = input.body ?? (fieldsInBody && fields.length > 0 ? fieldObject : undefined);
  try {
    const res = await client.request<unknown>({
      method,
      path,
      ...(query ? { query } : {}),
      ...(body === undefined ? {} : { body }),
      headers: headerObject(input.headers ?? []),
      ...(input.signal ? { signal: input.signal } : {}),
    });
    return { status: res.status, body: res.data, exitCode: ExitCode.Ok };
  } catch (error) {
    if (!(error instanceof Error) || error.name !== 'ApiError') throw error;
    const failure = error as Error & { status: number; code: string; details: unknown };
    const envelope = { code: failure.code, message: failure.message, ...detailsOf(failure.details) };
    return { status: failure.status, body: { error: envelope }, exitCode: exitCodeForStatus(failure.status) };
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
