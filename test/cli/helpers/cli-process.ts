// Runs the real CLI as a child process on Node 24 (node_modules/.bin/node): what users run, the npm package
// as installed (bin/run.js over its bundle, dist/bundle/gds.cjs), laid out in .gds-tmp/package by
// ensureBuilt(). ensureBuilt() runs `tsc -p tsconfig.build.json` once when dist/ is older than src/ (`npm test`
// has built already, so it is a no-op there), then the package's bundle when it is older than what it is built
// from; parallel test files share one build via a lock. Before ensureBuilt() in a test process, and with node
// options (a preload that watches dist/'s modules), the checkout's own `node bin/run.js` runs, over dist/.
import { spawn } from 'node:child_process';
import { copyFile, mkdir, readdir, rm, rmdir, stat, symlink } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
export const node24 = join(repoRoot, 'node_modules/.bin/node');
export const cliEntry = join(repoRoot, 'bin/run.js');
/** The npm package as installed, with the bundle prepack makes: ensureBuilt() lays it out and keeps it fresh. */
export const installedPackage = join(repoRoot, '.gds-tmp/package');
const installedEntry = join(installedPackage, 'bin/run.js');
const installedBundle = join(installedPackage, 'dist/bundle/gds.cjs');
/** Set once ensureBuilt() has found (or made) the installed package's bundle fresh in this process. */
let installedReady = false;
/**
 * Set once ensureBuilt() has found (or made) dist/ and the installed package fresh in a test run. Its checks
 * (about 30 ms of CPU: every source stat'ed twice) leave out what changed after the run began, so once fresh
 * they stay fresh for the rest of the run: the test process asks once. Outside a test run it asks every time.
 */
let builtInThisRun = false;

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Written to stdin, then closed. Without it stdin is empty (/dev/null). An array is one answer per question
   *  (in the test process, each given when the next question reads; to a process, all at once). */
  input?: string | readonly string[];
  /** Added to (or, when undefined, removed from) a clean environment. */
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Options for node itself, before bin/run.js (e.g. `--import` a preload). */
  nodeArgs?: string[];
}

/** Variables of the parent (vitest, a developer's shell) that would change what the CLI prints. */
const inheritedNoise = [
  'NODE_ENV',
  // dbt's own, which gds reads as dbt does: a developer's profiles.yml or mode would change what plan selects.
  'DBT_PROFILES_DIR',
  'DBT_INDIRECT_SELECTION',
  'DBT_LOG_PATH',
  'FORCE_COLOR',
  'NO_COLOR',
  'GDS_CONTENT_TYPE',
  'GDS_JSON',
  'GDS_PROFILE',
  'SERVICE_TOKEN',
  'SERVICE_API_URL',
  'DEBUG',
  'HTTPS_PROXY',
  'HTTP_PROXY',
  'NO_PROXY',
  'https_proxy',
  'http_proxy',
  'no_proxy',
  // a pager would hold a test's terminal output until a key is pressed (tests of paging set their own)
  'PAGER',
  'GDS_PAGER',
];

/** Another executable to test instead of `node bin/run.js`: CI runs the end-to-end suite against dist/gds. */
export const cliUnderTest = process.env.GDS_TEST_CLI;

export function cliEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of inheritedNoise) delete env[name];
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

export function runCli(args: string[], options: RunOptions = {}): Promise<CliResult> {
  if (cliUnderTest !== undefined && options.nodeArgs !== undefined) {
    throw new Error('node options cannot apply to GDS_TEST_CLI, a single executable');
  }
  const [command, argv] = cliCommand(args, options.nodeArgs);
  const child = spawn(command, argv, {
    cwd: options.cwd ?? repoRoot,
    env: cliEnv(options.env),
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (options.input !== undefined) {
    // The CLI may stop reading early (an input over its limit): EPIPE here is its answer, not the test's.
    child.stdin?.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
    });
    child.stdin?.end(typeof options.input === 'string' ? options.input : options.input.join(''));
  }
  return collect(child);
}

/**
 * `args` through the npm package's entry (`node bin/run.js`) whatever GDS_TEST_CLI names: the executable's
 * tests compare it with this.
 */
export function runThroughNode(
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined> },
): Promise<CliResult> {
  const child = spawn(node24, [cliEntry, ...args], {
    cwd: options.cwd,
    env: cliEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collect(child);
}

/** The executable and arguments that run the CLI under test with `args`. */
export function cliCommand(args: string[], nodeArgs: string[] = []): [string, string[]] {
  if (cliUnderTest !== undefined) return [cliUnderTest, args];
  const entry = installedReady && nodeArgs.length === 0 ? installedEntry : cliEntry;
  return [node24, [...nodeArgs, entry, ...args]];
}

export function collect(child: ReturnType<typeof spawn>): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Runs a shell command line under a pseudo-terminal (util-linux `script`), so the CLI sees TTYs. */
export function runInTerminal(commandLine: string, env: Record<string, string | undefined> = {}) {
  const child = spawn('script', ['-qec', commandLine, '/dev/null'], {
    cwd: repoRoot,
    env: cliEnv({ TERM: 'xterm-256color', ...env }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  return { child, result: collect(child) };
}

export async function ensureBuilt(): Promise<void> {
  if (builtInThisRun) return;
  if ((await distIsFresh()) && (await installedIsFresh())) {
    builtInThisRun = Number.isFinite(runStartedMs);
    return;
  }
  const lock = join(repoRoot, '.gds-tmp', 'build.lock');
  await mkdir(join(repoRoot, '.gds-tmp'), { recursive: true });
  for (let attempt = 0; ; attempt += 1) {
    try {
      await mkdir(lock);
      break;
    } catch {
      if (attempt > 3000)
        throw new Error(`build lock ${lock} held for over five minutes: remove it if stale`);
      await sleep(100);
    }
  }
  try {
    if (!(await distIsFresh()))
      await build('npm run build', [
        join(repoRoot, 'node_modules/typescript/bin/tsc'),
        '-p',
        'tsconfig.build.json',
      ]);
    if (!(await installedIsFresh())) await installPackage();
    builtInThisRun = Number.isFinite(runStartedMs);
  } finally {
    await rmdir(lock);
  }
}

async function build(name: string, args: string[]): Promise<void> {
  const result = await collect(spawn(node24, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] }));
  if (result.code !== 0) throw new Error(`${name} failed:\n${result.stdout}${result.stderr}`);
}

/** Whether the installed package's bundle is as new as what it is built from (none under GDS_TEST_CLI). */
async function installedIsFresh(): Promise<boolean> {
  if (cliUnderTest !== undefined) return true;
  installedReady = await bundleIsFresh();
  return installedReady;
}

/**
 * Lays out the npm package as npm installs it (bin/run.js, package.json, dist/ with the bundle, node_modules
 * beside) in .gds-tmp/package, and builds its bundle as prepack does (scripts/build-package-bundles.ts).
 */
async function installPackage(): Promise<void> {
  await rm(installedPackage, { recursive: true, force: true });
  await mkdir(join(installedPackage, 'bin'), { recursive: true });
  await mkdir(join(installedPackage, 'dist'));
  await copyFile(join(repoRoot, 'bin/run.js'), installedEntry);
  await copyFile(join(repoRoot, 'package.json'), join(installedPackage, 'package.json'));
  for (const entry of await readdir(join(repoRoot, 'dist'), { withFileTypes: true })) {
    if (entry.isDirectory() && !['bundle', 'sea-build', 'release', 'release-cache'].includes(entry.name))
      await symlink(join(repoRoot, 'dist', entry.name), join(installedPackage, 'dist', entry.name));
  }
  await symlink(join(repoRoot, 'node_modules'), join(installedPackage, 'node_modules'));
  const script = join(repoRoot, 'scripts/build-package-bundles.ts');
  const tsx = join(repoRoot, 'node_modules/tsx/dist/cli.mjs');
  await build('npm run build:package-bundles', [
    tsx,
    script,
    '--out-dir',
    join(installedPackage, 'dist/bundle'),
  ]);
  if (!(await bundleIsFresh())) throw new Error(`${installedBundle} was built but is older than its sources`);
  installedReady = true;
}

/** What the package's bundle is built from, besides src/ (the server's aside). */
const bundleInputs = [
  'bin/run.js',
  'package.json',
  'node_modules/.package-lock.json',
  'scripts/build-package-bundles.ts',
  'scripts/bundle',
  'scripts/sea',
];

/**
 * Whether `bundle` is at least as new as every file it is built from (src/, aside the server, and the build's
 * own scripts and package files), leaving out those changed after the test run began, as distIsFresh does.
 */
export async function bundleIsFresh(
  root = repoRoot,
  startedMs = runStartedMs,
  bundle = installedBundle,
): Promise<boolean> {
  const built = await stat(bundle).catch(() => undefined);
  if (built === undefined) return false;
  const inputs = [join(root, 'src'), ...bundleInputs.map((input) => join(root, input))];
  for (const input of inputs) {
    const files = (await stat(input).catch(() => undefined))?.isDirectory()
      ? await listFiles(input)
      : [input];
    for (const file of files) {
      if (relative(join(root, 'src'), file).startsWith('server')) continue;
      const changed = await stat(file).catch(() => undefined);
      if (changed === undefined || changed.mtimeMs > startedMs) continue;
      if (built.mtimeMs < changed.mtimeMs) return false;
    }
  }
  return true;
}

/** When the test run began (vitest.config.ts sets it; unset outside vitest: no bound). */
const runStartedMs = Number(process.env.GDS_TEST_RUN_STARTED_MS) || Number.POSITIVE_INFINITY;

/**
 * Whether dist/ holds an output at least as new as each source under src/ (the server's aside). A source
 * changed or added after the test run began is not this run's concern: an edit made while tests run never
 * starts a build that rewrites dist/ under the processes running it. One removed since it was listed has
 * nothing to build.
 */
export async function distIsFresh(
  root = repoRoot,
  startedMs = runStartedMs,
  sources?: readonly string[],
): Promise<boolean> {
  for (const source of sources ?? (await listTypeScript(join(root, 'src')))) {
    const rel = relative(join(root, 'src'), source);
    if (rel.startsWith('server')) continue;
    const built = join(root, 'dist', rel.replace(/\.ts$/, '.js'));
    const [src, out] = await Promise.all([
      stat(source).catch(() => undefined),
      stat(built).catch(() => undefined),
    ]);
    if (src === undefined || src.mtimeMs > startedMs) continue;
    if (out === undefined || out.mtimeMs < src.mtimeMs) return false;
  }
  return true;
}

async function listTypeScript(dir: string): Promise<string[]> {
  return (await listFiles(dir)).filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'));
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

/** The environment of a gds process talking to a test server with `token`, its config in `configDir`. */
export function serverEnv(url: string, token: string, configDir: string): Record<string, string> {
  return {
    GDS_CONFIG_DIR: configDir,
    GDS_SECRET_STORAGE: 'file',
    SERVICE_API_URL: url,
    SERVICE_TOKEN: token,
  };
}
