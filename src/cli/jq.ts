// `--jq EXPR`: jq itself (jq 1.8, compiled to WebAssembly by the jq-wasm package), so a CI image needs no
// jq binary. Loaded only when --jq is given. Strings come out raw (as `jq -r` and gh's --jq do), other
// values as compact JSON, one per line, written as NDJSON is (core/ndjson.ts): C1 and the format characters
// a terminal acts on as `\u` escapes, so the JSON is whole and parses wherever it goes. jq runs with -c,
// not -r, so that each line of its output is one value whose kind is known. The raw strings are stripped of
// control characters by Output when they reach a terminal, like any text.
import { escapedJson } from '../core/ndjson.js';
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

/** Runs `filter` over one JSON document; answers its output lines as --jq prints them (see printed). */
export async function runJq(json: string, filter: string): Promise<string> {
  const raw = await loadJq();
  try {
    return printed(valueLines(raw(json, filter, ['-c'])));
  } catch (error) {
    throw jqError(filter, error, ExitCode.Failure);
  }
}

/** jq -c's output: one JSON value a line (a string's line breaks are escapes in it). */
function valueLines(out: string): string[] {
  return out === '' ? [] : out.split('\n');
}

/** jq -c's values as --jq prints them: a string raw, as jq -r prints it; any other value as its compact JSON
 *  with C1 and format characters as `\u` escapes (jq writes them raw). */
function printed(lines: readonly string[]): string {
  return lines
    .map((line) => (line.startsWith('"') ? (JSON.parse(line) as string) : escapedJson(line)))
    .join('\n');
}

/** Starts the string jq answers for the record the filter failed on (a control character no JSON string
 *  holds raw), and, as jq -c writes it, the line of that string. */
const FAILURE_MARK = '\u0001gds-jq-failure\u0001';
const FAILURE_LINE = JSON.stringify(FAILURE_MARK).slice(0, -1);
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
      out = raw(lines.join('\n'), `try (${filter}) catch ("${FAILURE_MARK}" + tostring)`, ['-c']);
    } catch {
      // the filter does not compile inside try (…): once per record below says why
    }
    if (out !== undefined) {
      const values = valueLines(out);
      const at = values.findIndex((line) => line.startsWith(FAILURE_LINE));
      if (at < 0) return { text: printed(values) };
      const message = JSON.parse(values[at] ?? '""') as string;
      const said = message.slice(FAILURE_MARK.length).split('\n')[0] ?? '';
      return {
        text: printed(values.slice(0, at)),
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
