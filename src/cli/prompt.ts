// Questions to the person at the terminal, on Inquirer's prompts: @inquirer/select, @inquirer/confirm and
// @inquirer/password, each imported alone (the @inquirer/prompts index loads all ten, the editor's
// iconv-lite among them: +65 ms of CPU over node's start and 64 MiB, against +30 ms and 54 MiB for these
// three; docs/bench.md) and only when a question is asked, so start-up never pays for it. Asked on stderr, answered on the terminal's stdin. A command that needs an
// answer checks `canAsk` first and refuses (exit 2) rather than hang on a pipe. Ctrl-C at a question ends
// the process with 130 on a clean line, as Ctrl-C does everywhere else in gds.
import { settingValue } from './settings.js';
import { onOneLine, stripControlCharacters } from '../core/terminal-text.js';
import { CliError, ExitCode } from '../core/errors.js';

export interface PromptStreams {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream & { isTTY?: boolean };
}

const terminal = (): PromptStreams => ({ input: process.stdin, output: process.stderr });

/** A person can answer: stdin and stderr are terminals, and prompts are not disabled. */
export function canAsk(streams: PromptStreams = terminal(), env: NodeJS.ProcessEnv = process.env): boolean {
  if (streams.input.isTTY !== true || streams.output.isTTY !== true) return false;
  return !promptsDisabled(env);
}

/**
 * GDS_PROMPT_DISABLED set (to anything but empty, 0 or false): gds asks nothing, as when piped; set to 0 or
 * false, it may ask. Unset or empty: the `prompt` setting (`gds settings set prompt disabled`) decides.
 */
export function promptsDisabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.GDS_PROMPT_DISABLED?.trim().toLowerCase() ?? '';
  if (value !== '') return value !== '0' && value !== 'false';
  return settingValue('prompt', env) === 'disabled';
}

/**
 * Before a destructive command does anything: with --yes, nothing to ask; without a terminal to ask on,
 * exit 2 `confirmation_required` naming --yes (a script says what it means, as `gds delete` does).
 */
export function requireConfirmable(command: string, yes: boolean, withoutAsking: string): void {
  if (yes || canAsk()) return;
  throw new CliError(`gds ${command} asks for confirmation, and there is no terminal to ask on.`, {
    exitCode: ExitCode.Usage,
    code: 'confirmation_required',
    suggestion: `Pass --yes to ${withoutAsking} without asking.`,
  });
}

/** With --yes, go on; else ask (Enter: no), and a no is exit 1 `not_confirmed` saying nothing changed. */
export async function confirmOrStop(yes: boolean, question: string, unchanged: string): Promise<void> {
  if (yes || (await confirm(question))) return;
  throw new CliError(unchanged, { exitCode: ExitCode.Failure, code: 'not_confirmed' });
}

export interface Choice<T> {
  value: T;
  /** What the line shows (server strings are stripped of control characters). */
  name: string;
  /** Shown under the list for the highlighted choice. */
  description?: string;
  /** What the answered question shows once picked, when the line itself is too long for it. */
  short?: string;
}

/** Runs one prompt; Ctrl-C (or a closed terminal) exits 130 after ending the prompt's line. */
async function ask<P, T>(
  load: Promise<{ default: P }>,
  run: (prompt: P) => Promise<T>,
  streams: PromptStreams,
): Promise<T> {
  const { default: prompt } = await load;
  try {
    return await run(prompt);
  } catch (error) {
    if ((error as Error).name === 'ExitPromptError' || (error as Error).name === 'AbortPromptError') {
      streams.output.write('\n');
      process.exit(ExitCode.Interrupted);
    }
    throw error;
  }
}

const context = (streams: PromptStreams) => ({
  input: streams.input as NodeJS.ReadStream,
  output: streams.output as NodeJS.WriteStream,
  clearPromptOnDone: false,
});

/** True only for y or yes; the default (Enter) is no. The question may hold server strings: it is
 *  stripped of control characters. */
export async function confirm(question: string, streams: PromptStreams = terminal()): Promise<boolean> {
  return ask(
    import('@inquirer/confirm'),
    (prompt) => prompt({ message: onOneLine(question), default: false }, context(streams)),
    streams,
  );
}

/** One of `choices`, picked with the arrow keys (or by typing its first letters); Enter takes `initial`. */
export async function select<T>(
  question: string,
  choices: ReadonlyArray<Choice<T>>,
  options: { initial?: T; streams?: PromptStreams } = {},
): Promise<T> {
  const streams = options.streams ?? terminal();
  return ask(
    import('@inquirer/select'),
    (prompt) =>
      prompt<T>(
        {
          message: onOneLine(question),
          choices: choices.map((choice) => ({
            value: choice.value,
            name: onOneLine(choice.name),
            ...(choice.description === undefined
              ? {}
              : { description: stripControlCharacters(choice.description) }),
            ...(choice.short === undefined ? {} : { short: onOneLine(choice.short) }),
          })),
          ...(options.initial === undefined ? {} : { default: options.initial }),
        },
        context(streams),
      ),
    streams,
  );
}

/** A secret typed or pasted, masked with *; empty answers are asked again. */
export async function secret(question: string, streams: PromptStreams = terminal()): Promise<string> {
  return ask(
    import('@inquirer/password'),
    (prompt) =>
      prompt(
        {
          message: onOneLine(question),
          mask: '*',
          validate: (value: string) => (value.trim() === '' ? 'Paste the token, or Ctrl-C to stop.' : true),
        },
        context(streams),
      ),
    streams,
  );
}

/** A line of text typed at the terminal (a reason); empty answers are asked again; Ctrl-C exits 130. */
export async function text(question: string, streams: PromptStreams = terminal()): Promise<string> {
  const { createInterface } = process.getBuiltinModule('node:readline/promises');
  const rl = createInterface({ input: streams.input, output: streams.output, terminal: true });
  rl.on('SIGINT', () => {
    streams.output.write('\n');
    process.exit(ExitCode.Interrupted);
  });
  try {
    for (;;) {
      const answer = (await rl.question(`${onOneLine(question)} `)).trim();
      if (answer !== '') return answer;
    }
  } finally {
    rl.close();
  }
}
