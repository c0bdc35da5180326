// `npm run server -- [options]` (`--help` lists them): starts the reference server, prints its base
// URL, the seeded users with masked tokens and the command to run next, writes the ready file
// (atomically, 0600, in a directory only the user can write: it holds whole tokens) and stops
// cleanly on SIGINT/SIGTERM. package.json runs it as `node --liftoff-only --import tsx`: the flag keeps
// V8 from recompiling PGlite's WebAssembly with its optimizing tier, which alone cost 500 MB at start-up
// (see db/pglite.ts). On Linux it sets glibc's malloc settings first (malloc-env.ts).
// First: on Linux it starts the process again with glibc's malloc settings, before anything is loaded.
import './malloc-env.js';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { isIP } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ServerOptions } from './app.js';
import { DEFAULT_REFRESH_GRACE_MS } from './auth/reissue.js';
import { parseClockOffset } from './clock.js';
import { DEFAULT_EMBEDDED_ROW_LIMIT } from './db/embedded-limit.js';
import { DEFAULT_QUERY_TIMEOUT_MS } from './db/index.js';
import {
  checkStage,
  createServer,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_RATE_LIMIT,
  DEFAULT_STAGE,
} from './app.js';
import type { ReadyInfo } from './ready.js';

const DEFAULT_READY_FILE = join(tmpdir(), 'gds-server', 'ready.json');

/** One option of the server: `value` names what it takes; an option without one is a switch. */
interface ServerOption {
  name: string;
  value?: string;
  default: string;
  description: string;
}

/** Every option, once: parseArgs, the usage line and `--help` all come from this table. */
const OPTIONS: readonly ServerOption[] = [
  {
    name: 'port',
    value: 'N',
    default: String(DEFAULT_PORT),
    description: 'TCP port to listen on; 0 picks a free one',
  },
  {
    name: 'host',
    value: 'HOST',
    default: DEFAULT_HOST,
    description: 'address to listen on',
  },
  {
    name: 'stage',
    value: 'NAME',
    default: DEFAULT_STAGE,
    description:
      "the REST door's stage segment: the REST API is at {origin}/NAME/api/…, and {origin}/NAME is its base URL (gds --base)",
  },
  {
    name: 'ready-file',
    value: 'FILE',
    default: DEFAULT_READY_FILE,
    description: 'where to write the base URL, whole tokens, tables and warehouse objects (0600)',
  },
  {
    name: 'data-dir',
    value: 'DIR',
    default: 'none: in memory',
    description: 'keep the embedded PostgreSQL (PGlite) here, so state survives restarts',
  },
  {
    name: 'database-url',
    value: 'URL',
    default: '$GDS_DATABASE_URL, else PGlite',
    description: 'use this PostgreSQL instead of PGlite',
  },
  {
    name: 'rate-limit',
    value: 'N',
    default: String(DEFAULT_RATE_LIMIT),
    description: 'requests per minute per token on table endpoints',
  },
  {
    name: 'refresh-grace',
    value: 'S',
    default: String(DEFAULT_REFRESH_GRACE_MS / 1000),
    description:
      'seconds a spent refresh token still answers with its successor while that is unused (0 to 86400; 0: single use)',
  },
  {
    name: 'workspaces',
    value: 'N',
    default: '1',
    description:
      'workspaces to seed (1 to 9); each has its own users, connectors, tables and warehouse schemas',
  },
  {
    name: 'query-timeout',
    value: 'MS',
    default: String(DEFAULT_QUERY_TIMEOUT_MS),
    description: 'deadline of every database statement, in ms (1 to 3600000)',
  },
  {
    name: 'embedded-row-limit',
    value: 'N',
    default: String(DEFAULT_EMBEDDED_ROW_LIMIT),
    description:
      'on PGlite, the most rows a gate run or baseline may read from one table; past it the work is refused (422) with a pointer to --database-url (1 to 1000000000; no limit on PostgreSQL)',
  },
  {
    name: 'public-url',
    value: 'URL',
    default: 'none: only the listening address, localhost and [::1]',
    description:
      'another URL people reach the server by (a proxy, a load balancer); its host is accepted besides those, and it issues the tokens',
  },
  {
    name: 'trust-proxy',
    value: 'ADDRS',
    default: 'off: the client address is the connection’s',
    description:
      'reverse proxies whose X-Forwarded-For gives the client address (the failed-authentication limit counts per address): their addresses or CIDR ranges, comma-separated (127.0.0.1,10.0.0.0/8), or a number of hops',
  },
  {
    name: 'dbt',
    value: 'DIR',
    default: 'none',
    description:
      'a dbt project folder (its target/manifest.json, catalog.json, seeds/*.csv) or a folder holding manifest.json: its models, seeds and snapshots become tables in the dev warehouse, to try `gds plan --dbt DIR` on',
  },
  {
    name: 'clock-offset-file',
    value: 'FILE',
    default: 'none: real time',
    description:
      'a file holding a whole number of seconds added to the real time, read at each request (missing or empty: 0), so tests can move the server past token lifetimes',
  },
  { name: 'help', default: 'off', description: 'print this help and exit' },
];

const USAGE = 'usage: npm run server -- [options]   (npm run server -- --help describes each)';

function helpText(): string {
  const left = OPTIONS.map((o) => (o.value !== undefined ? `--${o.name} ${o.value}` : `--${o.name}`));
  const width = Math.max(...left.map((l) => l.length)) + 2;
  return [
    USAGE,
    '',
    'Starts the reference gds server with a seeded workspace, prints its URL, users and what to run next.',
    '',
    'options:',
    ...OPTIONS.map((o, i) => `  ${left[i]?.padEnd(width)}${o.description} (default: ${o.default})`),
    '',
  ].join('\n');
}

function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

function integer(name: string, raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= min && value <= max))
    fail(`--${name} must be an integer from ${min} to ${max}; got "${raw}".`);
  return value;
}

function publicUrl(raw: string): string {
  const url = URL.parse(raw);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    fail(`--public-url must be an http(s) URL such as https://gds.example.com; got "${raw}".`);
  return url.origin;
}

function stage(raw: string): string {
  try {
    return checkStage(raw);
  } catch (error) {
    fail(`--${(error as Error).message}.`);
  }
}

/** `--trust-proxy`: a hop count, or addresses and CIDR ranges (and proxy-addr's loopback, linklocal, uniquelocal). */
function trustProxy(raw: string): string[] | number {
  if (/^\d+$/.test(raw)) return integer('trust-proxy', raw, 1, 100) ?? 1;
  const entries = raw.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const [address = '', bits, ...rest] = entry.split('/');
    const family = isIP(address);
    const named = ['loopback', 'linklocal', 'uniquelocal'].includes(entry);
    const maxBits = family === 6 ? 128 : 32;
    const goodBits = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= maxBits);
    if (!named && (family === 0 || !goodBits || rest.length > 0))
      fail(
        `--trust-proxy takes proxy addresses or CIDR ranges, comma-separated (127.0.0.1,10.0.0.0/8), or a number of hops; got "${entry}".`,
      );
  }
  return entries;
}

function parseValues(): Record<string, string | boolean | undefined> {
  try {
    return parseArgs({
      options: Object.fromEntries(
        OPTIONS.map((o) => [
          o.name,
          { type: o.value !== undefined ? ('string' as const) : ('boolean' as const) },
        ]),
      ),
      strict: true,
    }).values as Record<string, string | boolean | undefined>;
  } catch (error) {
    fail((error as Error).message);
  }
}

function parseOptions(): { server: ServerOptions; readyFile: string } {
  const values = parseValues();
  const text = (name: string): string | undefined => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  if (values.help === true) {
    process.stdout.write(helpText());
    process.exit(0);
  }
  const host = text('host');
  const dataDir = text('data-dir');
  const databaseUrl = text('database-url') ?? process.env.GDS_DATABASE_URL;
  const rateLimit = text('rate-limit');
  const server: ServerOptions = {
    port: integer('port', text('port'), 0, 65535) ?? DEFAULT_PORT,
    ...(host ? { host } : {}),
    ...(text('stage') !== undefined ? { stage: stage(text('stage') ?? '') } : {}),
    ...(text('public-url') !== undefined ? { publicUrl: publicUrl(text('public-url') ?? '') } : {}),
    ...(dataDir ? { dataDir: resolve(dataDir) } : {}),
    ...(databaseUrl ? { databaseUrl } : {}),
    ...(rateLimit ? { rateLimit: integer('rate-limit', rateLimit, 1, 1_000_000_000) } : {}),
    ...(text('refresh-grace') !== undefined
      ? { refreshGraceMs: (integer('refresh-grace', text('refresh-grace'), 0, 86_400) ?? 0) * 1000 }
      : {}),
    ...(text('workspaces') !== undefined
      ? { workspaces: integer('workspaces', text('workspaces'), 1, 9) }
      : {}),
    ...(text('query-timeout') !== undefined
      ? { queryTimeoutMs: integer('query-timeout', text('query-timeout'), 1, 3_600_000) }
      : {}),
    ...(text('dbt') !== undefined ? { dbt: dbtFolder(text('dbt') ?? '') } : {}),
    ...(text('embedded-row-limit') !== undefined
      ? { embeddedRowLimit: integer('embedded-row-limit', text('embedded-row-limit'), 1, 1_000_000_000) }
      : {}),
    ...(text('trust-proxy') !== undefined ? { trustProxy: trustProxy(text('trust-proxy') ?? '') } : {}),
    ...(text('clock-offset-file') !== undefined
      ? { clockOffsetFile: clockOffsetFile(text('clock-offset-file') ?? '') }
      : {}),
    logger: { level: 'warn' },
  };
  const readyFile = resolve(text('ready-file') ?? DEFAULT_READY_FILE);
  return { server, readyFile };
}

/** --clock-offset-file: refused at start when it holds something other than whole seconds. */
function clockOffsetFile(file: string): string {
  const path = resolve(file);
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
  if (parseClockOffset(text) === undefined)
    fail(
      `--clock-offset-file ${file} must hold a whole number of seconds (e.g. 2678400), or be empty or missing.`,
    );
  return path;
}

/** --dbt names a folder: the dbt project (its target/) or one holding manifest.json. */
function dbtFolder(dir: string): string {
  const path = resolve(dir);
  if (!existsSync(path) || !statSync(path).isDirectory())
    fail(
      `--dbt ${dir} is not a folder: name your dbt project folder (the one holding dbt_project.yml and target/)`,
    );
  return path;
}

/**
 * Creates the ready file's directory (0700) or, when it exists (the default one lives in the shared
 * temp directory), refuses one another user could have planted or could write into.
 */
function ensurePrivateDirectory(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = lstatSync(dir);
  const uid = process.getuid?.();
  const problem = !stat.isDirectory()
    ? 'is not a directory'
    : uid !== undefined && stat.uid !== uid
      ? `is owned by uid ${stat.uid}, not you (uid ${uid})`
      : (stat.mode & 0o022) !== 0
        ? `is writable by ${stat.mode & 0o020 ? 'its group' : 'others'} (mode ${(stat.mode & 0o777).toString(8)})`
        : undefined;
  if (problem) {
    fail(
      `The ready file's directory ${dir} ${problem}; it would hold whole tokens. Remove it, run \`chmod 700\` on it, or pass --ready-file in a directory of your own.`,
    );
  }
}

function writeAtomically(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(tmp, text, { flag: 'wx', mode: 0o600 });
  renameSync(tmp, path);
}

function mask(token: string): string {
  return `${token.slice(0, 8)}…${token.slice(-4)}`;
}

/**
 * What a person needs after start-up: the base URL, the seeded users (tokens masked; whole ones are
 * in the ready file) and the next command, for a person and for CI.
 */
function banner(ready: ReadyInfo, readyFile: string): string {
  const ciUser = ready.users.find((u) => u.role === 'ADMIN') ?? ready.users[0];
  const userIndex = ciUser === undefined ? 0 : ready.users.indexOf(ciUser);
  const tokenFromFile = `$(node -p "require('${readyFile}').users[${userIndex}].cliToken")`;
  return [
    `gds reference server listening on ${ready.origin}`,
    `  REST     ${ready.doors.rest}   (gds --base; the API is under ${ready.doors.rest}/api)`,
    `  GraphQL  ${ready.doors.graphql}`,
    `  MCP      ${ready.doors.mcp}`,
    `  dashboard ${ready.dashboardUrl}`,
    `workspace ${ready.workspaceId} (${ready.name}); seeded users (sign in as one on ${ready.origin}/device):`,
    ...ready.users.map(
      (u) =>
        `  ${u.role.padEnd(17)} ${u.email.padEnd(22)} cli token ${mask(u.cliToken)}  session ${mask(u.accessToken)}`,
    ),
    `whole tokens, connectors, tables and warehouse objects: ${readyFile}`,
    '',
    'next, sign in (approve the code on the /device page with one of the e-mails above):',
    `  gds auth login --base ${ready.baseUrl} --no-browser`,
    `or, as CI does, with ${ciUser?.email ?? 'a seeded user'}'s CLI token from the ready file:`,
    `  export SERVICE_API_URL=${ready.baseUrl} SERVICE_TOKEN=${tokenFromFile}`,
    '',
    ...(ready.dbt ? dbtBanner(ready.dbt) : []),
  ].join('\n');
}

/** What --dbt made, and the plan to run next. */
function dbtBanner(dbt: NonNullable<ReadyInfo['dbt']>): string[] {
  const created = dbt.tables.filter((t) => t.created);
  const seeds = dbt.tables.filter((t) => t.resourceType === 'seed' && t.rows !== undefined);
  const filled = dbt.tables.filter((t) => t.resourceType !== 'seed' && t.rows !== undefined);
  const schemas = [...new Set(dbt.tables.map((t) => t.source.split('.')[0] ?? ''))];
  // One connector serves the whole project: name it, as the workspace has others.
  const connectors = [...new Set(dbt.tables.map((t) => t.connectorId))];
  return [
    `dbt project ${dbt.projectName ?? dbt.dir}: ${created.length} table(s) created, ${dbt.tables.length - created.length} already there, in schema(s) ${schemas.join(', ') || '(none)'} of the dev warehouse` +
      (seeds.length > 0 ? `; ${seeds.reduce((n, t) => n + (t.rows ?? 0), 0)} seed row(s) loaded` : '') +
      (filled.length > 0 ? `; ${filled.length} model table(s) filled from their compiled SQL` : ''),
    ...dbt.refused.map((r) => `  not created: ${r.uniqueId}: ${r.reason}`),
    ...dbt.warnings.map((w) => `  note: ${w}`),
    'then plan the project against this server:',
    `  gds plan --dbt ${dbt.dir}${connectors.length === 1 ? ` --connector ${connectors[0] ?? ''}` : ''}`,
    '',
  ];
}

async function main(): Promise<void> {
  const { server: options, readyFile } = parseOptions();
  ensurePrivateDirectory(dirname(readyFile));
  const server = await createServer(options);
  writeAtomically(readyFile, `${JSON.stringify(server.ready, null, 2)}\n`);
  process.stdout.write(banner(server.ready, readyFile));

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`${signal}: stopping\n`);
    server
      .close()
      .then(() => {
        rmSync(readyFile, { force: true });
        process.exit(0);
      })
      .catch((error: unknown) => {
        process.stderr.write(`failed to stop cleanly: ${String(error)}\n`);
        process.exit(1);
      });
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: unknown) => {
  process.stderr.write(
    `gds server failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
