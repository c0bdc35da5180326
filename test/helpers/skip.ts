// The named reasons a test may skip for, and only these: what the machine lacks, said the same way
// everywhere, so the run can end with one line per reason (test/helpers/skip-reporter.ts). A guard is
// `describe(title, needs(reason), () => …)` or `it(title, needs(reason), …)`: the reason travels to the
// reporter in the test's meta. With everything installed (as in CI, .ci/run) nothing skips.
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { TestOptions } from 'vitest';
import { sharedFixturesDir } from './fixtures.js';

declare module 'vitest' {
  interface TaskMeta {
    /** Why the test was skipped: one of the reasons of test/helpers/skip.ts. */
    skipReason?: string;
  }
}

/** The full path of an executable on the PATH, or undefined. */
export function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

export const NO_POSTGRES = 'no PostgreSQL (set GDS_TEST_DATABASE_URL)';
export const NO_SHARED_FIXTURES = 'no ../shared/fixtures beside the repository';
export const NO_SECRET_SERVICE_TOOLS = 'no Secret Service (install gnome-keyring, dbus-x11, libsecret-tools)';
export const NO_SECRET_SERVICE_SESSION =
  'no Secret Service session (run the tests under dbus-run-session with gnome-keyring unlocked, as .ci/run does)';

export const NO_TMUX = 'no tmux (a real terminal driven by keys, test/helpers/tmux.ts)';

export const NO_TERMINAL_STAND_IN =
  'a terminal stand-in (stdin answering a question) is in the test process only: the single executable (GDS_TEST_CLI) runs on pipes';

/** Each condition: undefined when the machine has what it names, else the reason to skip. */
export const noPostgres: string | undefined = process.env.GDS_TEST_DATABASE_URL ? undefined : NO_POSTGRES;

/** A test that asks a question on a terminal's stand-in, which runInProcess gives but not the executable's run. */
export const noTerminalStandIn: string | undefined =
  process.env.GDS_TEST_CLI === undefined ? undefined : NO_TERMINAL_STAND_IN;

export const noTmux: string | undefined = onPath('tmux') ? undefined : NO_TMUX;

export const noSharedFixtures: string | undefined = existsSync(sharedFixturesDir)
  ? undefined
  : NO_SHARED_FIXTURES;

/** A private D-Bus session with gnome-keyring can be started (what test/binary does for itself). */
export const secretServiceTools = {
  dbusRunSession: onPath('dbus-run-session'),
  gnomeKeyringDaemon: onPath('gnome-keyring-daemon'),
};
export const noSecretServiceTools: string | undefined =
  secretServiceTools.dbusRunSession && secretServiceTools.gnomeKeyringDaemon
    ? undefined
    : NO_SECRET_SERVICE_TOOLS;

let secretServiceProbe: Promise<string | undefined> | undefined;

/**
 * A Secret Service answers in this process's D-Bus session: `secret-tool` stores and clears a probe
 * item. Undefined when it does, else why not (the tools are missing, or no session runs them).
 */
export function whyNoSecretService(): Promise<string | undefined> {
  secretServiceProbe ??= probeSecretService();
  return secretServiceProbe;
}

async function probeSecretService(): Promise<string | undefined> {
  const secretTool = onPath('secret-tool');
  if (secretTool === undefined) return NO_SECRET_SERVICE_TOOLS;
  if (!process.env.DBUS_SESSION_BUS_ADDRESS) return NO_SECRET_SERVICE_SESSION;
  const probe = ['service', 'gds-cli-test-probe', 'username', `probe-${process.pid}`];
  const stored = await run(secretTool, ['store', '--label=gds probe', ...probe], 'x');
  if (stored.code !== 0)
    return `${NO_SECRET_SERVICE_SESSION}: secret-tool store said ${stored.stderr.trim()}`;
  await run(secretTool, ['clear', ...probe], '');
  return undefined;
}

function run(file: string, args: string[], input: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: ['pipe', 'ignore', 'pipe'], timeout: 5_000 });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', (error) => resolve({ code: null, stderr: error.message }));
    child.on('close', (code) => resolve({ code, stderr }));
    // A tool that ends (or is ended at the timeout) before reading its input: its exit code says how it went.
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

/**
 * Test options that skip when any reason is given (undefined means the machine has what is needed),
 * carrying the first reason to the reporter.
 */
export function needs(...reasons: (string | undefined)[]): TestOptions {
  const reason = reasons.find((r) => r !== undefined);
  return reason === undefined ? {} : { skip: true, meta: { skipReason: reason } };
}

/** A Node.js older than gds supports (the machine's own, e.g. Debian's 20), to run bin/run.js with. */
export const oldNode: { path: string; version: string } | undefined = findOldNode();
export const NO_OLD_NODE =
  'no Node.js older than 22.3 on the PATH or in /usr/bin (the old-Node sentence is untested)';
export const noOldNode: string | undefined = oldNode === undefined ? NO_OLD_NODE : undefined;

function findOldNode(): { path: string; version: string } | undefined {
  const candidates = new Set<string>(['/usr/bin/node', '/usr/local/bin/node']);
  for (const dir of (process.env.PATH ?? '').split(delimiter))
    if (dir !== '') candidates.add(join(dir, 'node'));
  for (const path of candidates) {
    const version = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 10_000 }).stdout?.trim();
    const match = /^v(\d+)\.(\d+)\./.exec(version ?? '');
    if (match && (Number(match[1]) < 22 || (Number(match[1]) === 22 && Number(match[2]) < 3))) {
      return { path, version: version as string };
    }
  }
  return undefined;
}
