// Reads a text input named on the command line: a path, or `-` for stdin. Every failure is a usage
// error (exit 2) that says what was wrong and what to do instead. What gds parses (an artifact, a
// gate1.yml) is read bounded: a regular file only (a FIFO, a device or a symlink to one would block or
// never end), no more bytes than the service takes, UTF-8 only, and within the service's parse bounds
// (src/core/artifact-bounds.ts) before any parser sees it.
import { close, constants, fstat, open, read } from 'node:fs';
import { promisify } from 'node:util';
import {
  ARTIFACT_BODY_LIMIT_BYTES,
  artifactBoundsRefusal,
  gate1BoundsRefusal,
  MAX_GATE1_CHARACTERS,
  REQUEST_BODY_LIMIT_BYTES,
} from '../core/artifact-bounds.js';
import type { BoundsRefusal } from '../core/artifact-bounds.js';
import { countText } from '../core/count-text.js';
import { firstInvalidUtf8 } from '../core/utf8.js';
import { CliError, ExitCode } from '../core/errors.js';
import { echoedPath, withPathEchoed } from '../core/echo.js';

export { firstInvalidUtf8 };

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

/**
 * Reads a text input (a regular file, or stdin for `-`) bounded as readBoundedText does: up to the service's
 * request body limit unless `maxBytes` says less (a token, a bundle), so a FIFO, /dev/zero or an endless pipe
 * is refused or cut off with exit 2 naming the limit instead of filling memory.
 */
export async function readTextInput(
  source: string,
  options: ReadInputOptions & Partial<Pick<BoundedInputOptions, 'maxBytes' | 'what' | 'limit'>> = {},
): Promise<TextInput> {
  return readBoundedText(source, {
    ...options,
    maxBytes: options.maxBytes ?? REQUEST_BODY_LIMIT_BYTES,
    what: options.what ?? 'the input',
  });
}

export interface BoundedInputOptions extends ReadInputOptions {
  /** The most bytes read; one more is a usage error naming the limit. */
  maxBytes: number;
  /** What the input is, for messages ("the artifact", "the gate1.yml"). */
  what: string;
  /** The limit as messages name it, when it is not `maxBytes` bytes (e.g. "262,144 characters"). */
  limit?: string;
}

/**
 * Reads a regular file (or stdin for `-`) of at most `maxBytes` bytes of UTF-8. A FIFO, a socket or a device
 * (directly or through a symlink) is refused without waiting on it; a file over the limit is refused from its
 * size, before it is read; bytes that are not UTF-8 are refused with their offset.
 */
export async function readBoundedText(source: string, options: BoundedInputOptions): Promise<TextInput> {
  const flag = options.flag ?? '-f';
  const name = source === '-' ? '<stdin>' : source;
  const bytes =
    source === '-'
      ? await readStdinBytes(flag, options.stdin ?? process.stdin, options)
      : await readRegularFile(source, flag, options);
  const invalid = firstInvalidUtf8(bytes);
  if (invalid !== undefined) throw notUtf8Error(name, bytes, invalid, options.what);
  return { name, text: bytes.toString('utf8') };
}

/** The refusal of an input (`name`, `<stdin>` for stdin) whose byte `invalid` is not UTF-8; `what` names it in the fix. */
export function notUtf8Error(name: string, bytes: Buffer, invalid: number, what: string): CliError {
  const line = countNewlines(bytes, invalid) + 1;
  return new CliError(
    `${echoedPath(name)} is not UTF-8: byte ${invalid} (line ${line}) is 0x${hex(bytes[invalid] ?? 0)}, which does not begin or continue a UTF-8 character.`,
    {
      exitCode: ExitCode.Usage,
      code: 'input_not_utf8',
      suggestion: `Save ${what} as UTF-8 (e.g. iconv -f latin1 -t utf-8), then run again; nothing was sent.`,
      details: { file: name, byteOffset: invalid, line },
    },
  );
}

/**
 * Reads an artifact (`gds push`, `gds definitions push`, `gds plan`) for `kind` (`sql`, `yaml`, `json`) the
 * way readBoundedText does, then refuses it when the service would refuse it unparsed (checkArtifactText).
 */
export async function readArtifactText(
  source: string,
  kind: string | undefined,
  options: ReadInputOptions = {},
): Promise<TextInput> {
  const bounds = { maxBytes: ARTIFACT_BODY_LIMIT_BYTES, what: 'the artifact' };
  const input = await readBoundedText(source, { ...options, ...bounds });
  // The limit is the request body's, where the text is a JSON string: its quotes, backslashes, line ends and
  // control characters are escaped there, so a file under the limit may be over it as sent.
  const sentBytes = Buffer.byteLength(JSON.stringify(input.text));
  if (sentBytes > bounds.maxBytes) {
    throw tooLarge(input.name, bounds, Buffer.byteLength(input.text), sentBytes);
  }
  checkArtifactText(input.name, kind, input.text);
  return input;
}

/**
 * Throws the usage error (exit 2, `artifact_too_large`, the limit named) for an artifact text the service
 * would refuse before parsing it: more columns than PostgreSQL allows, or too big to parse quickly. Call it
 * before parsing any artifact text gds built or read itself.
 */
export function checkArtifactText(name: string, kind: string | undefined, text: string): void {
  boundsError(name, artifactBoundsRefusal(kind, text));
}

/**
 * Reads a gate1.yml (`gate validate`, `gate apply`, either side of `gate diff`) bounded as the service bounds
 * it: every command refuses the same file with the same message. The NDJSON record of `gate suggest --json`
 * / `gate get --json` gives its YAML (gateTextOf).
 */
export async function readGate1Text(source: string, options: ReadInputOptions = {}): Promise<TextInput> {
  const input = await readBoundedText(source, {
    ...options,
    // A character is at most 4 bytes of UTF-8, 6 bytes JSON-escaped in a record: a bigger input is over unread.
    maxBytes: 6 * MAX_GATE1_CHARACTERS,
    what: 'a gate1.yml',
    limit: `${countText(MAX_GATE1_CHARACTERS)} characters`,
  });
  const text = gateTextOf(input.text);
  boundsError(input.name, gate1BoundsRefusal(text));
  return { name: input.name, text };
}

/**
 * Throws the usage error (exit 2, `gate1_too_large`, the limit named) for a gate1.yml text the service would
 * refuse before parsing it, as readGate1Text refuses a file: call it before validating a gate1.yml gds built
 * itself (a dbt model's, `gds plan`) or read otherwise.
 */
export function checkGate1Text(name: string, text: string): void {
  boundsError(name, gate1BoundsRefusal(text));
}

function boundsError(name: string, refusal: BoundsRefusal | undefined): void {
  if (refusal === undefined) return;
  throw new CliError(`${echoedPath(name)}: ${refusal.message}`, {
    exitCode: ExitCode.Usage,
    code: refusal.code,
    suggestion: 'The service refuses it as well; nothing was sent. Split it or shorten it.',
    details: { file: name, ...refusal.details },
  });
}

/** `sentBytes`: the size of the input as a request sends it, JSON-escaped, when that is what is over. */
function tooLarge(
  name: string,
  options: Pick<BoundedInputOptions, 'maxBytes' | 'what' | 'limit'>,
  size?: number,
  sentBytes?: number,
): CliError {
  const found =
    size === undefined
      ? ''
      : sentBytes === undefined
        ? `${countText(size)} bytes, `
        : `${countText(size)} bytes, ${countText(sentBytes)} as the request's JSON (its quotes, backslashes and line ends escaped), `;
  return inputTooLarge(name, found, options, {
    ...(size === undefined ? {} : { bytes: size }),
    ...(sentBytes === undefined ? {} : { sentBytes }),
  });
}

/**
 * Exit 2 (`input_too_large`, nothing sent): `name` is `found` ("12 bytes, ", or "" when unknown) over the
 * limit; `reader` is who reads at most that much (gds, or the service when only the request is over).
 */
export function inputTooLarge(
  name: string,
  found: string,
  bound: Pick<BoundedInputOptions, 'maxBytes' | 'what' | 'limit'> & { reader?: string },
  sizes: { bytes?: number; sentBytes?: number },
): CliError {
  const limit = bound.limit ?? `${countText(bound.maxBytes)} bytes`;
  return new CliError(`${echoedPath(name)} is ${found}over the limit of ${limit} for ${bound.what}.`, {
    exitCode: ExitCode.Usage,
    code: 'input_too_large',
    suggestion: `${bound.reader ?? 'gds reads'} at most ${limit} for ${bound.what}; nothing was sent. Split it or shorten it.`,
    details: { file: name, ...sizes, limit: bound.maxBytes },
  });
}

const READ_CHUNK = 64 * 1024;

// node:fs's callbacks, not node:fs/promises: that module loads readline and the REPL's history at its top
// (+1 MiB resident at every `gate validate -f`, measured).
const file = {
  open: promisify(open),
  stat: promisify(fstat),
  read: promisify(read),
  close: promisify(close),
};

async function readRegularFile(path: string, flag: string, options: BoundedInputOptions): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of regularFileChunks(path, { ...options, flag })) {
    chunks.push(chunk);
    total += chunk.length;
  }
  return Buffer.concat(chunks, total);
}

/**
 * The bytes of a regular file of at most `maxBytes` bytes, chunk by chunk (each a new Buffer), refused as
 * readBoundedText refuses it (not a regular file, over the limit: from its size, or as it grows). Bytes are
 * not checked for UTF-8 here.
 */
export async function* regularFileChunks(path: string, options: BoundedInputOptions): AsyncGenerator<Buffer> {
  const flag = options.flag ?? '-f';
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO does not wait for a writer (the type is checked next); no effect on a file.
    fd = await file.open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    throw inputError(path, flag, error);
  }
  try {
    const info = await file.stat(fd).catch((error: unknown) => {
      throw inputError(path, flag, error);
    });
    if (info.isDirectory()) throw inputError(path, flag, Object.assign(new Error(''), { code: 'EISDIR' }));
    if (!info.isFile()) {
      throw new CliError(
        `${echoedPath(path)} is ${fileKind(info)}, not a regular file: gds reads ${options.what} from a file.`,
        {
          exitCode: ExitCode.Usage,
          code: 'input_not_a_file',
          suggestion: `Give ${flag} a regular file, or pipe the text in with ${flag} - (read up to ${countText(options.maxBytes)} bytes).`,
        },
      );
    }
    if (info.size > options.maxBytes) throw tooLarge(path, options, info.size);
    // The file may grow after the stat: read no more than one byte past the limit.
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(READ_CHUNK);
      let bytesRead: number;
      try {
        ({ bytesRead } = await file.read(fd, chunk, 0, READ_CHUNK, null));
      } catch (error) {
        throw inputError(path, flag, error);
      }
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > options.maxBytes) throw tooLarge(path, options);
      yield chunk.subarray(0, bytesRead);
    }
  } finally {
    await file.close(fd);
  }
}

function fileKind(info: {
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}): string {
  if (info.isFIFO()) return 'a FIFO (named pipe)';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice()) return 'a character device';
  if (info.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

async function readStdinBytes(
  flag: string,
  stdin: NodeJS.ReadableStream & { isTTY?: boolean },
  options: BoundedInputOptions,
): Promise<Buffer> {
  if (stdin.isTTY === true) throw stdinIsTerminal(flag);
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stdin) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Buffer);
    chunks.push(bytes);
    total += bytes.length;
    if (total > options.maxBytes) {
      (stdin as Partial<NodeJS.ReadStream>).destroy?.();
      throw tooLarge('<stdin>', options);
    }
  }
  return Buffer.concat(chunks, total);
}

function countNewlines(bytes: Buffer, end: number): number {
  let lines = 0;
  for (let at = bytes.indexOf(10); at !== -1 && at < end; at = bytes.indexOf(10, at + 1)) lines++;
  return lines;
}

const hex = (byte: number) => byte.toString(16).toUpperCase().padStart(2, '0');

function stdinIsTerminal(flag: string): CliError {
  return new CliError(`${flag} - reads from stdin, but stdin is a terminal with nothing piped in.`, {
    exitCode: ExitCode.Usage,
    code: 'stdin_is_terminal',
    suggestion: `Pipe the text in (e.g. \`cat gate1.yml | gds … ${flag} -\`) or give a file path.`,
  });
}

function inputError(path: string, flag: string, error: unknown): CliError {
  const code = (error as NodeJS.ErrnoException).code;
  // The path as said back; the system's message names it whole (ENAMETOOLONG of a 100 KB name).
  const source = echoedPath(path);
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
        `Cannot read ${source}: ${withPathEchoed((error as Error).message, path)}`,
        'input_unreadable',
        `Check the path given to ${flag}.`,
      );
  }
}

/**
 * A gate1.yml given with -f: the text itself, or the one NDJSON record `gds gate suggest --json` (its
 * `yaml`) or `gds gate get --json` (its `content`) printed, so the README's pipes work under GDS_JSON=1 too.
 */
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
