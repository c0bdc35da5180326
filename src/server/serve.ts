// What `npm run server -- [options]` runs once main.ts has set glibc's malloc settings (`--help` lists the
// options): starts the reference server, prints its base URL, the seeded users with masked tokens and the
// command to run next, writes the ready file (atomically, 0600, in a directory only the user can write: it
// holds whole tokens) and stops cleanly on SIGINT/SIGTERM.
import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ServerOptions, SignIn } from './app.js';
import { helpText, parseServerArgs, UsageError, USAGE } from './options.js';
import type { ReadyInfo } from './ready.js';
import { SIGN_IN_SECRET_ENV } from './sign-in-secret.js';

function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

function parseOptions(): { server: ServerOptions; readyFile: string } {
  let parsed;
  try {
    parsed = parseServerArgs(process.argv.slice(2));
  } catch (error) {
    if (error instanceof UsageError) fail(error.message);
    throw error;
  }
  if (parsed.help === true) {
    process.stdout.write(helpText());
    process.exit(0);
  }
  return parsed;
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
function banner(ready: ReadyInfo, readyFile: string, signIn: SignIn | null): string {
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
    signIn === null
      ? 'next, sign in (approve the code on the /device page with one of the e-mails above):'
      : 'next, sign in (approve the code on the /device page with one of the e-mails above and the sign-in secret; see stderr):',
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

/**
 * The one line that says person sign-in asks for a secret, and why; a secret made at start is printed here
 * once (stderr, as a Jupyter server prints its token), never in the ready file or anywhere else.
 */
function signInLine(signIn: SignIn, origin: string): string {
  const why = signIn.reason === undefined ? '' : ` (${signIn.reason})`;
  const asks = `person sign-in at ${origin}/device and ${origin}/dashboard asks for the e-mail and a sign-in secret${why}`;
  return signIn.generated
    ? `${asks}; it was made for this start (set ${SIGN_IN_SECRET_ENV} to choose it): ${signIn.secret}\n`
    : `${asks}: the one in ${SIGN_IN_SECRET_ENV}\n`;
}

async function main(): Promise<void> {
  const { server: options, readyFile } = parseOptions();
  ensurePrivateDirectory(dirname(readyFile));
  // Loaded once the command line is taken: --help and a refused command line answer without it.
  // eslint-disable-next-line no-restricted-syntax -- the server's modules cost about a second of CPU
  const { createServer } = await import('./app.js');
  const server = await createServer({
    ...options,
    onStartUpWait: () =>
      process.stderr.write(
        'Another gds server is starting up on this database (migrations, seed, signing key); waiting for it to finish.\n',
      ),
  });
  writeAtomically(readyFile, `${JSON.stringify(server.ready, null, 2)}\n`);
  process.stdout.write(banner(server.ready, readyFile, server.signIn));
  if (server.signIn) process.stderr.write(signInLine(server.signIn, server.ready.origin));

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
