// `--jq EXPR`: jq itself (jq 1.8, compiled to WebAssembly by the jq-wasm package), so a CI image needs no
// jq binary. Loaded only when --jq is given. Strings come out raw (as `jq -r` and gh's --jq do), other
// values as compact JSON, one per line; control characters in the output are stripped like any text
// that reaches a terminal.
import { stripControlCharacters } from '../core/terminal-text.js';
import { awaitWithoutTierUp, withoutTierUp } from '../core/wasm-tier-up.js';
import { CliError, ExitCode } from '../core/errors.js';
import { jqLoadOptions } from './jq-load-options.js';

type Jq = (input: string, filter: string, flags: string[]) => string;

let jq: Promise<Jq> | undefined;

/**
 * One jq instance for the process, each run with V8's WebAssembly tier-up held off (core/wasm-tier-up.ts).
 * A run answers its output without the last line break; a run that fails (exit status not 0, something on
 * stderr) throws what jq said.
 */
function loadJq(): Promise<Jq> {
  jq ??= import('jq-wasm').then(async (module) => {
    const handle = await awaitWithoutTierUp(() => module.loadJq(jqLoadOptions()));
    return (input: string, filter: string, flags: string[]) => {
      const { stdout, stderr, exitCode } = withoutTierUp(() => handle.raw(input, filter, flags));
      if (exitCode !== 0 && stderr.trim() !== '') throw new Error(stderr.trim());
      return stdout.endsWith('\n') ? stdout.slice(0, -1) : stdout;
    };
  });
  return jq;
}

/** Runs `filter` over one JSON document; answers jq's output lines (without the last line break). */
export async function runJq(json: string, filter: string): Promise<string> {
  const raw = await loadJq();
  try {
    return stripControlCharacters(raw(json, filter, ['-r', '-c']));
  } catch (error) {
    throw jqError(filter, error, ExitCode.Failure);
  }
}

/** Marks, at the start of a line of jq's output, the record the filter failed on (a control character no JSON string holds raw). */
const FAILURE_MARK = '\u0001gds-jq-failure\u0001';
/** Filters whose answer for one record depends on the others when they share one jq run. */
const READS_OTHER_RECORDS = /\b(?:inputs?|input_line_number|input_filename|halt|halt_error)\b|\$__loc__/;

/**
 * Runs `filter` over several records (NDJSON lines), each on its own as jq reads a stream of documents, in
 * ONE jq run: jq compiles its builtins at every run (about 6 ms each, measured), so a list of 1,000 records
 * no longer costs 1,000 runs. Answers the output of the records before the first that fails, and that
 * failure. A filter that reads other inputs or halts runs once per record, as before.
 */
export async function runJqOver(
  lines: readonly string[],
  filter: string,
): Promise<{ text: string; failure?: CliError }> {
  if (lines.length > 1 && !READS_OTHER_RECORDS.test(filter)) {
    const raw = await loadJq();
    let out: string | undefined;
    try {
      out = raw(lines.join('\n'), `try (${filter}) catch ("${FAILURE_MARK}" + tostring)`, ['-r', '-c']);
    } catch {
      // the filter does not compile inside try (…): once per record below says why
    }
    if (out !== undefined) {
      const at = out.startsWith(FAILURE_MARK) ? 0 : out.indexOf(`\n${FAILURE_MARK}`);
      if (at < 0) return { text: stripControlCharacters(out) };
      const said = out.slice(out.indexOf(FAILURE_MARK, at) + FAILURE_MARK.length).split('\n')[0] ?? '';
      return {
        text: stripControlCharacters(out.slice(0, at)),
        failure: jqError(filter, new Error(`jq: error: ${said}`), ExitCode.Failure),
      };
    }
  }
  const texts: string[] = [];
  for (const line of lines) {
    try {
      const text = await runJq(line, filter);
      if (text !== '') texts.push(text);
    } catch (error) {
      return { text: texts.join('\n'), failure: error as CliError };
    }
  }
  return { text: texts.join('\n') };
}

/**
 * A filter jq cannot compile is a usage error, said before the command calls the service. jq compiles and
 * runs in one call, so it runs once on `null`: what fails there at run time (`.a | ascii_downcase`) is
 * not a compile error and may well work on the records.
 */
export async function checkJq(filter: string): Promise<void> {
  const raw = await loadJq();
  try {
    raw('null', filter, ['-c']);
  } catch (error) {
    if (/compile error/.test(String((error as Error).message))) throw jqError(filter, error, ExitCode.Usage);
  }
}

function jqError(filter: string, error: unknown, exitCode: 1 | 2): CliError {
  const said = String((error as Error).message).trim();
  return new CliError(`--jq ${filter}: ${stripControlCharacters(said)}`, {
    exitCode,
    code: exitCode === ExitCode.Usage ? 'invalid_jq' : 'jq_failed',
    suggestion:
      'jq filters each record on its own, e.g. --jq .id or --jq \'select(.state == "CERTIFIED") | .name\'.',
  });
}
