// The reference server: `createServer(options)` opens the database (PGlite or PostgreSQL), applies
// migrations, seeds on first start, listens, and returns its URL, ready info and a close function.
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { REQUEST_BODY_LIMIT_BYTES } from '../core/artifact-bounds.js';
import type { FastifyServerOptions } from 'fastify';
import { Authenticator } from './auth/caller.js';
import { loadSigningKeys } from './auth/keys.js';
import { DEFAULT_REFRESH_GRACE_MS } from './auth/reissue.js';
import { JOB_READ_HOLD_MS } from './routes/gate-jobs.js';
import { TokenSigner } from './auth/tokens.js';
import type { Clock } from './clock.js';
import { offsetFileClock, systemClock } from './clock.js';
import type { AppContext } from './context.js';
import { authenticate } from './context.js';
import { ContractChecker } from './contract-check.js';
import type { Queryable } from './db/handle.js';
import { exclusively, openDb } from './db/index.js';
import { migrate } from './db/migrations.js';
import {
  clientErrorHandler,
  errorBody,
  frameworkErrorHandler,
  handleError,
  MAX_PARAM_LENGTH,
} from './errors.js';
import { checkIds } from './input-rule.js';
import type { JobControl, JobsMode } from './governance/jobs.js';
import { JobRunner } from './governance/jobs.js';
import { OwnNames } from './host-check.js';
import { RateLimiter } from './rate-limit.js';
import type { ReadyInfo } from './ready.js';
import { buildReadyInfo } from './ready.js';
import { readJsonBodies } from './json-body.js';
import { certifyRoutes } from './routes/certify.js';
import { configRoutes } from './routes/config.js';
import { contractRoutes } from './routes/contract.js';
import { promotionRoutes } from './routes/promotions.js';
import { versionRoutes } from './routes/versions.js';
import { connectorRoutes } from './routes/connectors.js';
import { dashboardRoutes } from './dashboard/routes.js';
import { graphqlRoutes } from './doors/graphql.js';
import { mcpRoutes } from './doors/mcp.js';
import { definitionRoutes } from './routes/definitions.js';
import { gateJobRoutes } from './routes/gate-jobs.js';
import { gateRoutes } from './routes/gates.js';
import { integrationRoutes } from './routes/integration.js';
import { revocationRoutes } from './routes/revocation.js';
import { notificationRoutes } from './routes/notifications.js';
import { recertificationRoutes } from './routes/recertification.js';
import { upgradeZonelessViews } from './certification/view.js';
import { tableRoutes } from './routes/tables.js';
import { heldTableRoutes } from './routes/held-tables.js';
import { artifactBatchRoutes } from './routes/artifact-batch.js';
import { meRoutes } from './routes/me.js';
import { oauthRoutes } from './routes/oauth.js';
import type { DeviceFlowOptions } from './oauth/settings.js';
import { DATA_PLANE_ROUTES, recordRoutes } from './routes/records.js';
import { discoveryRoute, wellKnownRoutes } from './routes/well-known.js';
import { workspaceRoutes } from './routes/workspace.js';
import { seedIfEmpty } from './seed.js';
import { createDbtWarehouse } from './dbt-warehouse.js';
import { checkStage, DEFAULT_HOST, DEFAULT_PORT, DEFAULT_RATE_LIMIT, DEFAULT_STAGE } from './defaults.js';
import { RequestsInFlight } from './requests-in-flight.js';
import {
  MIN_SIGN_IN_SECRET_LENGTH,
  newSignInSecret,
  reachableBeyondLoopback,
  SignInSecret,
} from './sign-in-secret.js';

/** Failed authentications per minute per client address before 429. */
export const DEFAULT_FAILED_AUTH_LIMIT = 300;
/** Integration tokens per minute per person before 429. */
export const DEFAULT_MINT_LIMIT = 30;
/** The largest body the spec names (recertify, §8); data-plane imports of 10,000 rows fit too. */
export const BODY_LIMIT_BYTES = REQUEST_BODY_LIMIT_BYTES;

export interface ServerOptions {
  /** Default 8787; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1 (loopback only). */
  host?: string;
  /** The REST door's stage segment (default `v1`): the REST base URL is `{origin}/{stage}`. */
  stage?: string;
  /** PGlite data directory (state survives restarts); in memory when absent. */
  dataDir?: string;
  /**
   * PGlite: the folder in which an in-memory database and each gate sandbox unpack their cluster (a private
   * folder each, removed on close); default the temp folder. Tests pass one in memory (/dev/shm).
   */
  scratchDir?: string;
  /** A PostgreSQL connection string; used instead of PGlite. */
  databaseUrl?: string;
  /** Requests per minute per token on table endpoints; default 200. */
  rateLimit?: number;
  /** Failed authentications per minute per client address; default 300. */
  failedAuthLimit?: number;
  /** Integration tokens minted per minute per person; default 30. */
  mintLimit?: number;
  /** "Now" in epoch ms; tests inject a movable clock (token expiry, rate windows). */
  clock?: Clock;
  /** Check every response against openapi.yaml and record violations in `contract`. */
  contractCheck?: boolean;
  /** Fastify logger options; off by default. */
  logger?: FastifyServerOptions['logger'];
  /** `auto` (default): a worker runs queued jobs; `manual`: only `jobs.runPending()` runs them (tests). */
  jobs?: JobsMode;
  /**
   * Workspaces to seed into an empty database (default 1): 1 seeds the main workspace and a small second
   * one (one owner) that proves isolation; N > 1 seeds N full ones (every role, dev/staging/production).
   */
  workspaces?: number;
  /** Device sign-in: poll interval and code lifetime (tests shorten them). */
  deviceFlow?: DeviceFlowOptions;
  /** Reuse grace of rotated refresh tokens (default 30 s): a spent one presented again within it gets the
   *  same rotated pair; after it, reuse revokes the family. 0 turns the grace off. */
  refreshGraceMs?: number;
  /**
   * How long after a gate job is queued a status read of it, while the job has not ended, waits for its
   * end before answering (default 250 ms, JOB_READ_HOLD_MS): `push --wait` reads at once and hears of a
   * job that ends in a few milliseconds then, not a poll interval later. 0 answers every read at once.
   */
  jobReadHoldMs?: number;
  /** Deadline of every database statement in ms (gate checks, previews, profiling); default 30,000. */
  queryTimeoutMs?: number;
  /** PGlite only: the most rows a gate run or baseline may read over a table's every row (default
   *  DEFAULT_EMBEDDED_ROW_LIMIT); past it the work is refused with 422 `beyond_embedded_database`. */
  embeddedRowLimit?: number;
  /** The URL people reach the server by when it is not the listening address (a proxy): its host is
   *  accepted in `Host` and its origin in `Origin` besides the listening address's. */
  publicUrl?: string;
  /** A dbt project folder (or a folder holding manifest.json): its relations are created in the dev warehouse. */
  dbt?: string;
  /**
   * The proxies whose `X-Forwarded-For` names the client (`--trust-proxy`): their addresses or CIDR ranges
   * (`127.0.0.1,10.0.0.0/8`), or how many proxy hops to trust. Off by default (the spec's default is a
   * direct connection): the client address, which the failed-authentication limit counts per, is then the
   * connection's, and a client cannot pick its own bucket by sending the header.
   */
  trustProxy?: string[] | number;
  /**
   * `--clock-offset-file`: a file read at each request holding a whole number of seconds added to the clock
   * (missing or empty: 0), so a test moves the server's time from outside the process.
   */
  clockOffsetFile?: string;
  /**
   * The secret person sign-in (the dashboard's, `/device`'s) asks for besides the e-mail (sign-in-secret.ts), at
   * least MIN_SIGN_IN_SECRET_LENGTH characters. Without it, a server reachable beyond loopback (a host other
   * than loopback, `publicUrl`, `trustProxy`) makes one (RunningServer.signIn); on loopback only, the e-mail
   * alone signs in.
   */
  signInSecret?: string;
  /**
   * PostgreSQL: called once when another server process on the database is starting up (it holds the start-up
   * lock: migrations, seed, signing key) and this one waits for it; `npm run server` says so on stderr.
   */
  onStartUpWait?: () => void;
}

export interface RunningServer {
  /** The REST door's base URL, `{origin}/{stage}` (the ready file's `baseUrl`). */
  url: string;
  /** The listening origin: the dashboard, the device page and the GraphQL and MCP doors are under it. */
  origin: string;
  ready: ReadyInfo;
  /** Present when `contractCheck` is on: the violations recorded so far. */
  contract: ContractChecker | null;
  /** The job worker: tests started with `jobs: 'manual'` drive it. */
  jobs: JobControl;
  /** The server's database (tests read and arrange state through it). */
  db: Queryable;
  /** Every route registered in Fastify, named as the contract names it (`/api/tables/:tableId`): what the
   *  contract must document; `path` is where it is served (`/v1/api/tables/:tableId`, `/dashboard`). */
  routes: Array<{ method: string; url: string; path: string }>;
  /** The sign-in secret, whether this server made it, and why it asks for one; null when it asks for none. */
  signIn: SignIn | null;
  close(): Promise<void>;
}

export interface SignIn {
  secret: string;
  /** Made at start (no `signInSecret` given): `npm run server` prints it once on stderr. */
  generated: boolean;
  /** Why the server is reachable beyond this machine; undefined when a secret was given on loopback. */
  reason: string | undefined;
}

/** The sign-in secret of `options`: the one given, else a new one when the server is reachable beyond loopback. */
function signInOf(options: ServerOptions, publicUrl: string | undefined): SignIn | null {
  const reason = reachableBeyondLoopback({
    host: options.host ?? DEFAULT_HOST,
    publicUrl,
    trustProxy: options.trustProxy,
  });
  const given = options.signInSecret;
  if (given !== undefined && given.length < MIN_SIGN_IN_SECRET_LENGTH)
    throw new Error(`The sign-in secret must be at least ${MIN_SIGN_IN_SECRET_LENGTH} characters.`);
  if (given !== undefined) return { secret: given, generated: false, reason };
  return reason === undefined ? null : { secret: newSignInSecret(), generated: true, reason };
}

export async function createServer(options: ServerOptions = {}): Promise<RunningServer> {
  const offset =
    options.clockOffsetFile === undefined
      ? undefined
      : offsetFileClock(options.clockOffsetFile, options.clock ?? systemClock);
  await offset?.reload();
  const clock = offset?.clock ?? options.clock ?? systemClock;
  const publicUrl = options.publicUrl === undefined ? undefined : checkPublicUrl(options.publicUrl);
  const stage = checkStage(options.stage ?? DEFAULT_STAGE);
  const signIn = signInOf(options, publicUrl);
  const db = await openDb({
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    ...(options.databaseUrl ? { databaseUrl: options.databaseUrl } : {}),
    ...(options.queryTimeoutMs ? { queryTimeoutMs: options.queryTimeoutMs } : {}),
    ...(options.embeddedRowLimit ? { embeddedRowLimit: options.embeddedRowLimit } : {}),
    ...(options.scratchDir ? { scratchDir: options.scratchDir } : {}),
  });
  try {
    // Several server processes may start together on one PostgreSQL: one at a time migrates, seeds, makes
    // the --dbt tables and the signing key; the others then find them made.
    const { dbt, keys } = await exclusively(
      db,
      'start-up',
      async () => {
        await migrate(db);
        await seedIfEmpty(db, clock, options.workspaces);
        await upgradeZonelessViews(db, clock);
        return {
          dbt: options.dbt === undefined ? undefined : await createDbtWarehouse(db, options.dbt),
          keys: await loadSigningKeys(db, clock),
        };
      },
      options.onStartUpWait,
    );
    let baseUrl = '';
    let names: OwnNames | null = null;
    // Behind a load balancer or proxy (--public-url) the issuer is the REST base URL people reach: every
    // server process behind it issues and accepts the same tokens. A client given the REST base URL finds
    // the sign-in settings under it (OpenID discovery appends to the issuer's path).
    const publicOrigin = () => publicUrl ?? baseUrl;
    const issuer = () => `${publicOrigin()}/${stage}`;
    const signer = new TokenSigner(keys, issuer, clock);
    const ctx: AppContext = {
      db,
      clock,
      keys,
      signer,
      auth: new Authenticator(db, signer, clock),
      limiter: new RateLimiter('token', options.rateLimit ?? DEFAULT_RATE_LIMIT, db, clock),
      failedAuth: new RateLimiter(
        'failed-auth',
        options.failedAuthLimit ?? DEFAULT_FAILED_AUTH_LIMIT,
        db,
        clock,
      ),
      mints: new RateLimiter('mint', options.mintLimit ?? DEFAULT_MINT_LIMIT, db, clock),
      refreshGraceMs: options.refreshGraceMs ?? DEFAULT_REFRESH_GRACE_MS,
      jobReadHoldMs: options.jobReadHoldMs ?? JOB_READ_HOLD_MS,
      baseUrl: () => baseUrl,
      stage,
      restBaseUrl: () => `${baseUrl}/${stage}`,
      publicOrigin,
      issuer,
      names: () => {
        if (!names) throw new Error('the server is not listening yet');
        return names;
      },
      signInSecret: signIn === null ? null : new SignInSecret(signIn.secret),
    };
    const contract = options.contractCheck ? new ContractChecker() : null;
    const routes: RunningServer['routes'] = [];
    const inFlight = new RequestsInFlight();
    const app = buildApp(
      ctx,
      options.logger ?? false,
      contract,
      routes,
      inFlight,
      options.trustProxy,
      offset?.reload,
    );
    oauthRoutes(app, ctx, options.deviceFlow);
    const host = options.host ?? DEFAULT_HOST;
    await app.listen({ port: options.port ?? DEFAULT_PORT, host });
    const address = app.server.address() as AddressInfo;
    baseUrl = urlOf(address);
    names = new OwnNames({ host, port: address.port }, publicUrl);
    const ready = await buildReadyInfo(ctx, dbt);
    const jobs = new JobRunner({ db, clock }, options.jobs ?? 'auto');
    return {
      url: ctx.restBaseUrl(),
      origin: baseUrl,
      ready,
      contract,
      jobs,
      db,
      routes,
      signIn,
      close: async () => {
        await app.close();
        await inFlight.settled();
        await jobs.stop();
        await db.close();
      },
    };
  } catch (error) {
    await db.close();
    throw error;
  }
}

function buildApp(
  ctx: AppContext,
  logger: FastifyServerOptions['logger'],
  contract: ContractChecker | null,
  routes: RunningServer['routes'],
  inFlight: RequestsInFlight,
  trustProxy: ServerOptions['trustProxy'],
  reloadClock?: () => Promise<void>,
) {
  const app = Fastify({
    logger,
    // Off unless configured: request.ip is then the peer's address, whatever X-Forwarded-For says.
    // A hop count trusts that many proxies nearest the server.
    trustProxy:
      typeof trustProxy === 'number'
        ? (_address: string, hop: number) => hop < trustProxy
        : (trustProxy ?? false),
    bodyLimit: BODY_LIMIT_BYTES,
    // Fastify's and Node's own refusals (a bad or too long path, headers over the limit) answer in the
    // contract's error body too.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    exposeHeadRoutes: false,
    genReqId: () => randomUUID(),
  });
  readJsonBodies(app);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat())
      routes.push({ method, url: restRoute(ctx, route.url) ?? route.url, path: route.url });
  });
  app.decorateRequest('caller', null);
  app.decorateRequest('handled', null);
  // The very first: closing the server waits for the request until it has its answer (requests-in-flight.ts).
  app.addHook('onRequest', async (request) => {
    inFlight.begin(request);
    request.handled = () => inFlight.end(request);
  });
  app.addHook('onSend', async (request, _reply, payload) => {
    inFlight.end(request);
    return payload;
  });
  // So every other hook and the route see the moved time.
  if (reloadClock) app.addHook('onRequest', reloadClock);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // Every answer is what its Content-Type says: a JSON 404 echoing a path never read as HTML.
    reply.header('x-content-type-options', 'nosniff');
    if (!ctx.names().isOwnHost(request.headers.host)) {
      return reply
        .code(421)
        .header('cache-control', 'no-store')
        .send(
          errorBody(
            'misdirected_request',
            'This server answers only its own names (its listening address, localhost, or --public-url); ' +
              `reach it as ${ctx.baseUrl()}.`,
          ),
        );
    }
  });
  // Authenticate first: every /api route but the refresh (and the table endpoints, whose own hook does it
  // with their rate limit) resolves its caller before its body is read, so nothing about the request is
  // validated, or described, for a caller who is not one; nor for one the route's guard refuses.
  app.addHook('onRequest', async (request) => {
    const route = restRoute(ctx, request.routeOptions.url);
    if (route === undefined || !route.startsWith('/api/') || PUBLIC_API_ROUTES.has(route)) return;
    if (DATA_PLANE_ROUTES.has(route)) return;
    request.caller = await authenticate(ctx, request);
    const { guard, idGuard } = request.routeOptions.config;
    guard?.(request.caller);
    if (idGuard === undefined) return;
    const ids = Object.values((request.params ?? {}) as Record<string, unknown>);
    const [id] = ids;
    if (ids.length !== 1 || typeof id !== 'string')
      throw new Error(`guardBeforeBody(guard, named) needs a route of one path id; ${route} is not`);
    checkIds(request.params);
    await idGuard(ctx, request.caller, id);
  });
  app.addHook('preValidation', async (request) => checkIds(request.params));
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const unstaged = path.startsWith('/api/') || path === '/.well-known/openid-configuration';
    return reply
      .code(404)
      .send(
        errorBody(
          'route_not_found',
          `No endpoint ${request.method} ${path}.` +
            (unstaged
              ? ` The REST API is under the stage /${ctx.stage}: ${ctx.restBaseUrl()}${path} (the REST base URL is ${ctx.restBaseUrl()}).`
              : ''),
        ),
      );
  });
  if (contract) {
    app.addHook('onSend', async (request, reply, payload) => {
      contract.check({
        method: request.method,
        url: request.url,
        route: restRoute(ctx, request.routeOptions.url),
        status: reply.statusCode,
        headers: reply.getHeaders(),
        body: typeof payload === 'string' ? payload : payload == null ? undefined : String(payload),
      });
      return payload;
    });
  }
  wellKnownRoutes(app, ctx);
  // The REST door, under its stage.
  void app.register(
    async (rest) => {
      discoveryRoute(rest, ctx);
      integrationRoutes(rest, ctx);
      revocationRoutes(rest, ctx);
      recordRoutes(rest, ctx);
      workspaceRoutes(rest, ctx);
      certifyRoutes(rest, ctx);
      versionRoutes(rest, ctx);
      configRoutes(rest, ctx);
      contractRoutes(rest, ctx);
      promotionRoutes(rest, ctx);
      definitionRoutes(rest, ctx);
      artifactBatchRoutes(rest, ctx);
      tableRoutes(rest, ctx);
      heldTableRoutes(rest, ctx);
      connectorRoutes(rest, ctx);
      recertificationRoutes(rest, ctx);
      notificationRoutes(rest, ctx);
      gateRoutes(rest, ctx);
      gateJobRoutes(rest, ctx);
      meRoutes(rest, ctx);
    },
    { prefix: `/${ctx.stage}` },
  );
  graphqlRoutes(app, ctx);
  mcpRoutes(app, ctx);
  dashboardRoutes(app, ctx);
  return app;
}

/** A `--public-url`: http(s), no path beyond `/`; 400-worthy mistakes fail the start-up. */
function checkPublicUrl(raw: string): string {
  const url = URL.parse(raw);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.host === '')
    throw new Error(`publicUrl must be an http(s) URL such as https://gds.example.com; got ${raw}`);
  return url.origin;
}

/** A route's name as the contract writes it: a REST route without its stage (`/api/tables/:tableId`). */
function restRoute(ctx: AppContext, route: string | undefined): string | undefined {
  const prefix = `/${ctx.stage}/`;
  return route?.startsWith(prefix) ? route.slice(prefix.length - 1) : route;
}

/** The /api routes that take no credential. */
const PUBLIC_API_ROUTES = new Set(['/api/integration/refresh']);

function urlOf(address: AddressInfo): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
