// Long output through a pager, as gh does: on a terminal only, the commands that print
// lists, diffs and `gds api` answers send stdout through GDS_PAGER, else the CLI's `pager` setting, else
// PAGER, when stdout is a terminal and the command pages (Output.usePager).
//
// What gh 2.23 does, checked in a pseudo-terminal (docs/gh-comparison.md, O15), and gds with it:
// - GH_PAGER set wins, even empty (no pager); then the config's pager; then PAGER. Unset: no pager.
// - `cat` (or an empty value) is no pager at all; piped stdout is never paged; help is never paged.
// - The pager gets LESS=FRX when LESS is unset (quit when it fits, colours, no screen clearing), LV=-c when
//   LV is unset, and no PAGER in its environment.
// - A pager that ends early (q before the end) or exits non-zero is no error: the command stops at its next
//   write (PagerClosed, gh's ErrClosedPagerPipe), exit 0.
// - A pager that is not there is said on stderr, and the output is printed as it would be without one.
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import type { ChildProcess } from 'node:child_process';

/**
 * The pager command to use, or undefined for none: GDS_PAGER when set (empty: none), else `setting` (the
 * CLI's own `pager` setting, when one is kept), else PAGER. `cat` and blank values are none.
 */
export function resolvePager(env: NodeJS.ProcessEnv, setting?: string): string | undefined {
  const chosen = env.GDS_PAGER ?? (setting === undefined || setting.trim() === '' ? env.PAGER : setting);
  const command = chosen?.trim() ?? '';
  return command === '' || command === 'cat' ? undefined : command;
}

/** Where the variable that chose the pager came from, for the warning when it is not there. */
function chosenBy(env: NodeJS.ProcessEnv, setting?: string): string {
  if (env.GDS_PAGER !== undefined) return 'GDS_PAGER';
  return setting !== undefined && setting.trim() !== '' ? 'the pager setting' : 'PAGER';
}

/** The environment the pager runs in: gh's LESS=FRX and LV=-c unless set, and no PAGER. */
export function pagerEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { PAGER: _pager, ...rest } = env;
  return { ...rest, LESS: env.LESS ?? 'FRX', LV: env.LV ?? '-c' };
}

/**
 * Whether the program a pager command starts with can be found (an absolute path, or a name on PATH).
 * A command starting with a quote or a shell word is left to the shell, as are Windows' commands.
 */
export function pagerFound(command: string, env: NodeJS.ProcessEnv): boolean {
  if (process.platform === 'win32') return true;
  const first = /^[\w./+@-]+(?=\s|$)/.exec(command)?.[0];
  if (first === undefined) return true;
  const executable = (file: string) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (first.includes('/')) return executable(first);
  return (env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => dir !== '' && isAbsolute(dir))
    .some((dir) => executable(join(dir, first)));
}

/**
 * Thrown by a write once the person has quit the pager before the end (gh's ErrClosedPagerPipe): the command
 * stops there (no more pages are fetched for nobody) and gds exits 0, saying nothing.
 */
export class PagerClosed extends Error {
  readonly code = 'pager_closed';
  constructor() {
    super('The pager was quit before the end of the output.');
  }
}

interface TerminalStream {
  write(chunk: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/**
 * The stream a command writes to while it pages: the pager starts at the first write (a command that
 * prints nothing, or only an error on stderr, shows no pager). It reads as the terminal it stands for (a TTY,
 * its width), so tables, times and colours come out as on the terminal itself.
 */
export class PagedOutput {
  readonly isTTY = true;
  private child: ChildProcess | undefined;
  /** The pager's input is over (its end given, or the pager gone): what is written meanwhile is dropped. */
  private closed = false;
  /** gds gave the pager the end of its input (end()): from then on writes are dropped, never refused. */
  private ending = false;
  /** The pager process has ended (or never started). */
  private gone = false;
  /** No pager could be found: everything goes to the terminal. */
  private direct = false;
  private exited: Promise<void> | undefined;

  constructor(
    private readonly command: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly terminal: TerminalStream,
    private readonly warn: (message: string) => void,
    private readonly chosenBy: string,
  ) {}

  get columns(): number | undefined {
    return this.terminal.columns;
  }

  /** Whether a pager process is running (started and not ended). */
  get running(): boolean {
    return this.child !== undefined && !this.gone;
  }

  write(chunk: string): boolean {
    if (this.direct) return this.terminal.write(chunk) !== false;
    if (this.closed) {
      if (this.ending) return true;
      throw new PagerClosed();
    }
    const child = this.child ?? this.start();
    if (child === undefined) return this.terminal.write(chunk) !== false;
    child.stdin?.write(chunk);
    return true;
  }

  /** Everything written: the pager gets the end of its input, and this waits until the person quits it. */
  async end(): Promise<void> {
    if (this.child === undefined) return;
    this.ending = true;
    if (!this.closed) {
      this.closed = true;
      this.child.stdin?.end();
    }
    await this.exited;
  }

  private start(): ChildProcess | undefined {
    if (!pagerFound(this.command, this.env)) {
      this.direct = true;
      this.warn(
        `The pager ${JSON.stringify(this.command)} (from ${this.chosenBy}) was not found; printing without one. ` +
          'Set GDS_PAGER to a pager on your PATH, or GDS_PAGER= (empty) for none.',
      );
      return undefined;
    }
    // node:child_process (and the node:net and node:dgram it loads) only once a pager starts: every command
    // imports this module, and most never page.
    const { spawn } = process.getBuiltinModule('node:child_process');
    const child = spawn(this.command, {
      shell: true,
      stdio: ['pipe', 'inherit', 'inherit'],
      env: pagerEnvironment(this.env),
    });
    this.child = child;
    // The pager ending before the end of the output (q, or a pager that reads only a part) is no error:
    // the rest is dropped (EPIPE included).
    child.stdin?.on('error', () => {
      this.closed = true;
    });
    this.exited = new Promise<void>((resolve) => {
      child.once('error', (error) => {
        this.closed = true;
        this.gone = true;
        this.warn(`The pager ${JSON.stringify(this.command)} could not start: ${error.message}.`);
        resolve();
      });
      child.once('close', () => {
        this.closed = true;
        this.gone = true;
        resolve();
      });
    });
    return child;
  }
}

/** A paged stdout for `command` (resolvePager's answer) on `terminal`, warning on `warn`. */
export function pagedOutput(
  command: string,
  env: NodeJS.ProcessEnv,
  terminal: TerminalStream,
  warn: (message: string) => void,
  setting?: string,
): PagedOutput {
  return new PagedOutput(command, env, terminal, warn, chosenBy(env, setting));
}
