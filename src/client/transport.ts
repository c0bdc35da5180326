// The one way the client talks HTTP: node:http(s) requests over a keep-alive Agent (msw's interceptors see
// every one in the tests), bearer auth, JSON in and out, typed errors, retries, one token refresh on 401,
// abort. Not fetch: undici's fetch (WHATWG streams, webidl, headers) was a quarter of a network command's
// start-up, for one JSON body in and one out (profiled).
import type { Agent, ClientRequest, IncomingMessage, RequestOptions as NodeRequestOptions } from 'node:http';
import { setTimeout as sleepFor } from 'node:timers/promises';
import { StringDecoder } from 'node:string_decoder';
import type { paths } from '../contract/types.gen.js';
import { addRunSecret, maskToken, redactJson, redactSecrets } from '../core/redact.js';
import { parseLossless } from '../core/lossless-json.js';
import type { BodyReader } from './json-elements.js';
import { stripControlCharacters } from '../core/terminal-text.js';
import { CliError, ExitCode } from '../core/errors.js';
import {
  INSECURE_URL_ADVICE,
  INSECURE_URL_CODE,
  isInsecureUrl,
  isLoopbackUrl,
  shownUrl,
} from '../core/url-policy.js';
import { ApiError, apiErrorFrom, networkErrorFrom } from './errors.js';
import { DEFAULT_RETRY_POLICY, decideRetry, parseRetryAfter } from './retry.js';
import type { AttemptOutcome, RetryPolicy } from './retry.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A path of the contract (src/contract/openapi.yaml) as it is written there: `/api/tables/{tableId}`. */
export type PathTemplate = keyof paths & string;

/** A template with each `{name}` filled by some value: `/api/tables/${string}`. */
export type FilledPath<T extends string> = T extends `${infer Head}{${string}}${infer Tail}`
  ? `${Head}${string}${FilledPath<Tail>}`
  : T;

/** The names of a template's parameters: `tableId` of `/api/tables/{tableId}`. */
export type PathParameters<T extends string> = T extends `${string}{${infer Name}}${infer Tail}`
  ? Name | PathParameters<Tail>
  : never;

/** A template of the contract without parameters: written as it is, it is the request path. */
type PlainPath<T extends string> = T extends `${string}{${string}` ? never : T;

declare const checked: unique symbol;
/** A path built by `pathOf` (checked against a whole template) or let through by `uncheckedPath`. */
export type CheckedPath = string & { readonly [checked]: true };

/**
 * A request path of the contract: a path openapi.yaml does not have fails tsc instead of answering 404 at
 * run time. One with parameters is built by `pathOf`, which checks the whole template; a template literal
 * is refused, since `/api/tables/${id}/gatee1` would pass as `/api/tables/{tableId}` filled.
 */
export type ApiPath = PlainPath<PathTemplate> | CheckedPath;

/**
 * Where the bearer token comes from. `getToken` is asked before every attempt (it may refresh a
 * token about to expire). On a 401, `onUnauthorized` is called once and, when it returns a new
 * token, the request is sent once more with it; a second 401 is final.
 */
export interface AuthProvider {
  getToken(): Promise<string>;
  onUnauthorized?(): Promise<string | undefined>;
}

/** Auth with a fixed token (a static `cli_` token or `SERVICE_TOKEN`): nothing to refresh. */
export function staticToken(token: string): AuthProvider {
  return { getToken: async () => token };
}

export interface TransportTimeouts {
  /** TCP and TLS connect (default 10 s). */
  connectMs: number;
  /** From sending the request to the end of the response headers (default 30 s). */
  headersMs: number;
  /** Longest silence while reading a response body (default 30 s). */
  bodyMs: number;
  /**
   * How long a kept-alive connection may sit idle before gds closes it (default 4 s): shorter than a
   * server's own idle timeout (Node's is 5 s), so no request goes out on a connection the server is
   * closing. A POST that fails so is not sent again: the service may have processed it.
   */
  idleMs: number;
}

export interface TransportOptions {
  /** The REST base URL, stage segment included; request paths (`/api/...`) are appended to it. */
  baseUrl: string;
  auth?: AuthProvider;
  /** Version in the `User-Agent: gds/<version>` header. */
  version?: string;
  timeouts?: Partial<TransportTimeouts>;
  retry?: Partial<RetryPolicy>;
  /** Debug lines (no token and no control character in them). Default: stderr when `GDS_DEBUG=1`, else silent. */
  logger?: (line: string) => void;
  /** Injected for tests; default real timers and Math.random. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
}

/** Per-call options every area method takes last. */
export interface CallOptions {
  /** Aborts the request and any retry wait (Ctrl-C). */
  signal?: AbortSignal;
}

/** Options of a write that compared with the service first: the version it was computed from. */
export interface WriteOptions extends CallOptions {
  /**
   * Sent as `If-Match`: the service answers 412 `precondition_failed` when what it holds has moved from
   * this version meanwhile (and `changed: false` when it already holds what is written).
   */
  ifMatch?: number;
}

/** Options of a write `gds apply` makes for one of its project's tables. */
export interface ProjectWriteOptions extends WriteOptions {
  /** Sent as `?project=`: the service writes only that project's table (409 `owned_elsewhere` otherwise). */
  project?: string;
}

/** The query of a write for `project`'s table (none without a project). */
export function projectQuery(project: string | undefined): { query?: { project: string } } {
  return project === undefined ? {} : { query: { project } };
}

/** The request options of a write: its signal, and `If-Match` when it names a version. */
export function writeOptions(options: WriteOptions = {}): CallOptions & { headers?: Record<string, string> } {
  const { ifMatch, ...call } = options;
  return ifMatch === undefined ? call : { ...call, headers: { 'if-match': String(ifMatch) } };
}

/** A query parameter's value; an array is the parameter repeated (`?name=a&name=b`). */
export type QueryValue = string | number | boolean | undefined | readonly string[];

export interface RequestOptions extends CallOptions {
  method: HttpMethod;
  /** Path from `/api` on, parameters already filled in (use `pathOf`). */
  path: ApiPath;
  query?: Record<string, QueryValue>;
  /** Sent as JSON when present (a `JsonBody` as its bytes are). */
  body?: unknown;
  /** Send the bearer token (default true; false for the refresh endpoint). */
  authenticated?: boolean;
  /** Extra request headers (`gds api -H`); the client's own accept, content-type and authorization win. */
  headers?: Record<string, string>;
  /**
   * How long to wait for the answer's headers, when the service works longer than the default 30 s before
   * answering (a gate run scans the whole table under its own statement deadlines).
   */
  headersTimeoutMs?: number;
  /**
   * Sent as `Idempotency-Key` to a route that applies a keyed request once (the recertify signal), so the
   * request is retried after a lost connection as a GET is. An `Idempotency-Key` in `headers` (`gds api -H`)
   * is sent as given and never trusted for a retry: most routes do not honour it.
   */
  idempotencyKey?: string;
  /**
   * Reads a 2xx answer's body as it arrives, instead of parsing its whole text at its end (a fresh reader for
   * each attempt): `arrayElementsReader` for a page of thousands of records.
   */
  reader?: () => BodyReader<unknown>;
}

/**
 * A request body already written as JSON bytes, sent as they are: a caller that builds a big body row by row
 * (records import) keeps it out of V8's heap instead of handing over objects to stringify.
 */
export class JsonBody {
  constructor(readonly bytes: Uint8Array) {}
}

/** The response headers, read as `Headers.get` reads them (names in any case, repeated values joined). */
export interface ResponseHeaders {
  get(name: string): string | null;
  /** Every header as received, lower-case names (`gds api -i`); absent on stand-ins of tests. */
  entries?(): Array<[string, string]>;
}

export interface ApiResponse<T> {
  status: number;
  data: T;
  headers: ResponseHeaders;
  requestId: string | undefined;
  /**
   * How many times the request was sent again after an attempt that may have been applied (no answer, a
   * 502/503/504); not after a 429 or a 503 with Retry-After, which stored nothing. 0: the answer is to the only
   * attempt that may have been applied.
   */
  retriesAfterLoss: number;
}

export interface TransportStats {
  /** HTTP attempts sent, retries included. */
  requests: number;
  retries: number;
}

export interface Transport {
  request<T>(options: RequestOptions): Promise<ApiResponse<T>>;
  /** `request` reduced to the parsed body. */
  send<T>(options: RequestOptions): Promise<T>;
  readonly stats: Readonly<TransportStats>;
  /**
   * A JSON value from an answer (an error a 2xx body carries) with secrets masked, as an error answer's are:
   * every token the transport sent, and every kind the service issues.
   */
  masked<T>(value: T): T;
  /** Closes the keep-alive pool. */
  close(): Promise<void>;
}

/**
 * The answer's headers of a request whose work is the service's longest (a gate run or submission, a
 * certification: full scans under a deadline per statement, 30 s by default on the reference server): ten
 * minutes, far past a scan's statements, so the client never gives up before the service answers.
 */
export const LONG_WORK_TIMEOUT_MS = 10 * 60_000;

const DEFAULT_TIMEOUTS: TransportTimeouts = {
  connectMs: 10_000,
  headersMs: 30_000,
  bodyMs: 30_000,
  idleMs: 4_000,
};

/** A path of the contract with each `{name}` replaced by its URL-encoded value. */
export function pathOf<T extends PathTemplate>(
  template: T,
  params: Record<PathParameters<T>, string>,
): FilledPath<T> & CheckedPath {
  const values: Record<string, string | undefined> = params;
  return template.replace(/\{(\w+)\}/g, (_match, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`missing path parameter ${name} for ${template}`);
    return encodeURIComponent(value);
  }) as FilledPath<T> & CheckedPath;
}

/**
 * A request path not checked against the contract: the one the user types (`gds api <path>`), where the
 * service says whether it exists, and the stand-in paths of the transport's own tests.
 */
export function uncheckedPath(path: string): ApiPath {
  return path as CheckedPath;
}

export function createTransport(options: TransportOptions): Transport {
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const sleep = options.sleep ?? defaultSleep;
  const random = options.random ?? Math.random;
  const userAgent = `gds/${options.version ?? 'dev'}`;
  const baseUrl = checkedBaseUrl(options.baseUrl);
  const proxyEnv = proxyEnvironmentFor(new URL(baseUrl), process.env);
  // node:http or node:https, loaded on the first request of its scheme: building a client costs nothing.
  const pools = new Map<string, Pool>();
  const pool = (protocol: string) => {
    let found = pools.get(protocol);
    if (found === undefined) {
      found = openPool(protocol, timeouts.idleMs, proxyEnv);
      pools.set(protocol, found);
    }
    return found;
  };
  const stats: TransportStats = { requests: 0, retries: 0 };
  const tokensSeen: string[] = [];
  const write = options.logger ?? (process.env.GDS_DEBUG === '1' ? stderrLogger : undefined);
  // Lines quote the server (x-request-id, error text): stripped before they can reach a terminal.
  const log = (line: string) => write?.(stripControlCharacters(redactSecrets(line, tokensSeen)));
  let refreshing: Promise<string | undefined> | undefined;
  let lastRefresh: { stale: string; fresh: string } | undefined;

  // One refresh per stale token: concurrent 401s share it, and a later 401 for the same stale
  // token (a request sent before the refresh ended) reuses its result.
  function renew(auth: AuthProvider, stale: string): Promise<string | undefined> {
    if (lastRefresh?.stale === stale) return Promise.resolve(lastRefresh.fresh);
    refreshing ??= Promise.resolve(auth.onUnauthorized?.())
      .then((fresh) => {
        if (fresh !== undefined) lastRefresh = { stale, fresh };
        return fresh;
      })
      .finally(() => {
        refreshing = undefined;
      });
    return refreshing;
  }

  async function tokenFor(authenticated: boolean): Promise<string | undefined> {
    if (!authenticated || !options.auth) return undefined;
    const token = await options.auth.getToken();
    remember(token);
    return token;
  }

  function remember(token: string) {
    if (!tokensSeen.includes(token)) tokensSeen.push(token);
    addRunSecret(token);
  }

  async function request<T>(req: RequestOptions): Promise<ApiResponse<T>> {
    let url = buildUrl(baseUrl, req.path, req.query);
    const body =
      req.body === undefined
        ? undefined
        : req.body instanceof JsonBody
          ? req.body.bytes
          : JSON.stringify(req.body);
    const authenticated = req.authenticated ?? true;
    let token = await tokenFor(authenticated);
    let retries = 0;
    let retriesAfterLoss = 0;
    let redirects = 0;
    let refreshed = false;

    for (;;) {
      req.signal?.throwIfAborted();
      const headers: Record<string, string> = {
        ...lowerCaseKeys(req.headers),
        ...(req.idempotencyKey === undefined ? {} : { 'idempotency-key': req.idempotencyKey }),
        accept: 'application/json',
        'user-agent': userAgent,
      };
      if (body !== undefined) headers['content-type'] = 'application/json';
      if (token !== undefined) headers.authorization = `Bearer ${token}`;

      const started = Date.now();
      stats.requests += 1;
      log(`→ ${req.method} ${url}${token ? ` (token ${maskToken(token)})` : ''}`);
      // node:http never follows a redirect: below, only a GET within the origin is (the body and the token
      // must not go anywhere else).
      const target = new URL(url);
      const answer = await exchange(
        pool(target.protocol),
        target,
        { method: req.method, headers, body },
        req.headersTimeoutMs === undefined ? timeouts : { ...timeouts, headersMs: req.headersTimeoutMs },
        req.signal,
        req.reader,
      );
      let outcome: AttemptOutcome;
      let failure: Error;
      if (answer instanceof Error) {
        const network = networkErrorFrom(answer, req.method, url);
        log(`✗ ${req.method} ${url} ${Date.now() - started}ms: ${network.message}`);
        if (network.failure === 'certificate') throw network; // the same certificate comes back
        failure = network;
        outcome = {
          kind: 'network',
          answerTimedOut: network.code === 'HEADERS_TIMEOUT' || network.code === 'BODY_TIMEOUT',
        };
      } else {
        const { res, text, read } = answer;
        const requestId = res.headers.get('x-request-id') ?? undefined;
        const retryAfterSeconds = parseRetryAfter(res.headers.get('retry-after'), Date.now());
        const elapsed = Date.now() - started;
        log(
          `← ${res.status} ${req.method} ${url} ${elapsed}ms${requestId ? ` request-id=${requestId}` : ''}`,
        );
        const location = redirectLocation(res);
        if (location !== undefined) {
          const target = followableRedirect(req.method, url, location, redirects);
          if (target === undefined) throw redirectRefused(res, req.method, url, location, tokensSeen);
          redirects += 1;
          log(`following ${res.status} of ${req.method} ${url} to ${redactSecrets(target, tokensSeen)}`);
          url = target;
          continue;
        }
        if (res.ok) {
          return {
            status: res.status,
            data: read === undefined ? parseBody<T>(text, res, req, url) : readBody<T>(read, res, req, url),
            headers: res.headers,
            requestId,
            retriesAfterLoss,
          };
        }
        if (res.status === 401 && token !== undefined && !refreshed && options.auth?.onUnauthorized) {
          refreshed = true;
          log(`401 on ${req.method} ${url}: refreshing the access token once`);
          const fresh = await renew(options.auth, token);
          if (fresh !== undefined) {
            remember(fresh);
            token = fresh;
            continue;
          }
        }
        const context = {
          status: res.status,
          statusText: res.statusText,
          requestId,
          retryAfterSeconds,
          headers: res.headers.entries?.() ?? [],
        };
        failure = apiErrorFrom(context, text, { method: req.method, url }, tokensSeen);
        outcome = { kind: 'status', status: res.status, retryAfterSeconds };
      }

      const keyed = req.idempotencyKey !== undefined;
      const decision = decideRetry(req.method, outcome, retries, policy, random, keyed);
      if (!decision.retry) throw failure;
      retries += 1;
      if (decision.refused !== true) retriesAfterLoss += 1;
      stats.retries += 1;
      log(
        `retry ${retries}/${policy.maxRetries} of ${req.method} ${url} in ${decision.delayMs}ms (${decision.reason})`,
      );
      await sleep(decision.delayMs, req.signal);
      token = await tokenFor(authenticated);
    }
  }

  return {
    request,
    send: async <T>(req: RequestOptions) => (await request<T>(req)).data,
    stats,
    masked: <T>(value: T) => redactJson(value, tokensSeen) as T,
    close: async () => {
      for (const opened of pools.values()) opened.agent.destroy();
      pools.clear();
    },
  };
}

/** The request function and keep-alive Agent of one scheme (`http:` or `https:`). */
interface Pool {
  request: (url: URL, options: NodeRequestOptions) => ClientRequest;
  agent: Agent;
}

function openPool(protocol: string, idleMs: number, proxyEnv: Record<string, string> | undefined): Pool {
  // Loaded on first use, and called through the module object: msw's interceptors replace its `request`.
  const scheme = process.getBuiltinModule(protocol === 'https:' ? 'node:https' : 'node:http');
  return {
    request: (url, options) => scheme.request(url, options),
    // HTTPS_PROXY / HTTP_PROXY / NO_PROXY (or lower-case): Node's agent tunnels https through the proxy
    // with CONNECT and sends http to it, and reaches the NO_PROXY hosts directly.
    agent: new scheme.Agent({
      keepAlive: true,
      timeout: idleMs,
      ...(proxyEnv === undefined ? {} : { proxyEnv }),
    }),
  };
}

/**
 * Loopback hosts in the NO_PROXY syntax of Node's agent (an IPv4 range is `first-last`). A loopback base
 * never goes through a proxy: plain http is allowed only for loopback, so a proxy would get the bearer
 * token in clear text, and it would connect to its own loopback, not ours.
 */
const loopbackNoProxy = ['localhost', '127.0.0.0-127.255.255.255', '::1'];

/**
 * The proxy variables Node's agent reads, upper-case or lower-case as curl takes them; undefined: none.
 * NO_PROXY always lists the loopback hosts besides the user's own.
 */
export function proxyEnvironment(env: NodeJS.ProcessEnv): Record<string, string> | undefined {
  const pick = (name: string) => env[name] || env[name.toLowerCase()] || undefined;
  const found = Object.fromEntries(
    ['HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY'].flatMap((name) => {
      const value = pick(name);
      return value === undefined ? [] : [[name, value]];
    }),
  );
  if (found.HTTPS_PROXY === undefined && found.HTTP_PROXY === undefined) return undefined;
  const noProxy = [found.NO_PROXY, ...loopbackNoProxy].filter((entry) => entry !== undefined);
  return { ...found, NO_PROXY: noProxy.join(',') };
}

/**
 * The proxy variables to give Node's agent for a service at `base`, the one that carries its requests
 * checked first (checkProxyVariable); undefined when none is set, and for a loopback base, never proxied.
 */
function proxyEnvironmentFor(base: URL, env: NodeJS.ProcessEnv): Record<string, string> | undefined {
  if (isLoopbackUrl(base)) return undefined;
  checkProxyVariable(env, base.protocol);
  return proxyEnvironment(env);
}

/** The name of the variable that holds the proxy for requests of `protocol` (upper-case first), if any is set. */
export function proxyVariable(env: NodeJS.ProcessEnv, protocol: string): string | undefined {
  const name = protocol === 'https:' ? 'HTTPS_PROXY' : 'HTTP_PROXY';
  return [name, name.toLowerCase()].find((variable) => (env[variable] ?? '') !== '');
}

/**
 * A CliError (exit 2, invalid_proxy) when the proxy variable for `protocol` holds what Node's agent would
 * refuse (it throws the value whole, password and all) or ignore (it connects directly, behind the user's
 * back): no http:// or https:// scheme, or a URL whose user name or password holds an unencoded / ? # @.
 * The value is shown with its credentials masked.
 */
export function checkProxyVariable(env: NodeJS.ProcessEnv, protocol: string): void {
  const name = proxyVariable(env, protocol);
  const value = name === undefined ? undefined : env[name];
  if (name === undefined || value === undefined) return;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(value)?.[1]?.toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') {
    const named = scheme === undefined ? 'names no scheme' : `names a ${scheme}:// proxy`;
    throw new CliError(
      `${name} ${named} (${shownUrl(value)}): gds goes only through an http:// or https:// proxy.`,
      {
        exitCode: ExitCode.Usage,
        code: 'invalid_proxy',
        suggestion:
          scheme === undefined
            ? `Write it with its scheme: ${name}=http://${shownUrl(value)}, or unset ${name} to connect directly.`
            : `Set ${name} to the http:// address of a proxy, or unset it to connect directly.`,
      },
    );
  }
  if (/[\r\n]/.test(value)) {
    throw new CliError(`${name} holds a line break: ${shownUrl(value.trim())}.`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_proxy',
      suggestion: `Set ${name} to the proxy's address alone, on one line, or unset it to connect directly.`,
    });
  }
  const url = URL.parse(value);
  const unread =
    url === null ||
    /[?#]/.test(url.href) ||
    (value.includes('@') && url.username === '' && url.password === '');
  if (!unread) return;
  throw new CliError(`${name} is not a proxy URL gds can read: ${shownUrl(value)}.`, {
    exitCode: ExitCode.Usage,
    code: 'invalid_proxy',
    suggestion:
      'In the user name and password before the host, percent-encode / ? # @ : and % ' +
      `(%2F %3F %23 %40 %3A %25); or unset ${name} to connect directly.`,
  });
}

/** What one attempt got back, as far as the transport reads it. */
interface Answer {
  status: number;
  statusText: string;
  ok: boolean;
  headers: ResponseHeaders;
}

/** A timeout of the transport's own, named by its code (errors.ts gives the reason). */
function timeoutError(code: 'CONNECT_TIMEOUT' | 'HEADERS_TIMEOUT' | 'BODY_TIMEOUT'): Error {
  return Object.assign(new Error(code.toLowerCase().replace('_', ' ')), { code });
}

/** What a `reader` made of a 2xx answer's body: its value, or the error that refused its text. */
type ReadBody = { value: unknown } | { error: unknown };

/**
 * The response and its body text (or, for a 2xx answer with a `reader`, what the reader read of it), or the
 * error of the attempt (rethrowing an abort as is).
 */
async function exchange(
  pool: Pool,
  url: URL,
  init: { method: HttpMethod; headers: Record<string, string>; body: string | Uint8Array | undefined },
  timeouts: TransportTimeouts,
  signal: AbortSignal | undefined,
  reader?: () => BodyReader<unknown>,
): Promise<{ res: Answer; text: string; read?: ReadBody } | Error> {
  try {
    return await new Promise((resolve, reject) => {
      const timers = new Set<NodeJS.Timeout>();
      let settled = false;
      // The timeout settles the attempt before destroying the request, whose own error would say less.
      // None starts once the attempt is settled (a late socket event would keep the process alive).
      const after = (ms: number, code: Parameters<typeof timeoutError>[0]) => {
        if (settled) return () => {};
        const timer = setTimeout(() => {
          const error = timeoutError(code);
          settle(reject)(error);
          request.destroy(error);
        }, ms);
        timers.add(timer);
        return () => {
          clearTimeout(timer);
          timers.delete(timer);
        };
      };
      const settle =
        <T>(done: (value: T) => void) =>
        (value: T) => {
          settled = true;
          for (const timer of timers) clearTimeout(timer);
          done(value);
        };
      const headers = { ...init.headers };
      if (init.body !== undefined) headers['content-length'] = String(Buffer.byteLength(init.body));
      const request = pool.request(url, {
        method: init.method,
        headers,
        agent: pool.agent,
        ...(signal === undefined ? {} : { signal }),
      });
      request.on('error', settle(reject));
      let answered = () => {};
      const awaitHeaders = () => (answered = after(timeouts.headersMs, 'HEADERS_TIMEOUT'));
      request.on('socket', (socket) => {
        if (!socket.connecting) return awaitHeaders(); // a kept-alive connection
        const connected = after(timeouts.connectMs, 'CONNECT_TIMEOUT');
        socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
          connected();
          awaitHeaders();
        });
      });
      request.on('response', (res: IncomingMessage) => {
        answered();
        let silence = after(timeouts.bodyMs, 'BODY_TIMEOUT');
        // Decoded as it arrives: a body of megabytes is never also held as one Buffer, nor turned into a
        // string outside the JavaScript heap.
        const decoder = new StringDecoder('utf8');
        const chunks: string[] = [];
        const status = res.statusCode ?? 0;
        const ok = status >= 200 && status < 300;
        // A 2xx body with a reader goes to it as its bytes arrive (a page of held tables: only each table's
        // text is decoded), each chunk garbage once read.
        const body = ok ? reader?.() : undefined;
        let refused: { error: unknown } | undefined;
        res.on('data', (chunk: Buffer) => {
          if (body === undefined) chunks.push(decoder.write(chunk));
          else if (refused === undefined)
            try {
              body.write(chunk);
            } catch (error) {
              refused = { error };
            }
          silence();
          silence = after(timeouts.bodyMs, 'BODY_TIMEOUT');
        });
        res.on('error', settle(reject));
        res.on('end', () => {
          if (body === undefined) chunks.push(decoder.end());
          let read: ReadBody | undefined;
          if (body !== undefined)
            try {
              read = refused ?? { value: body.end() };
            } catch (error) {
              read = { error };
            }
          settle(resolve)({
            res: { status, statusText: res.statusMessage ?? '', ok, headers: headersOf(res) },
            text: chunks.join(''),
            ...(read === undefined ? {} : { read }),
          });
        });
      });
      request.end(init.body);
    });
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    return err instanceof Error ? err : new Error(String(err));
  }
}

function headersOf(res: IncomingMessage): ResponseHeaders {
  return {
    get(name: string) {
      const value = res.headers[name.toLowerCase()];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(', ') : value;
    },
    entries() {
      return Object.entries(res.headers).flatMap(([name, value]) =>
        value === undefined
          ? []
          : [[name, Array.isArray(value) ? value.join(', ') : value] as [string, string]],
      );
    },
  };
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Same-origin redirects of a GET followed in a row before giving up. */
const MAX_REDIRECTS = 5;

/** The raw `Location` of a redirect answer, or undefined for any other answer. */
function redirectLocation(res: Answer): string | undefined {
  if (!REDIRECT_STATUSES.has(res.status)) return undefined;
  return res.headers.get('location') ?? undefined;
}

/** The absolute URL to follow, or undefined when the redirect must not be followed: only a GET (no
 *  body) to the same origin (scheme, host and port), at most MAX_REDIRECTS times. */
function followableRedirect(method: HttpMethod, from: string, location: string, count: number) {
  if (method !== 'GET' || count >= MAX_REDIRECTS) return undefined;
  let target: URL;
  try {
    target = new URL(location, from);
  } catch {
    return undefined;
  }
  return target.origin === new URL(from).origin ? target.toString() : undefined;
}

function redirectRefused(
  res: Answer,
  method: HttpMethod,
  url: string,
  location: string,
  knownSecrets: readonly string[],
): ApiError {
  const shown = redactSecrets(location, knownSecrets);
  const from = new URL(url);
  const why =
    method !== 'GET'
      ? `gds does not follow a redirect of a ${method}, which would send its body again`
      : `gds follows redirects only within ${from.origin}, at most ${MAX_REDIRECTS} in a row`;
  return new ApiError({
    status: res.status,
    code: 'redirect_refused',
    message:
      `The service answered ${method} ${from.pathname} with ${res.status}, redirecting to ${shown}; ${why}. ` +
      'If the service moved, point gds at its new address (--base <url> or SERVICE_API_URL)',
    details: { location: shown },
    requestId: res.headers.get('x-request-id') ?? undefined,
    method,
    url,
  });
}

function lowerCaseKeys(headers: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]),
  );
}

function checkedBaseUrl(raw: string): string {
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (url && (url.username || url.password)) {
    throw new Error(
      `The API base URL ${JSON.stringify(`${url.protocol}//${url.host}${url.pathname}`)} carries a user name or password; ` +
        'pass it without them (gds authenticates with its own token: gds auth login or SERVICE_TOKEN).',
    );
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash) {
    throw new Error(
      `The API base URL ${JSON.stringify(shownUrl(raw))} is not an http(s) address; ` +
        'pass --base https://host[/stage] or set SERVICE_API_URL.',
    );
  }
  if (isInsecureUrl(url)) {
    throw Object.assign(
      new Error(
        `Refusing plain http to ${url.host}: the API base URL must use https. ${INSECURE_URL_ADVICE}`,
      ),
      { code: INSECURE_URL_CODE },
    );
  }
  return url.toString().replace(/\/+$/, '');
}

function buildUrl(baseUrl: string, path: string, query: Record<string, QueryValue> | undefined): string {
  const url = new URL(baseUrl + path);
  for (const [key, value] of Object.entries(query ?? {})) {
    if (typeof value === 'object') for (const each of value) url.searchParams.append(key, each);
    else if (value !== undefined) url.searchParams.set(key, String(value));
  }
  return url.toString();
}

function parseBody<T>(text: string, res: Answer, req: RequestOptions, url: string): T {
  if (text === '') return undefined as T;
  try {
    // A number no double holds (a warehouse's numeric or bigint) keeps its digits: see lossless-json.ts.
    return parseLossless(text) as T;
  } catch {
    throw notJson(res, req, url);
  }
}

/** What a reader read of the body, as parseBody's value: refused text is the same `invalid_response`. */
function readBody<T>(read: ReadBody, res: Answer, req: RequestOptions, url: string): T {
  if ('error' in read) throw notJson(res, req, url);
  return read.value as T;
}

function notJson(res: Answer, req: RequestOptions, url: string): ApiError {
  return new ApiError({
    status: res.status,
    code: 'invalid_response',
    message: `The service answered ${req.method} ${req.path} with a body that is not JSON`,
    requestId: res.headers.get('x-request-id') ?? undefined,
    method: req.method,
    url,
  });
}

function stderrLogger(line: string): void {
  process.stderr.write(`gds: ${line}\n`);
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return sleepFor(ms, undefined, { signal });
}
