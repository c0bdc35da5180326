// The opening config.json and settings.json share (auth/config.ts, cli/settings.ts): JSON, an object, and the
// version this gds writes. A file a newer gds wrote is refused with the upgrade as its fix; anything else
// wrong is the file's own `damaged` error, which says how to repair that file.
import { CliError, ExitCode } from './errors.js';
import { jsonErrorPlace } from './json-error-place.js';

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function versionedObject(
  text: string,
  path: string,
  file: { kind: 'config' | 'settings'; version: number; damaged: (path: string, reason: string) => CliError },
): Record<string, unknown> {
  let value: unknown;
  // The byte order mark an editor may save UTF-8 with (Windows' Notepad) is no damage.
  const json = text.startsWith('\uFEFF') ? text.slice(1) : text;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw file.damaged(path, `it is not valid JSON (${jsonError((error as Error).message, json)})`);
  }
  if (!isObject(value)) throw file.damaged(path, 'it is not a JSON object');
  if (typeof value.version === 'number' && value.version > file.version) {
    throw new CliError(`${path} was written by a newer gds (${file.kind} version ${value.version}).`, {
      exitCode: ExitCode.Usage,
      code: `${file.kind}_too_new`,
      suggestion: 'Upgrade gds, or point GDS_CONFIG_DIR at another folder.',
    });
  }
  if (value.version !== file.version) throw file.damaged(path, `"version" is not ${file.version}`);
  return value;
}

/**
 * V8's JSON error without the file's text it quotes around an unexpected token (`Unexpected token 'c',
 * ..."{"token": cli_SECRET"... is not valid JSON`): a config file's text may be a token. Where V8 says no
 * place (an unexpected token, the end of the text), the line and column of the error are added.
 */
function jsonError(message: string, text: string): string {
  const reason = message.replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/su, '');
  if (/\(line \d+ column \d+\)$/.test(reason)) return reason;
  const { line, column } = jsonErrorPlace(text);
  return `${reason} at line ${line} column ${column}`;
}
