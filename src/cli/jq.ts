// `--jq EXPR`: jq itself (jq 1.7, compiled to WebAssembly by the jq-wasm package), so a CI image needs no
// jq binary. Loaded only when --jq is given. Strings come out raw (as `jq -r` and gh's --jq do), other
// values as compact JSON, one per line; control characters in the output are stripped like any text
// that reaches a terminal.
import { stripControlCharacters } from '../core/terminal-text.js';
import { CliError, ExitCode } from './errors.js';

type Jq = (input: string, filter: string, flags: string[]) => Promise<string>;

let jq: Promise<Jq> | undefined;

function loadJq(): Promise<Jq> {
  jq ??= import('jq-wasm').then((module) => module.raw);
  return jq;
}

/** Runs `filter` over one JSON document; answers jq's output lines (without the last line break). */
export async function runJq(json: string, filter: string): Promise<string> {
  const raw = await loadJq();
  try {
    return stripControlCharacters(await raw(json, filter, ['-r', '-c']));
  } catch (error) {
    throw jqError(filter, error, ExitCode.Failure);
  }
}

/**
 * A filter jq cannot compile is a usage error, said before the command calls the service. jq compiles and
 * runs in one call, so it runs once on `null`: what fails there at run time (`.a | ascii_downcase`) is
 * not a compile error and may well work on the records.
 */
export async function checkJq(filter: string): Promise<void> {
  const raw = await loadJq();
  try {
    await raw('null', filter, ['-c']);
  } catch (error) {
    if (/compile error/.test(String((error as Error).message))) throw jqError(filter, error, ExitCode.Usage);
  }
}

function jqError(filter: string, error: unknown, exitCode: 1 | 2): CliError {
  const said = String((error as Error).message)
    .replace(/^Failed to execute raw query: /, '')
    .trim();
  return new CliError(`--jq ${filter}: ${stripControlCharacters(said)}`, {
    exitCode,
    code: exitCode === ExitCode.Usage ? 'invalid_jq' : 'jq_failed',
    suggestion:
      'jq filters each record on its own, e.g. --jq .id or --jq \'select(.state == "CERTIFIED") | .name\'.',
  });
}
