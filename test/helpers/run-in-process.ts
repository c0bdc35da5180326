// Runs gds inside the test process: the same main() that bin/run.js runs, with the sources of src/ (through
// vitest's transform) instead of dist/, and no process to start (a spawn costs about 300 ms of CPU).
// Same shape as runCli (test/cli/helpers/cli-process.ts): stdout and stderr captured, stdin given, the
// environment (cliEnv: the parent's, less what changes what gds prints) and the working folder set for the
// call and restored after, process.exitCode read and reset. Calls run one at a time.
//
//   const r = await runInProcess(['gate', 'validate', '-f', file], { env: { NO_COLOR: '1' } });
//   expect(r.code).toBe(0);
//
// main() gets its command manifest and loaders as the single executable gets them (scripts/sea/entry.ts):
// oclif never imports a command module itself, so every module of gds is loaded once, by vitest. Under
// GDS_TEST_CLI (the end-to-end suite run against the single executable) it runs that executable instead.
// What a process alone shows stays a process test (runCli): signals, a terminal, stdout closing early,
// process.exit, colour forced by FORCE_COLOR after the first call (ansis decides once per process), and a
// child gds starts with stdio inherited (a shell alias), which writes to the test process's own stdout.
// NODE_EXTRA_CA_CERTS, which node reads only as it starts, is given its effect for the call: the
// certificates of the file are trusted besides the default ones, and no longer after.
import { Console } from 'node:console';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import type * as OclifCore from '@oclif/core';
import type { Command, Interfaces } from '@oclif/core';
import packageJson from '../../package.json' with { type: 'json' };
import { main } from '../../src/cli/main.js';
import { forgetSettings } from '../../src/cli/settings.js';
import { allowProcessTuning } from '../../src/io/young-generation.js';
import type { CommandLoaders } from '../../src/cli/main.js';
import { COMMAND_LOADERS } from '../../src/commands/loaders.js';
import type { CliResult, RunOptions } from '../cli/helpers/cli-process.js';
import { cliEnv, cliEntry, cliUnderTest, repoRoot, runCli } from '../cli/helpers/cli-process.js';

export type InProcessOptions = Omit<RunOptions, 'nodeArgs'> & {
  /** stdin and stderr say they are a terminal, as `canAsk` checks: what a command does when it could ask.
   *  `input` answers a question asked on it (`'n\n'`, or keys: `'\u001b[B\r'` is the arrow down, then Enter).
   *  `'stdout too'`: stdout says so as well, for a command that asks only when its output is on a terminal
   *  (`gds review`'s walk). */
  terminal?: boolean | 'stdout too';
};

/** gds's commands and plugin-help's `help`, as the single executable holds them. */
const loaders: CommandLoaders = {
  help: async () => ({ default: (await import('@oclif/plugin-help')).commands.help as Command.Class }),
  ...COMMAND_LOADERS,
};

// oclif loads the help class by path, with its own `require`: a CommonJS file that hands over the module
// vitest loaded (the single executable does the same through its embedded `require`).
const helpKey = 'gds.test.inProcessHelp';
(globalThis as Record<symbol, unknown>)[Symbol.for(helpKey)] = () => import('../../src/cli/help.js');
const shimDir = mkdtempSync(join(tmpdir(), 'gds-in-process-'));
const helpShim = join(shimDir, 'help.cjs');
writeFileSync(
  helpShim,
  `const load = globalThis[Symbol.for(${JSON.stringify(helpKey)})];\n` +
    'module.exports = { then: (resolve, reject) => load().then(resolve, reject) };\n',
);
// Removed as the process ends, not after a file: in a test process shared by several files (vitest.config.ts)
// this module is loaded once, and the files after the first still need the shim.
process.once('exit', () => rmSync(shimDir, { recursive: true, force: true }));

function freshPjson(): Interfaces.PJSON {
  const pjson = structuredClone(packageJson) as unknown as Interfaces.PJSON;
  pjson.oclif.plugins = [];
  pjson.oclif.helpClass = helpShim;
  return pjson;
}

let manifest: Promise<Interfaces.Manifest> | undefined;

/** oclif's manifest of every command, made from the command classes once per test file. */
function commandManifest(oclif: typeof OclifCore): Promise<Interfaces.Manifest> {
  manifest ??= (async () => {
    const plugin = new oclif.Plugin({
      root: repoRoot,
      pjson: freshPjson(),
      isRoot: true,
      ignoreManifest: true,
      errorOnManifestCreate: true,
    });
    // getCommandIDs is private in oclif's types; the single executable's prepare() replaces _manifest alike.
    (plugin as unknown as { getCommandIDs(): Promise<string[]> }).getCommandIDs = async () =>
      Object.keys(loaders);
    plugin.findCommand = (async (id: string) => {
      const command = (await loaders[id]!()).default;
      command.id = id;
      command.plugin = plugin;
      return command;
    }) as Interfaces.Plugin['findCommand'];
    await plugin.load();
    return plugin.manifest;
  })();
  return manifest;
}

/** Signal listeners a command may add and, in a process that ends, never take off. */
const processEvents: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGPIPE'];

class Capture extends Writable {
  text = '';
  private readonly decoder = new StringDecoder('utf8');
  /**
   * Marked as node marks process.stdout and process.stderr: a stream piped into it never ends it. A prompt
   * of Inquirer's pipes its output into stderr (the legacy Stream#pipe) and ends that pipe once answered,
   * which ended an unmarked capture: what the command said after the answer was a write after end.
   */
  readonly _isStdio = true;
  constructor() {
    super({ decodeStrings: false });
  }
  override _write(chunk: unknown, _encoding: BufferEncoding, done: () => void): void {
    this.text += typeof chunk === 'string' ? chunk : this.decoder.write(chunk as Buffer);
    done();
  }
}

/**
 * stdin with `input`: a string at once, then the end; answers (an array) one per question: the first at once,
 * each next one when a question resumes the stream (readline pauses its input as a question closes, and the
 * next question's readline resumes it; keys pushed at once would all go to the first question), the end after
 * the last.
 */
function stdinOf(input: string | readonly string[] | undefined): Readable {
  const stream = new Readable({ read() {} });
  const answers = typeof input === 'string' ? [input] : [...(input ?? [])];
  const next = () => {
    const answer = answers.shift();
    if (answer !== undefined) stream.push(Buffer.from(answer));
    if (answers.length === 0) stream.push(null);
  };
  let paused = false;
  stream.on('pause', () => {
    paused = true;
  });
  stream.on('resume', () => {
    if (!paused || answers.length === 0) return;
    paused = false;
    next();
  });
  next();
  return stream;
}

let queue: Promise<unknown> = Promise.resolve();

export function runInProcess(args: string[], options: InProcessOptions = {}): Promise<CliResult> {
  if (cliUnderTest !== undefined) return runCli(args, options);
  const run = queue.then(() => runOnce(args, options));
  queue = run.catch(() => undefined);
  return run;
}

let oclifModule: Promise<typeof OclifCore> | undefined;

/**
 * oclif's colours (ansis) are decided once, as it loads: loaded as main() loads it in a process without a
 * terminal (FORCE_COLOR=0), and during a call, so that nothing of the test process's own terminal counts.
 */
async function loadOclif(): Promise<typeof OclifCore> {
  const before = process.env.FORCE_COLOR;
  process.env.FORCE_COLOR = '0';
  try {
    return await (oclifModule ??= import('@oclif/core'));
  } finally {
    if (before === undefined) delete process.env.FORCE_COLOR;
    else process.env.FORCE_COLOR = before;
  }
}

async function runOnce(args: string[], options: InProcessOptions): Promise<CliResult> {
  const stdout = new Capture();
  const stderr = new Capture();
  const saved = {
    env: { ...process.env },
    cwd: process.cwd(),
    argv: process.argv,
    title: process.title,
    exitCode: process.exitCode,
    exit: process.exit,
    console: globalThis.console,
    streams: (['stdin', 'stdout', 'stderr'] as const).map(
      (name) => [name, Object.getOwnPropertyDescriptor(process, name)!] as const,
    ),
    listeners: processEvents.map((event) => [event, process.listeners(event)] as const),
  };
  let exitCalled: number | undefined;
  const trusted = trustExtraCertificates(options.env?.NODE_EXTRA_CA_CERTS);
  replaceEnv(cliEnv(options.env));
  process.chdir(options.cwd ?? repoRoot);
  process.argv = [process.execPath, cliEntry, ...args];
  process.exitCode = undefined;
  process.exit = ((code?: number) => {
    exitCalled = Number(code ?? process.exitCode ?? 0);
    throw new Error(`process.exit(${exitCalled}) in an in-process run: test this with runCli`);
  }) as typeof process.exit;
  const streams = { stdin: stdinOf(options.input), stdout, stderr };
  if (options.terminal !== undefined && options.terminal !== false) {
    Object.assign(streams.stdin, { isTTY: true });
    // oclif's screen module, loaded by the process's first run, asks a terminal stderr (and stdout) its width.
    const terminal = { isTTY: true, getWindowSize: () => [80, 24] };
    Object.assign(stderr, terminal);
    if (options.terminal === 'stdout too') Object.assign(stdout, terminal);
  }
  for (const [name] of saved.streams) {
    Object.defineProperty(process, name, { configurable: true, enumerable: true, get: () => streams[name] });
  }
  // settings.json is read once per process: each call reads it again, as a process would.
  forgetSettings();
  // V8's flags (a held young generation, no optimisation) and full collections would stay with the test
  // process, and with every file it runs after this one.
  allowProcessTuning(false);
  // oclif prints help and its messages with console.log and console.error, which vitest intercepts.
  globalThis.console = new Console({ stdout, stderr });
  let code: number;
  try {
    const commands = await commandManifest(await loadOclif());
    const pjson = freshPjson();
    await main(args, repoRoot, {
      bundle: {
        pjson,
        async prepare(core) {
          const rootPlugin = new core.Plugin({ root: repoRoot, pjson, isRoot: true });
          const withManifest = rootPlugin as unknown as { _manifest(): Promise<Interfaces.Manifest> };
          withManifest._manifest = async () => {
            rootPlugin.commandIDs = Object.keys(commands.commands);
            rootPlugin.hasManifest = true;
            return commands;
          };
          return { rootPlugin, commands: loaders };
        },
      },
    });
  } finally {
    allowProcessTuning(true);
    code = exitCalled ?? Number(process.exitCode ?? 0);
    for (const [name, descriptor] of saved.streams) Object.defineProperty(process, name, descriptor);
    for (const [event, before] of saved.listeners) {
      for (const listener of process.listeners(event)) {
        if (!before.includes(listener)) process.removeListener(event, listener);
      }
    }
    process.exit = saved.exit;
    globalThis.console = saved.console;
    process.exitCode = saved.exitCode;
    process.argv = saved.argv;
    process.title = saved.title;
    process.chdir(saved.cwd);
    replaceEnv(saved.env);
    if (trusted !== undefined) setDefaultCACertificates(trusted);
  }
  return { code, signal: null, stdout: stdout.text, stderr: stderr.text };
}

/** Trusts the certificates of `file` besides the default ones; returns the default ones to restore. */
function trustExtraCertificates(file: string | undefined): string[] | undefined {
  if (file === undefined) return undefined;
  const before = getCACertificates('default');
  const extra = readFileSync(file, 'utf8').match(
    /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g,
  );
  setDefaultCACertificates([...before, ...(extra ?? [])]);
  return before;
}

function replaceEnv(next: NodeJS.ProcessEnv): void {
  for (const name of Object.keys(process.env)) if (!(name in next)) delete process.env[name];
  Object.assign(process.env, next);
}

/**
 * gds in the test process against a test server, as one of its seeded people (their CLI token), with its
 * settings under `dir`/config and secrets in a file:
 *
 *   const gds = (args: string[]) => runAs(server, 'ADMIN', dir, args);
 */
export function runAs(
  server: { url: string; user(role: 'OWNER' | 'ADMIN' | 'STEWARD' | 'MEMBER'): { cliToken: string } },
  role: 'OWNER' | 'ADMIN' | 'STEWARD' | 'MEMBER',
  dir: string,
  args: string[],
): Promise<CliResult> {
  return runInProcess(args, {
    env: {
      GDS_CONFIG_DIR: join(dir, 'config'),
      GDS_SECRET_STORAGE: 'file',
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user(role).cliToken,
    },
  });
}
