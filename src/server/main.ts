// `npm run server -- [--port N] [--host H] [--ready-file F] [--data-dir D] [--database-url URL] [--rate-limit N]`
// Starts the reference server, prints its base URL and masked ready-made tokens, writes the ready
// file (atomically, 0600, in a directory only the user can write: it holds whole tokens) and stops
// cleanly on SIGINT/SIGTERM.
import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ServerOptions } from './app.js';
import { createServer, DEFAULT_PORT } from './app.js';

const USAGE =
  'usage: npm run server -- [--port N] [--host H] [--ready-file F] [--data-dir D] [--database-url URL] [--rate-limit N] [--query-timeout MS]';

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

function parseOptions(): { server: ServerOptions; readyFile: string } {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        'ready-file': { type: 'string' },
        'data-dir': { type: 'string' },
        'database-url': { type: 'string' },
        'rate-limit': { type: 'string' },
        'query-timeout': { type: 'string' },
        help: { type: 'boolean' },
      },
      strict: true,
    }));
  } catch (error) {
    fail((error as Error).message);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const databaseUrl = values['database-url'] ?? process.env.GDS_DATABASE_URL;
  const server: ServerOptions = {
    port: integer('port', values.port, 0, 65535) ?? DEFAULT_PORT,
    ...(values.host ? { host: values.host } : {}),
    ...(values['data-dir'] ? { dataDir: resolve(values['data-dir']) } : {}),
    ...(databaseUrl ? { databaseUrl } : {}),
    ...(values['rate-limit']
      ? { rateLimit: integer('rate-limit', values['rate-limit'], 1, 1_000_000_000) }
      : {}),
    ...(values['query-timeout']
      ? { queryTimeoutMs: integer('query-timeout', values['query-timeout'], 1, 3_600_000) }
      : {}),
    logger: { level: 'warn' },
  };
  const readyFile = resolve(values['ready-file'] ?? join(tmpdir(), 'gds-server', 'ready.json'));
  return { server, readyFile };
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

async function main(): Promise<void> {
  const { server: options, readyFile } = parseOptions();
  ensurePrivateDirectory(dirname(readyFile));
  const server = await createServer(options);
  writeAtomically(readyFile, `${JSON.stringify(server.ready, null, 2)}\n`);
  const lines = [
    `gds reference server listening on ${server.url}`,
    `workspace ${server.ready.workspaceId} (${server.ready.name})`,
    ...server.ready.users.map(
      (u) =>
        `  ${u.role.padEnd(17)} ${u.email.padEnd(22)} cli token ${mask(u.cliToken)}  session ${mask(u.accessToken)}`,
    ),
    `whole tokens, connectors and tables: ${readyFile}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);

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
