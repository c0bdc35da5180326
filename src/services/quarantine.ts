// `gds quarantine open`: the table's DDL into a local file. The file name the service suggests is reduced
// to a safe base name (it can never point outside the folder), an existing file is kept unless `force`,
// and the file appears whole or not at all (io/output-file.ts writeFileAtomically: a temporary file, then link
// or rename, removed if gds exits meanwhile).
import { resolve } from 'node:path';
import { CliError, ExitCode } from '../core/errors.js';
import { refuseFolder, writeFileAtomically } from '../io/output-file.js';
import { stripControlCharacters } from '../core/terminal-text.js';
import type { ApiClient } from '../client/index.js';
import type { TableDdl } from '../client/areas/tables.js';
import { echoedPath, withPathEchoed } from '../core/echo.js';

/**
 * A plain `<name>.sql` from whatever the service sent: the last path segment only, no control or
 * path characters, no leading dots; `fallback` (the table id) when nothing usable is left.
 */
export function safeSqlFileName(suggested: string, fallback: string): string {
  const lastSegment = suggested.split(/[\\/]/).pop() ?? '';
  const cleaned = stripControlCharacters(lastSegment)
    .replace(/[\n\t]/g, '')
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/\.sql$/i, '')
    .replace(/^[.]+/, '');
  const stem = cleaned.replace(/\.+$/, '') || fallback.replace(/[^A-Za-z0-9_-]/g, '_') || 'table';
  return `${stem}.sql`;
}

export interface OpenDdlOptions {
  /** `-o`: the path to write, as the user gave it; else the safe name in `cwd`. */
  output?: string | undefined;
  force?: boolean | undefined;
  cwd?: string;
}

export interface OpenedDdl {
  path: string;
  table: TableDdl;
}

export async function openQuarantinedDdl(
  client: Pick<ApiClient, 'tables'>,
  tableId: string,
  options: OpenDdlOptions = {},
): Promise<OpenedDdl> {
  const table = await client.tables.ddl(tableId);
  const cwd = options.cwd ?? process.cwd();
  const fileName = safeSqlFileName(table.fileName, table.tableId);
  const path = resolve(cwd, options.output ?? fileName);
  if (options.output !== undefined) await refuseFolder(path, '-o', fileName);
  const content = table.ddl.endsWith('\n') ? table.ddl : `${table.ddl}\n`;
  await writeAtomically(path, content, options.force === true);
  return { path, table };
}

async function writeAtomically(path: string, content: string, overwrite: boolean): Promise<void> {
  try {
    // link() fails when the target exists, so a file that appeared meanwhile is never overwritten.
    await writeFileAtomically(path, content, { mode: 0o644, overwrite });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new CliError(`${echoedPath(path)} already exists; it was left as it is.`, {
        exitCode: ExitCode.Usage,
        code: 'file_exists',
        suggestion: 'Pass --force to overwrite it, or -o <file> to write elsewhere.',
      });
    }
    throw writeFailure(path, error);
  }
}

function writeFailure(path: string, error: unknown): CliError {
  return new CliError(`Cannot write ${echoedPath(path)}: ${withPathEchoed((error as Error).message, path)}`, {
    exitCode: ExitCode.Usage,
    code: 'output_unwritable',
    suggestion: 'Check that the folder exists and is writable, or pass -o <file>.',
  });
}
