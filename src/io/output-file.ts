// Writes a file a command produces (`gate get -o`, `env promote --bundle-out`) atomically: the text goes
// to a temporary file beside the target, which is then linked (no --force: fails if the target exists,
// so nothing is overwritten even in a race) or renamed (--force) into place. A reader never sees half.
// The mode is the most the file gets: the umask takes away from it (no chmod after), as for any tool, and so
// does the mode of a file it replaces (--force). A process
// that exits meanwhile (Ctrl-C exits 130 at once) removes the temporary file as it exits.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { link, lstat, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { CliError, ExitCode } from '../core/errors.js';
import { echoedPath, withPathEchoed } from '../core/echo.js';

export interface WriteOptions {
  force: boolean;
  /** Permission bits of the new file before the umask (default 0644; 0600 for a secret or a bundle). */
  mode?: number;
  /** The flag that named the file, for messages (`-o`, `--bundle-out`). */
  flag: string;
  /** A file name to suggest when the path is a folder (`gate1.yml`). */
  example?: string;
}

export async function writeOutputFile(path: string, text: string, options: WriteOptions): Promise<void> {
  await refuseFolder(path, options.flag, options.example ?? 'out');
  try {
    await writeFileAtomically(path, text, { mode: options.mode ?? 0o644, overwrite: options.force });
  } catch (error) {
    throw writeError(path, options, error);
  }
}

/**
 * The file-system half of writeOutputFile, for a command that says its own errors (quarantine open): throws
 * what the file system threw (EEXIST when the target exists and `overwrite` is false), leaving no temporary
 * file behind, nor when the process exits meanwhile.
 */
export async function writeFileAtomically(
  path: string,
  text: string,
  options: { mode: number; overwrite: boolean },
): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  // A file replaced keeps what its mode withheld: `-o gate1.yml --force` over a file made private (0600)
  // stays private, and a secret (0600) written over a readable file is not readable. A symbolic link is
  // replaced itself (rename), so what it points at says nothing.
  const replaced = options.overwrite ? await lstat(path).catch(() => undefined) : undefined;
  const mode = replaced?.isFile() === true ? options.mode & replaced.mode & 0o777 : options.mode;
  const dropTemp = () => rmSync(temp, { force: true });
  process.once('exit', dropTemp);
  try {
    const handle = await open(temp, 'wx', mode).catch((error: unknown) => {
      throw aboutTarget(error, temp, path);
    });
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
      await handle.close();
      if (options.overwrite) {
        await rename(temp, path);
      } else {
        await link(temp, path);
        await rm(temp, { force: true });
      }
    } catch (error) {
      await handle.close().catch(() => undefined);
      await rm(temp, { force: true });
      throw error;
    }
  } finally {
    process.off('exit', dropTemp);
  }
}

/**
 * What failed to create the temporary file, said of `path`, which the user named: the temporary name means
 * nothing to them. A folder that does not exist (`-o reports/missing/out.json`) is said in so many words.
 */
function aboutTarget(error: unknown, temp: string, path: string): unknown {
  const failure = error as NodeJS.ErrnoException;
  if (failure.path !== temp) return error;
  const message =
    failure.code === 'ENOENT'
      ? `the folder ${echoedPath(dirname(path))} does not exist`
      : failure.message.replaceAll(temp, path);
  return Object.assign(new Error(message), { code: failure.code, path });
}

function writeError(path: string, { flag, example }: WriteOptions, error: unknown): CliError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EISDIR') return folderError(path, flag, example ?? 'out');
  if (code === 'EEXIST') {
    return new CliError(`${echoedPath(path)} already exists; it was left as it is.`, {
      exitCode: ExitCode.Usage,
      code: 'output_exists',
      suggestion: `Pass --force to replace it, or give ${flag} another path.`,
    });
  }
  return new CliError(`Cannot write ${echoedPath(path)}: ${withPathEchoed((error as Error).message, path)}`, {
    exitCode: ExitCode.Usage,
    code: 'output_unwritable',
    suggestion: `Check that the folder of ${flag} exists and is writable.`,
  });
}

/**
 * `-o -` (and `--bundle-out -`): true when the content goes to stdout instead of a file, as `-f -` reads
 * stdin. Under --json stdout carries NDJSON records only, so the raw content cannot go there: exit 2.
 */
export function writesToStdout(path: string | undefined, options: { flag: string; json: boolean }): boolean {
  if (path !== '-') return false;
  if (options.json) {
    throw new CliError(
      `${options.flag} - writes the file to stdout, which --json keeps for NDJSON records.`,
      {
        exitCode: ExitCode.Usage,
        code: 'stdout_taken',
        suggestion: `Drop --json to pipe the file, or give ${options.flag} a file path to get a JSON record.`,
      },
    );
  }
  return true;
}

/** Exit 2 when `path` is a folder (a file would never be written there, with --force or without). */
export async function refuseFolder(path: string, flag: string, example: string): Promise<void> {
  if ((await lstat(path).catch(() => undefined))?.isDirectory() === true)
    throw folderError(path, flag, example);
}

/** A folder named where a file goes (`-o DIR`): refused, whatever --force says; `example` is a file name
 *  that would fit there (`orders.sql`). */
export function folderError(path: string, flag: string, example: string): CliError {
  return new CliError(`${echoedPath(path)} is a folder; ${flag} takes the path of a file.`, {
    exitCode: ExitCode.Usage,
    code: 'output_is_folder',
    suggestion: `Give ${flag} a file path, such as ${echoedPath(join(path, example))}.`,
  });
}
