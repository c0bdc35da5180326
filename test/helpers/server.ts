// Starts the reference server in this process for a test file, with contract checking on.
//
//   const server = await startTestServer();          // in beforeAll (one server per file)
//   server.url, server.ready                          // REST base URL ({origin}/v1) and the ready-file JSON
//   server.origin                                     // the origin: /dashboard, /device, /oauth, /graphql, /mcp
//   server.user('OWNER').accessToken / .cliToken      // a person's session JWT / static CLI token
//   await server.issueToken('OWNER', { name, env, scopes })   // an integration token (201 body)
//   await server.request('GET', `/api/tables/${id}/records`, { token })   // {status, headers, body}
//   await server.request('GET', `${server.origin}/dashboard`)               // outside the REST door
//   server.clock.advance(61 * 60_000)                 // move the server's clock (token expiry)
//   await server.close()                              // in afterAll: stops it, then FAILS if any
//                                                     // response broke openapi.yaml
//
// Several workspaces: `startTestServer({ workspaces: 2 })` seeds a full second workspace (every role,
// dev/staging/production connectors, tables named as the main one's); address it with
//   server.workspace(1).user('MEMBER').cliToken, server.workspace(1).table('customers').id
//
// Options: `rateLimit` (per token per minute), `database: 'postgres'` (runs on a fresh database
// created from GDS_TEST_DATABASE_URL; see `postgresTestUrl` for why such tests may skip),
// `jobs: 'manual'` (gate jobs stay QUEUED until the test runs them), `contractCheck: false` (a bench: the
// server as deployed, without parsing and validating every response):
//
//   const server = await startTestServer({ jobs: 'manual' });
//   ...push...                                        // the job is QUEUED
//   await server.jobs.startPending()                  // every QUEUED job is now RUNNING (not run)
//   await server.jobs.runPending()                    // runs them to SUCCEEDED/FAILED (CANCELLED stays)
//   await server.sql('UPDATE gds.tables SET state = $2 WHERE id = $1', [id, 'CERTIFIED'])
//                                                     // arrange or read server state directly
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { RunningServer, ServerOptions } from '../../src/server/app.js';
import { createServer } from '../../src/server/app.js';
import type { IssuedToken, IssueTokenRequest } from '../../src/contract/types.js';
import type { JobControl } from '../../src/server/governance/jobs.js';
import type { ContractViolation } from '../../src/server/contract-check.js';
import type { ReadyInfo, ReadyTable, ReadyUser, ReadyWorkspace } from '../../src/server/ready.js';
import {
  createSeededPostgresDatabase,
  migratedPostgresTemplate,
  moveSeededTimes,
  SEED_SPAN_MS,
  scratchDir,
  seededPgliteCopy,
} from './migrated-database.js';

export type { ReadyInfo, ReadyTable, ReadyUser, ReadyWorkspace };

/** One seeded workspace: its ready-file entry and its users and tables by role and name. */
export interface TestWorkspace {
  ready: ReadyWorkspace;
  user(role: ReadyUser['role']): ReadyUser;
  table(name: string): ReadyTable;
}

export interface TestClock {
  now(): number;
  /** Moves the server's clock forward (or back, with a negative value). */
  advance(ms: number): void;
  /**
   * Stops the server's clock where it is (advance still moves it): a wait the server measures on it (an
   * idempotency key in flight) then never runs out while a loaded machine is slow. Until reset.
   */
  freeze(): void;
  /** Back to real time. */
  reset(): void;
}

export interface TestServer {
  /** The REST door's base URL, `{origin}/{stage}`: `/api/…` paths and gds's --base go here. */
  url: string;
  /** The listening origin: the dashboard, the device page, the OAuth endpoints, /graphql and /mcp. */
  origin: string;
  ready: ReadyInfo;
  clock: TestClock;
  /** A seeded user of the main workspace by role (PLATFORM_OPERATOR included). */
  user(role: ReadyUser['role']): ReadyUser;
  /** A table of the main workspace by name (e.g. `crm_contacts`, `customers`, `orders`). */
  table(name: string): ReadyTable;
  /** The seeded workspace at this index of `ready.workspaces` (0 is the main one). */
  workspace(index: number): TestWorkspace;
  /** One HTTP call: `token` goes into `Authorization: Bearer`, `body` is sent as JSON. A path is under the
   *  REST base URL (`/api/…`); an absolute URL (`${server.origin}/graphql`) is taken as it is. */
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  /** Issues an integration token as the user of `role` (session JWT); throws unless 201. */
  issueToken(role: ReadyUser['role'], request: IssueTokenRequest): Promise<IssuedToken>;
  /** Stops the server; throws when any response broke the contract. */
  close(): Promise<void>;
  /** Person sign-in's secret (a server reachable beyond loopback, or given one); null: the e-mail alone. */
  signIn: RunningServer['signIn'];
  /** Responses that broke the contract so far. */
  violations(): ContractViolation[];
  /** The job worker (drive it with `jobs: 'manual'`). */
  jobs: JobControl;
  /** Every route registered in Fastify, as `{ method, url, path }`: `url` as the contract names it
   *  (`/api/tables/:tableId`), `path` as served from the origin (`/v1/api/tables/:tableId`). */
  routes: Array<{ method: string; url: string; path: string }>;
  /** A query on the server's database: arranges state no endpoint of this area sets, or reads it back. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests index into rows freely
  sql<T = any>(query: string, params?: unknown[]): Promise<T[]>;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  /** The parsed JSON body; undefined when there is none. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests index into bodies freely
  body: any;
}

export interface TestServerOptions extends Pick<
  ServerOptions,
  | 'rateLimit'
  | 'jobs'
  | 'workspaces'
  | 'queryTimeoutMs'
  | 'publicUrl'
  | 'refreshGraceMs'
  | 'jobReadHoldMs'
  | 'dbt'
  | 'failedAuthLimit'
  | 'mintLimit'
  | 'trustProxy'
  | 'embeddedRowLimit'
  | 'deviceFlow'
  | 'clockOffsetFile'
  | 'stage'
  | 'signInSecret'
> {
  database?: 'pglite' | 'postgres';
  /** false: no response is checked against openapi.yaml (a bench's server CPU is then the service's own). */
  contractCheck?: false;
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  let offset = 0;
  let frozenAt: number | undefined;
  const clock: TestClock = {
    now: () => (frozenAt ?? Date.now()) + offset,
    advance: (ms) => {
      offset += ms;
    },
    freeze: () => {
      frozenAt ??= Date.now();
    },
    reset: () => {
      offset = 0;
      frozenAt = undefined;
    },
  };
  const database =
    options.database === 'postgres'
      ? await createPostgresDatabase({ seeded: options.workspaces ?? 1 })
      : null;
  const pglite = database ? null : await seededPgliteCopy(options.workspaces);
  // The seeded data is dated as if the server had seeded it as it started, before it wrote anything itself:
  // it ends within SEED_SPAN_MS of the start, and a server on a copy can write its signing key sooner.
  const startedAt = clock.now();
  await sleep(SEED_SPAN_MS + 1);
  const running = await createServer({
    port: 0,
    contractCheck: options.contractCheck ?? true,
    clock: clock.now,
    ...(options.rateLimit ? { rateLimit: options.rateLimit } : {}),
    ...(options.jobs ? { jobs: options.jobs } : {}),
    ...(options.deviceFlow ? { deviceFlow: options.deviceFlow } : {}),
    ...(options.workspaces ? { workspaces: options.workspaces } : {}),
    ...(options.queryTimeoutMs ? { queryTimeoutMs: options.queryTimeoutMs } : {}),
    ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
    ...(options.stage ? { stage: options.stage } : {}),
    // Test files send hundreds of refused credentials and issue many tokens from one address within a
    // minute; test/server/auth-flood.test.ts sets them low.
    failedAuthLimit: options.failedAuthLimit ?? 100_000,
    mintLimit: options.mintLimit ?? 10_000,
    ...(options.refreshGraceMs !== undefined ? { refreshGraceMs: options.refreshGraceMs } : {}),
    ...(options.jobReadHoldMs !== undefined ? { jobReadHoldMs: options.jobReadHoldMs } : {}),
    ...(database ? { databaseUrl: database.url } : {}),
    ...(pglite ? { dataDir: pglite.dataDir, scratchDir: await scratchDir() } : {}),
    ...(options.dbt ? { dbt: options.dbt } : {}),
    ...(options.trustProxy !== undefined ? { trustProxy: options.trustProxy } : {}),
    ...(options.embeddedRowLimit !== undefined ? { embeddedRowLimit: options.embeddedRowLimit } : {}),
    ...(options.clockOffsetFile !== undefined ? { clockOffsetFile: options.clockOffsetFile } : {}),
    ...(options.signInSecret !== undefined ? { signInSecret: options.signInSecret } : {}),
  });
  await moveSeededTimes(running.db, startedAt).catch(async (error: unknown) => {
    await running.close();
    await database?.drop();
    await pglite?.remove();
    throw error;
  });
  const contract = running.contract;
  if (!contract && options.contractCheck !== false) throw new Error('test server: contract checking is off');
  const find = <T>(items: T[], match: (item: T) => boolean, what: string): T => {
    const found = items.find(match);
    if (!found) throw new Error(`test server: no ${what}`);
    return found;
  };
  const workspace = (ready: ReadyWorkspace): TestWorkspace => ({
    ready,
    user: (role) => find(ready.users, (u) => u.role === role, `user with role ${role} in ${ready.name}`),
    table: (name) => find(ready.tables, (t) => t.name === name, `table ${name} in ${ready.name}`),
  });
  const main = workspace(running.ready);
  const server: TestServer = {
    url: running.url,
    origin: running.origin,
    ready: running.ready,
    clock,
    user: main.user,
    table: main.table,
    workspace: (index) =>
      workspace(find(running.ready.workspaces.slice(index, index + 1), () => true, `workspace ${index}`)),
    async request(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
      if (options.body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(/^https?:/.test(path) ? path : `${running.url}${path}`, {
        method,
        headers,
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      });
      const text = await response.text();
      return {
        status: response.status,
        headers: response.headers,
        body: text ? JSON.parse(text) : undefined,
      };
    },
    async issueToken(role, request) {
      const response = await server.request('POST', '/api/integration/tokens', {
        token: server.user(role).accessToken,
        body: request,
      });
      if (response.status !== 201)
        throw new Error(`issueToken: ${response.status} ${JSON.stringify(response.body)}`);
      return response.body as IssuedToken;
    },
    signIn: running.signIn,
    violations: () => contract?.violations ?? [],
    jobs: running.jobs,
    routes: running.routes,
    sql: (query, params) => running.db.query(query, params),
    async close() {
      await running.close();
      await database?.drop();
      await pglite?.remove();
      if (contract !== null && contract.violations.length > 0) {
        const lines = contract.violations.map(
          (v) => `${v.method} ${v.url} -> ${v.status}: ${v.problems.join('; ')}`,
        );
        throw new Error(`responses that break src/contract/openapi.yaml:\n${lines.join('\n')}`);
      }
    },
  };
  return server;
}

/**
 * The PostgreSQL to run database tests on, or why there is none. CI (`.ci/run`) sets
 * GDS_TEST_DATABASE_URL to a loopback PostgreSQL; without it those tests are skipped, saying so.
 */
/** An access token of a DATA-API token the OWNER issues (named `name`) to read and write `tableId` in dev. */
export async function readWriteToken(server: TestServer, tableId: string, name: string): Promise<string> {
  const issued = await server.issueToken('OWNER', {
    name,
    env: 'dev',
    scopes: [{ tableId, permissions: ['read', 'write'] }],
  });
  return issued.tokens.accessToken;
}

export function postgresTestUrl(): { url: string } | { skip: string } {
  const url = process.env.GDS_TEST_DATABASE_URL;
  return url
    ? { url }
    : {
        skip: 'GDS_TEST_DATABASE_URL is not set, so no PostgreSQL is reachable (CI sets it; .ci/run shows how)',
      };
}

let leftDatabasesDropped: Promise<void> | undefined;

/** How old a left database is before it is dropped: far longer than any test file holds one. */
export const LEFT_DATABASE_AGE_MS = 60 * 60_000;

/**
 * Drops the databases of `createPostgresDatabase` (gds_test_<process id>_<time made>) that a test process left
 * when it was ended before its clean-up (vitest killed or interrupted): made over LEFT_DATABASE_AGE_MS ago by a
 * process no longer running, and connected to by nobody (no FORCE). Only on a PostgreSQL on this machine
 * (loopback), whose test processes' ids are this machine's. Answers the names dropped. Each test process runs
 * it once, before its first database.
 */
export async function dropLeftTestDatabases(adminUrl: string, now = Date.now()): Promise<string[]> {
  if (!['127.0.0.1', 'localhost', '[::1]', ''].includes(new URL(adminUrl).hostname)) return [];
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const dropped: string[] = [];
  try {
    const { rows } = await admin.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname ~ '^gds_test_[0-9]+_[0-9a-z]+$'",
    );
    for (const { datname } of rows) {
      const [, pid = '', made = ''] = datname.split('_').slice(1);
      if (now - Number.parseInt(made, 36) < LEFT_DATABASE_AGE_MS || processRuns(Number(pid))) continue;
      const gone = await admin.query(`DROP DATABASE IF EXISTS ${datname}`).then(
        () => true,
        () => false, // connected to, or dropped by another process at the same moment
      );
      if (gone) dropped.push(datname);
    }
  } finally {
    await admin.end();
  }
  return dropped;
}

function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * A fresh database on the test PostgreSQL (see `postgresTestUrl`), and how to drop it: empty, or with
 * `migrated` the service's schema already in it, or with `seeded` the schema and that many seeded workspaces
 * dated long ago (`migrated-database.ts`; `moveSeededTimes` dates them now).
 */
export async function createPostgresDatabase(
  options: { migrated?: boolean; seeded?: number } = {},
): Promise<{ url: string; drop(): Promise<void> }> {
  const target = postgresTestUrl();
  if ('skip' in target) throw new Error(target.skip);
  // Once a process: what killed test processes left (a failure to drop them fails no test).
  leftDatabasesDropped ??= dropLeftTestDatabases(target.url).then(
    () => undefined,
    () => undefined,
  );
  await leftDatabasesDropped;
  const name = `gds_test_${process.pid}_${Date.now().toString(36)}`;
  if (options.seeded !== undefined) await createSeededPostgresDatabase(target.url, name, options.seeded);
  else {
    const template = options.migrated ? await migratedPostgresTemplate(target.url) : undefined;
    const admin = new pg.Client({ connectionString: target.url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
    await admin.end();
  }
  const url = new URL(target.url);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: target.url });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
