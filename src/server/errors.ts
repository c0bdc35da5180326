// The one error type routes throw, and the handler that turns any failure into the contract's body
// `{"error":{"code","message","details"}}`.
import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { MAX_ID_LENGTH } from './ids.js';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (code: string, message: string, details?: unknown) =>
  new HttpError(400, code, message, details);
export const unauthorized = (code: string, message: string) => new HttpError(401, code, message);
export const forbidden = (code: string, message: string, details?: unknown) =>
  new HttpError(403, code, message, details);
export const notFound = (code: string, message: string, details?: unknown) =>
  new HttpError(404, code, message, details);

/** SQLSTATEs of malformed input that reached the database: the request's fault, so 400. */
export const INPUT_SQLSTATES: Record<string, string> = {
  '22021': 'a character the database cannot store (NUL or invalid UTF-8)',
  '22P05': 'a character the database cannot store (NUL or invalid UTF-8)',
  '22P02': 'a value that is not of its column’s type',
  '22003': 'a number out of its column’s range',
  '22007': 'a date or time the database cannot read',
  '22008': 'a date or time out of range',
};

export function errorBody(code: string, message: string, details?: unknown) {
  return { error: details === undefined ? { code, message } : { code, message, details } };
}

/** A unique constraint refused the write (PostgreSQL's 23505): a parallel request stored the same thing first. */
export function isUniqueViolation(error: unknown): boolean {
  return sqlstateOf(error) === '23505';
}

function sqlstateOf(error: unknown): unknown {
  return (error as { code?: unknown } | null | undefined)?.code;
}

/**
 * The contract's answer to a failure every route answers alike: an HttpError as it says, a database race or a
 * malformed value that reached the database by its SQLSTATE; undefined for any other failure. A single
 * request's error handler and a batch item's step (src/server/routes/artifact-batch.ts) both answer by it.
 */
export function answerOf(error: unknown): HttpError | undefined {
  if (error instanceof HttpError) return error;
  const sqlstate = sqlstateOf(error);
  if (sqlstate === '23505') {
    // A unique-constraint race no route serialized (PostgreSQL runs requests in parallel): the other
    // request won, so this one conflicts with what it wrote; never a 500 a client would retry.
    return new HttpError(
      409,
      'conflict',
      'A parallel request stored the same thing first; read the current state and try again if it still applies.',
      { constraint: (error as { constraint?: unknown }).constraint ?? null },
    );
  }
  if (sqlstate === '40P01' || sqlstate === '40001') {
    // A deadlock or serialization failure: PostgreSQL rolled this request back; the same request
    // succeeds when sent again.
    return new HttpError(
      503,
      'database_conflict',
      'A parallel request held the same rows; nothing was stored. Send the request again.',
      { sqlstate },
      { 'retry-after': '1' },
    );
  }
  if (typeof sqlstate === 'string' && Object.hasOwn(INPUT_SQLSTATES, sqlstate)) {
    return new HttpError(400, 'invalid_input', `The request holds ${INPUT_SQLSTATES[sqlstate]}.`, {
      sqlstate,
    });
  }
  return undefined;
}

/** The answer to a failure no mapping names (logged where it is met). */
export const internalError = () => new HttpError(500, 'internal_error', 'The server failed; see its log.');

/** Maps Fastify's own failures (bad JSON, body too large, …) and stray exceptions onto the error body. */
export function handleError(error: FastifyError | HttpError, request: FastifyRequest, reply: FastifyReply) {
  const answer = answerOf(error);
  if (answer !== undefined) {
    return reply
      .code(answer.status)
      .headers(answer.headers)
      .send(errorBody(answer.code, answer.message, answer.details));
  }
  const status = (error as FastifyError).statusCode ?? 500;
  if (status === 413) {
    return reply.code(413).send(errorBody('payload_too_large', 'The request body is over the size limit.'));
  }
  if (status === 415) {
    return reply.code(415).send(errorBody('unsupported_media_type', 'Send the body as application/json.'));
  }
  if (status >= 400 && status < 500) {
    return reply.code(400).send(errorBody('invalid_request', `The request is malformed: ${error.message}`));
  }
  request.log.error({ err: error }, 'unhandled error');
  const failed = internalError();
  return reply.code(failed.status).send(errorBody(failed.code, failed.message));
}

/**
 * The error handler of a scope whose routes take forms (OAuth, the verification page, the dashboard): a
 * body Fastify cannot read (malformed, another media type, too large) is answered by `unreadable`, in
 * the routes' own form, as a 400 the document lists; anything else as `handleError` does.
 */
export function formScopeErrorHandler(
  unreadable: (reply: FastifyReply, request: FastifyRequest, message: string) => FastifyReply,
) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const status = error.statusCode ?? 500;
    if (error instanceof HttpError || status < 400 || status >= 500)
      return handleError(error, request, reply);
    return unreadable(
      reply,
      request,
      `The request could not be read: send it form-encoded (${error.message}).`,
    );
  };
}

/**
 * Fastify's answers before any route runs, in the contract's body: a URL that does not decode (400
 * `invalid_url`), a path segment past the router's `maxParamLength` (414 `uri_too_long`), a failed
 * async route constraint. Fastify's own bodies (`{"error":"Bad Request","code":"FST_ERR_…"}`) are not.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply
    .header('x-request-id', request.id)
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff');
  const path = request.url.split('?')[0] ?? '';
  switch (error.code) {
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return reply
        .code(414)
        .send(
          errorBody(
            'uri_too_long',
            `A segment of the path ${preview(path)} is longer than the server takes (${MAX_PARAM_LENGTH} characters); no id is that long.`,
          ),
        );
    case 'FST_ERR_BAD_URL':
      return reply
        .code(400)
        .send(errorBody('invalid_url', `The path ${preview(path)} is not validly percent-encoded.`));
    default:
      return reply
        .code(error.statusCode !== undefined && error.statusCode < 500 ? 400 : 500)
        .send(errorBody('invalid_request', `The request could not be routed: ${error.message}`));
  }
}

/** The router's longest path parameter, the longest id (Fastify's default): a longer one is 414 `uri_too_long`. */
export const MAX_PARAM_LENGTH = MAX_ID_LENGTH;

/** The start of a path, for a message about a path too long or malformed to repeat whole. */
function preview(path: string): string {
  return JSON.stringify(path.length > 120 ? `${path.slice(0, 120)}…` : path);
}

/**
 * Node's HTTP parser refusing a request before Fastify sees it (Fastify's `clientErrorHandler`): headers
 * (with the request line: the URL) over Node's limit are 431 `headers_too_large`, a request not received
 * in time 408 `request_timeout`, anything else that is not HTTP 400 `invalid_request`, each in the
 * contract's body; then the connection is closed, as Node and Fastify do.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, body] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [
          431,
          errorBody(
            'headers_too_large',
            `The request line and headers are larger than the server accepts (${maxHeaderSize} bytes); send a shorter URL or fewer or smaller headers.`,
          ),
        ]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, errorBody('request_timeout', 'The request did not arrive in time; send it again.')]
        : [400, errorBody('invalid_request', 'The request is not valid HTTP/1.1.')];
  const text = JSON.stringify(body);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(text)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy(error);
}
