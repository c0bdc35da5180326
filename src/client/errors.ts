// The two ways a call to the service fails: the service answered with an error, or it could not be reached.
import { redactJson, redactSecrets } from '../core/redact.js';
import { echoedUrl } from '../core/echo.js';

export interface ApiErrorInit {
  status: number;
  code: string;
  message: string;
  details?: unknown;
  requestId?: string;
  retryAfterSeconds?: number;
  method: string;
  url: string;
  /** The answer's headers as received, lower-case names (`gds api -i`). */
  headers?: Array<[string, string]>;
}

/** The service answered with a non-2xx status (or with a body the client cannot read). */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  /** The service's snake_case error code, or `http_<status>` when the body carried none. */
  readonly code: string;
  readonly details: unknown;
  /** The `x-request-id` of the response, to quote when reporting a problem. */
  readonly requestId: string | undefined;
  /** Seconds the service asked to wait (`Retry-After`), when it said. */
  readonly retryAfterSeconds: number | undefined;
  readonly method: string;
  readonly url: string;
  /** The answer's headers as received, lower-case names; empty when the error is not an answer's. */
  readonly headers: Array<[string, string]>;

  constructor(init: ApiErrorInit) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.details = init.details;
    this.requestId = init.requestId;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.method = init.method;
    this.url = init.url;
    this.headers = init.headers ?? [];
  }
}

/**
 * A 400 `invalid_query` that names one of `parameters` among those the service does not know: a service from
 * before them, whose caller then asks as it did before.
 */
export function refusesParameter(error: unknown, ...parameters: string[]): boolean {
  if (!(error instanceof ApiError) || error.status !== 400 || error.code !== 'invalid_query') return false;
  const unknown = (error.details as { unknown?: unknown } | undefined)?.unknown;
  return Array.isArray(unknown) && parameters.some((parameter) => unknown.includes(parameter));
}

/**
 * A 400 that refuses `field` of a request's body as unknown: a service that follows the spec's fields only (the
 * reference server before the field answered `invalid_body` "Unknown fields: <field>.", `details.unknown`).
 */
export function refusesField(error: unknown, field: string): boolean {
  if (!(error instanceof ApiError) || error.status !== 400) return false;
  const unknown = (error.details as { unknown?: unknown } | undefined)?.unknown;
  if (Array.isArray(unknown)) return unknown.includes(field);
  const named = new RegExp(`\\b${field}\\b`).test(error.message);
  return named && /\b(unknown|unexpected|unrecognized|not allowed)\b/i.test(error.message);
}

/**
 * The service handed back a cursor it had already given for the same list: following it would ask for the
 * same pages forever. The pages before it were complete.
 */
export class CursorLoopError extends Error {
  override readonly name = 'CursorLoopError';
  /** The list being walked, as its path (`/api/tables`). */
  readonly list: string;
  readonly cursor: string;

  constructor(list: string, cursor: string) {
    super(`The service returned the cursor ${JSON.stringify(cursor)} of ${list} twice; stopping.`);
    this.list = list;
    this.cursor = cursor;
  }
}

/** `certificate`: TLS refused the service's certificate, which no retry can change. */
export type NetworkFailure = 'connection' | 'timeout' | 'certificate';

/** No usable answer: refused or reset connection, DNS failure, a connect/headers/body timeout, or a TLS
 *  certificate refused. */
export class NetworkError extends Error {
  override readonly name = 'NetworkError';
  readonly failure: NetworkFailure;
  /** The system error code (`ECONNREFUSED`, …) or the transport's own timeout (`HEADERS_TIMEOUT`, …), when known. */
  readonly code: string | undefined;
  readonly method: string;
  readonly url: string;

  constructor(init: {
    failure: NetworkFailure;
    code?: string;
    method: string;
    url: string;
    reason: string;
    cause: unknown;
  }) {
    super(`${init.method} ${echoedUrl(init.url)} failed: ${init.reason}`, { cause: init.cause });
    this.failure = init.failure;
    this.code = init.code;
    this.method = init.method;
    this.url = init.url;
  }
}

/** TLS codes of a certificate chain that ends in an authority this machine does not trust. */
const UNTRUSTED_AUTHORITY = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
]);

export function untrustedCertificate(code: string | undefined): boolean {
  return code !== undefined && UNTRUSTED_AUTHORITY.has(code);
}

const REASONS: Record<string, [NetworkFailure, string]> = {
  ECONNREFUSED: ['connection', 'connection refused; is the service running at that address?'],
  ENOTFOUND: ['connection', 'host not found; check the API base URL'],
  EAI_AGAIN: ['connection', 'host name lookup failed; check your network'],
  ECONNRESET: ['connection', 'the connection was closed before the answer arrived'],
  EPIPE: ['connection', 'the connection was closed before the answer arrived'],
  CONNECT_TIMEOUT: ['timeout', 'no connection could be made in time'],
  HEADERS_TIMEOUT: ['timeout', 'the service did not answer in time'],
  BODY_TIMEOUT: ['timeout', 'the answer stopped arriving'],
  ETIMEDOUT: ['timeout', 'the connection timed out'],
  // Node's own text for these advises a node flag, which the single executable does not take.
  ...Object.fromEntries(
    [...UNTRUSTED_AUTHORITY].map((code) => [
      code,
      ['certificate', "the service's TLS certificate is not signed by an authority gds trusts"],
    ]),
  ),
  CERT_HAS_EXPIRED: ['certificate', "the service's TLS certificate has expired"],
  ERR_TLS_CERT_ALTNAME_INVALID: ['certificate', "the service's TLS certificate is for another host name"],
};

/** A NetworkError describing what a request (or reading its body) failed with. */
export function networkErrorFrom(err: unknown, method: string, url: string): NetworkError {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const raw = (cause as { code?: unknown } | undefined)?.code;
  const code = typeof raw === 'string' ? raw : undefined;
  const known = code === undefined ? undefined : REASONS[code];
  const [failure, reason] = known ?? [
    'connection',
    cause instanceof Error ? cause.message : 'the connection failed',
  ];
  return new NetworkError({
    failure,
    code,
    method,
    url,
    reason: code === undefined ? reason : `${reason} (${code})`,
    cause: err,
  });
}

/** An ApiError from an error response's status, headers and raw body text, with secrets masked in its
 *  message and details. */
export function apiErrorFrom(
  res: {
    status: number;
    statusText: string;
    requestId: string | undefined;
    retryAfterSeconds: number | undefined;
    headers?: Array<[string, string]>;
  },
  bodyText: string,
  request: { method: string; url: string },
  knownSecrets: readonly string[],
): ApiError {
  const envelope = parseErrorEnvelope(bodyText);
  const message = envelope.message ?? `The service answered ${res.status} ${res.statusText}`.trimEnd();
  return new ApiError({
    status: res.status,
    code: envelope.code ?? `http_${res.status}`,
    // The service's message as it sent it, its line breaks kept: --json carries them (a PostgreSQL error's
    // caret block) and escapes what a terminal acts on. A person reads it on one line under gds's `Error:`
    // (CliError's messageLines), so that no line of it reads as gds's own (`…\nForged: …`).
    message: redactSecrets(message, knownSecrets),
    details: redactJson(envelope.details, knownSecrets),
    requestId: res.requestId,
    retryAfterSeconds: res.retryAfterSeconds,
    ...(res.headers === undefined ? {} : { headers: res.headers }),
    ...request,
  });
}

function parseErrorEnvelope(text: string): { code?: string; message?: string; details?: unknown } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return {};
  }
  const error = (parsed as { error?: unknown } | null)?.error;
  if (typeof error !== 'object' || error === null) return {};
  const { code, message, details } = error as Record<string, unknown>;
  return {
    code: typeof code === 'string' ? code : undefined,
    message: typeof message === 'string' ? message : undefined,
    details,
  };
}
