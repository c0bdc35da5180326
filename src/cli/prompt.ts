// Yes/no questions to the person at the terminal: asked on stderr, answered on the terminal's stdin.
// A command that needs an answer checks `canAsk` first and refuses (exit 2) rather than hang on a pipe.
import { createInterface } from 'node:readline/promises';
import { stripControlCharacters } from '../core/terminal-text.js';

export interface PromptStreams {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream & { isTTY?: boolean };
}

const terminal = (): PromptStreams => ({ input: process.stdin, output: process.stderr });

export function canAsk(streams: PromptStreams = terminal()): boolean {
  return streams.input.isTTY === true && streams.output.isTTY === true;
}

/** True only for y or yes (any case); anything else, an empty answer included, is no. The question may hold
 * server strings: it is stripped of control characters. */
export async function confirm(question: string, streams: PromptStreams = terminal()): Promise<boolean> {
  const rl = createInterface({ input: streams.input, output: streams.output, terminal: true });
  try {
    const answer = await rl.question(`${stripControlCharacters(question)} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/** Asks for one of `options` by number (1-based); undefined when the answer names none of them. */
export async function choose(
  question: string,
  options: readonly string[],
  streams: PromptStreams = terminal(),
): Promise<string | undefined> {
  const rl = createInterface({ input: streams.input, output: streams.output, terminal: true });
  try {
    const menu = options.map((option, i) => `  ${i + 1}. ${stripControlCharacters(option)}`).join('\n');
    const answer = await rl.question(`${stripControlCharacters(question)}\n${menu}\nNumber: `);
    const index = Number(answer.trim());
    return Number.isInteger(index) ? options[index - 1] : undefined;
  } finally {
    rl.close();
  }
}
