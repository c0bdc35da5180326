// The command line of `npm run server` (main.ts): one table of options, from which the parser, the usage line
// and `--help` all come. A command line it refuses throws UsageError, which main.ts prints with the usage.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ServerOptions } from './app.js';
import { DEFAULT_REFRESH_GRACE_MS } from './auth/reissue.js';
import { parseClockOffset } from './clock.js';
import { DEFAULT_EMBEDDED_ROW_LIMIT } from './db/embedded-limit.js';
import {
  checkStage,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_QUERY_TIMEOUT_MS,
  DEFAULT_RATE_LIMIT,
  DEFAULT_STAGE,
} from './defaults.js';
import { DEFAULT_DEVICE_INTERVAL_SECONDS } from './oauth/settings.js';
import { MIN_SIGN_IN_SECRET_LENGTH, SIGN_IN_SECRET_ENV } from './sign-in-secret.js';

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
    name: 'device-interval',
    value: 'S',
    default: String(DEFAULT_DEVICE_INTERVAL_SECONDS),
    description:
      'seconds a device sign-in (gds auth login) waits between two polls of its code (RFC 8628 interval; 1 to 60)',
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

export const USAGE = 'usage: npm run server -- [options]   (npm run server -- --help describes each)';

export function helpText(): string {
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
    'Person sign-in (the dashboard, the /device page of `gds auth login`) takes a member’s e-mail. On loopback',
    'alone that is all; a server reachable beyond this machine (--host other than loopback, --public-url,',
    `--trust-proxy) also asks for a sign-in secret: $${SIGN_IN_SECRET_ENV} (at least ${MIN_SIGN_IN_SECRET_LENGTH} characters; the same`,
    'for every process behind one --public-url), else one generated at start and printed once on stderr.',
    '',
  ].join('\n');
}

/** A command line the server refuses: main prints the message and the usage on stderr and exits 2. */
export class UsageError extends Error {}

function fail(message: string): never {
  throw new UsageError(message);
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

function parseValues(args: string[]): Record<string, string | boolean | undefined> {
  try {
    return parseArgs({
      args,
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

/** The server's command line: `help` for --help, else what to start; a bad one throws UsageError. */
export function parseServerArgs(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): { help: true } | { help?: undefined; server: ServerOptions; readyFile: string } {
  const values = parseValues(args);
  const text = (name: string): string | undefined => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  if (values.help === true) return { help: true };
  const host = text('host');
  const dataDir = text('data-dir');
  const databaseUrl = text('database-url') ?? env.GDS_DATABASE_URL;
  const rateLimit = text('rate-limit');
  const signInSecret = env[SIGN_IN_SECRET_ENV];
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
    ...(text('device-interval') !== undefined
      ? { deviceFlow: { intervalSeconds: integer('device-interval', text('device-interval'), 1, 60) } }
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
    ...(signInSecret !== undefined ? { signInSecret: checkSignInSecret(signInSecret) } : {}),
    logger: { level: 'warn' },
  };
  const readyFile = resolve(text('ready-file') ?? DEFAULT_READY_FILE);
  return { server, readyFile };
}

/** $GDS_SIGN_IN_SECRET: refused at start when too short to keep anyone out (never said back). */
function checkSignInSecret(secret: string): string {
  if (secret.length < MIN_SIGN_IN_SECRET_LENGTH || /\s|[\u0000-\u001f\u007f]/.test(secret))
    fail(
      `${SIGN_IN_SECRET_ENV} must be at least ${MIN_SIGN_IN_SECRET_LENGTH} characters without spaces or control characters (it has ${secret.length}).`,
    );
  return secret;
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
