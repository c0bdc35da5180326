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
