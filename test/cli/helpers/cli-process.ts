// Runs the real CLI as a child process: `node bin/run.js …` on Node 24 (node_modules/.bin/node), over the
// compiled dist/. ensureBuilt() runs `tsc -p tsconfig.build.json` once when dist/ is older than src/
// (`npm test` has built already, so it is a no-op there); parallel test files share one build via a lock.
import { spawn } from 'node:child_process';
import { mkdir, readdir, rmdir, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
export const node24 = join(repoRoot, 'node_modules/.bin/node');
export const cliEntry = join(repoRoot, 'bin/run.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Written to stdin, then closed. Without it stdin is empty (/dev/null). */
  input?: string;
  /** Added to (or, when undefined, removed from) a clean environment. */
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Options for node itself, before bin/run.js (e.g. `--import` a preload). */
  nodeArgs?: string[];
}

/** Variables of the parent (vitest, a developer's shell) that would change what the CLI prints. */
const inheritedNoise = [
  'NODE_ENV',
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
    child.stdin?.end(options.input);
  }
  return collect(child);
}

/** The executable and arguments that run the CLI under test with `args`. */
export function cliCommand(args: string[], nodeArgs: string[] = []): [string, string[]] {
  return cliUnderTest === undefined ? [node24, [...nodeArgs, cliEntry, ...args]] : [cliUnderTest, args];
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
  if (await distIsFresh()) return;
  const lock = join(repoRoot, '.gds-tmp', 'build.lock');
  await mkdir(join(repoRoot, '.gds-tmp'), { recursive: true });
  for (let attempt = 0; ; attempt += 1) {
    try {
      await mkdir(lock);
      break;
    } catch {
      if (attempt > 600) throw new Error(`build lock ${lock} held for over a minute: remove it if stale`);
      await sleep(100);
    }
  }
  try {
    if (await distIsFresh()) return;
    const build = spawn(
      node24,
      [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
      {
        cwd: repoRoot,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const result = await collect(build);
    if (result.code !== 0) throw new Error(`npm run build failed:\n${result.stdout}${result.stderr}`);
  } finally {
    await rmdir(lock);
  }
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
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath, e.name));
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
