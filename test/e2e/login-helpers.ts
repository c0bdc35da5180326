// Drives the real `gds auth login` process against the reference server: starts it, waits for the
// user code on its stderr, and lets the test play the person on the verification page. Other commands
// (`run`) run in the test process; `runProcess` runs one as a process of its own, for what only processes
// show (several refreshing one session at once, each with its own memory).
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { cliCommand, cliEnv, collect, repoRoot, runCli } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';

export interface Workspace {
  configDir: string;
  env: Record<string, string | undefined>;
  /** Every output of every run, to check at the end that no token was ever printed. */
  outputs: string[];
  run(args: string[], extraEnv?: Record<string, string | undefined>): Promise<CliResult>;
  runProcess(args: string[], extraEnv?: Record<string, string | undefined>): Promise<CliResult>;
  /** Starts `gds args…`; resolves the user code once it is on stderr, and the result at exit. */
  start(args: string[]): {
    code: Promise<string>;
    result: Promise<CliResult>;
    kill(signal: NodeJS.Signals): void;
  };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests index into the config freely
  config(): Promise<any>;
  remove(): Promise<void>;
}

/** A fresh config folder; secrets in the file unless `overrides` says otherwise. */
export async function newWorkspace(overrides: Record<string, string | undefined> = {}): Promise<Workspace> {
  const configDir = await mkdtemp(join(tmpdir(), 'gds-login-'));
  const env = {
    GDS_CONFIG_DIR: configDir,
    GDS_SECRET_STORAGE: 'file',
    SERVICE_API_URL: undefined,
    ...overrides,
  };
  const outputs: string[] = [];
  const keep = (result: CliResult) => {
    outputs.push(result.stdout, result.stderr);
    return result;
  };
  return {
    configDir,
    env,
    outputs,
    run: async (args, extraEnv = {}) => keep(await runInProcess(args, { env: { ...env, ...extraEnv } })),
    runProcess: async (args, extraEnv = {}) => keep(await runCli(args, { env: { ...env, ...extraEnv } })),
    start(args) {
      const [command, argv] = cliCommand(args);
      const child = spawn(command, argv, {
        cwd: repoRoot,
        env: cliEnv(env),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const result = collect(child).then(keep);
      const code = new Promise<string>((resolve, reject) => {
        let seen = '';
        child.stderr?.on('data', (chunk: Buffer) => {
          seen += chunk.toString('utf8');
          const match = /enter the code ([A-Z]{4}-[A-Z]{4})/.exec(seen);
          if (match?.[1]) resolve(match[1]);
        });
        void result.then((r) =>
          reject(new Error(`gds ended (${r.code}) before showing a code:\n${r.stderr}`)),
        );
      });
      code.catch(() => undefined);
      return { code, result, kill: (signal) => child.kill(signal) };
    },
    async config() {
      return JSON.parse(await readFile(join(configDir, 'config.json'), 'utf8'));
    },
    remove: () => rm(configDir, { recursive: true, force: true }),
  };
}

/** Every NDJSON line of stdout, parsed (a line that is not JSON fails the test). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests index into lines freely
export function ndjson(stdout: string): any[] {
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
}
