// Reads a text input named on the command line: a path, or `-` for stdin. Every failure is a usage
// error (exit 2) that says what was wrong and what to do instead.
import { readFile } from 'node:fs/promises';
import { text as readStream } from 'node:stream/consumers';
import { CliError, ExitCode } from './errors.js';

export interface TextInput {
  /** The path as given, or `<stdin>`: what diagnostics and diff headers show. */
  name: string;
  text: string;
}

export interface ReadInputOptions {
  /** The flag that named the input, for messages (`-f`, `--against`). */
  flag?: string;
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
}

export async function readTextInput(source: string, options: ReadInputOptions = {}): Promise<TextInput> {
  const flag = options.flag ?? '-f';
  if (source === '-') return { name: '<stdin>', text: await readStdin(flag, options.stdin ?? process.stdin) };
  try {
    return { name: source, text: await readFile(source, 'utf8') };
  } catch (error) {
    throw inputError(source, flag, error);
  }
}

async function readStdin(flag: string, stdin: NodeJS.ReadableStream & { isTTY?: boolean }): Promise<string> {
  if (stdin.isTTY === true) {
    throw new CliError(`${flag} - reads from stdin, but stdin is a terminal with nothing piped in.`, {
      exitCode: ExitCode.Usage,
      code: 'stdin_is_terminal',
      suggestion: `Pipe the text in (e.g. \`cat gate1.yml | gds … ${flag} -\`) or give a file path.`,
    });
  }
  return readStream(stdin);
}

function inputError(source: string, flag: string, error: unknown): CliError {
  const code = (error as NodeJS.ErrnoException).code;
  const usage = (message: string, errorCode: string, suggestion: string) =>
    new CliError(message, { exitCode: ExitCode.Usage, code: errorCode, suggestion });
  switch (code) {
    case 'ENOENT':
      return usage(
        `No such file: ${source}`,
        'input_not_found',
        `Check the path given to ${flag}, or use ${flag} - to read stdin.`,
      );
    case 'EISDIR':
      return usage(
        `${source} is a directory, not a file.`,
        'input_is_directory',
        `Give ${flag} a file path.`,
      );
    case 'EACCES':
    case 'EPERM':
      return usage(
        `Cannot read ${source}: permission denied.`,
        'input_unreadable',
        'Check the file permissions.',
      );
    default:
      return usage(
        `Cannot read ${source}: ${(error as Error).message}`,
        'input_unreadable',
        `Check the path given to ${flag}.`,
      );
  }
}

/**
 * A gate1.yml given with -f: the text itself, or the one NDJSON record `gds gate suggest --json` (its
 * `yaml`) or `gds gate get --json` (its `content`) printed, so the README's pipes work under GDS_JSON=1 too.
 */
export async function readGateInput(source: string, options: ReadInputOptions = {}): Promise<TextInput> {
  const input = await readTextInput(source, options);
  return { name: input.name, text: gateTextOf(input.text) };
}

export function gateTextOf(text: string): string {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') || trimmed.includes('\n')) return text;
  let record: unknown;
  try {
    record = JSON.parse(trimmed);
  } catch {
    return text;
  }
  if (
    typeof record !== 'object' ||
    record === null ||
    typeof (record as { tableId?: unknown }).tableId !== 'string'
  ) {
    return text;
  }
  const { yaml, content } = record as { yaml?: unknown; content?: unknown };
  if (typeof yaml === 'string') return yaml;
  if (typeof content === 'string') return content;
  return text;
}
