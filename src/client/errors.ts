// The two ways a call to the service fails: the service answered with an error, or it could not be reached.
import { redactSecrets } from '../core/redact.js';

export interface ApiErrorInit {
  status: number;
  code: string;
  message: string;
  details?: unknown;
  requestId?: string;
  retryAfterSeconds?: number;
  method: string;
  url: string;
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

  constructor(init: ApiErrorInit) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.details = init.details;
    this.requestId = init.requestId;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.method = init.method;
    this.url = init.url;
  }
}

export type NetworkFailure = 'connection' | 'timeout';

/** No usable answer: refused or reset connection, DNS failure, or a connect/headers/body timeout. */
export class NetworkError extends Error {
  override readonly name = 'NetworkError';
  readonly failure: NetworkFailure;
  readonly method: string;
  readonly url: string;

  constructor(init: {
    failure: NetworkFailure;
    method: string;
    url: string;
    detail: string;
    cause: unknown;
  }) {
    const what = init.failure === 'timeout' ? 'timed out' : 'could not be completed';
    super(`${init.method} ${init.url} ${what}: ${init.detail}`, { cause: init.cause });
    this.failure = init.failure;
    this.method = init.method;
    this.url = init.url;
  }
}

const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);

/** A NetworkError describing what `fetch` (or reading its body) threw. */
export function networkErrorFrom(err: unknown, method: string, url: string): NetworkError {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const code = (cause as { code?: unknown } | undefined)?.code;
  const failure: NetworkFailure =
    typeof code === 'string' && TIMEOUT_CODES.has(code) ? 'timeout' : 'connection';
  const detail =
    typeof code === 'string' ? code : cause instanceof Error ? cause.message : 'the connection failed';
  return new NetworkError({ failure, method, url, detail, cause: err });
}

/** An ApiError from an error response's status, headers and raw body text, with secrets masked. */
export function apiErrorFrom(
  res: {
    status: number;
    statusText: string;
    requestId: string | undefined;
    retryAfterSeconds: number | undefined;
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
    message: redactSecrets(message, knownSecrets),
    details: envelope.details,
    requestId: res.requestId,
    retryAfterSeconds: res.retryAfterSeconds,
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
