// A token is never printed whole: errors that echo user input pass through redactError first.
import { fstatSync, statSync } from 'node:fs';
import { redactJson, redactSecrets, secretsOfRun } from '../core/redact.js';
import { CliError } from '../core/errors.js';
import type { Lines } from '../core/terminal-text.js';
import { secretsFrom } from './process-title.js';

export { scrubProcessTitle, secretsFrom } from './process-title.js';

/** The same error with every secret of the run masked in its message, suggestion and details. */
export function redactError(error: CliError, argv: readonly string[]): CliError {
  const secrets = withRunSecrets(secretsFrom(argv));
  const redacted = (text: string | Lines) =>
    typeof text === 'string'
      ? redactSecrets(text, secrets)
      : text.map((line) => redactSecrets(line, secrets));
  return new CliError(redacted(error.given.message), {
    exitCode: error.exitCode,
    code: error.code,
    suggestion: error.given.suggestion === undefined ? undefined : redacted(error.given.suggestion),
    details: redactJson(error.details, secrets),
  });
}

/** `given` (the secrets of the command line and environment) and those the run came to hold since: the
 *  tokens its clients sent (a profile's token is in no flag or variable). */
function withRunSecrets(given: readonly string[]): string[] {
  return withUrlForms([...given, ...secretsOfRun()]);
}

/**
 * Each secret, and the forms a URL gives one that holds other characters than letters, digits and `-._~`: a
 * token given where an id goes (`gds gate result "$SERVICE_TOKEN"`) is percent-encoded in the request's path
 * or query, which errors, `details.request` and GDS_DEBUG's lines echo (`opaque%2BQwzr%2F…` is the token).
 */
function withUrlForms(secrets: readonly string[]): string[] {
  const forms = new Set(secrets);
  for (const secret of secrets) {
    if (/^[\w.~-]*$/.test(secret)) continue;
    try {
      forms.add(encodeURIComponent(secret));
      forms.add(encodeURI(secret));
      forms.add(new URLSearchParams({ s: secret }).toString().slice(2));
    } catch {
      // A lone surrogate has no URL form (URIError): no request could carry it either.
    }
  }
  return [...forms];
}

/**
 * What gds does not print itself still reaches stderr: oclif's debug log (`DEBUG=*`) prints argv and
 * process.argv whole, plugin-not-found echoes a stray argument (`gds auth set cli_…`, the flag forgotten).
 * Every write to stderr masks the secrets the process was given, those the run came to hold by the time of
 * the write (a profile's token its client sent, said back by a debug line or a warning), as an error's
 * message does, and every token the service issues.
 * stdout is left alone: `tokens issue` prints its tokens there on purpose.
 * Node makes process.stderr on its first use (a stream, and for a pipe or a file the module behind it): the
 * masking comes with that first use, so a run that writes nothing to stderr never makes it. What it buys:
 * `list --json` with stderr not a terminal -0.5 to -1.0 ms (docs/bench.md).
 */
export function redactStandardError(argv: readonly string[]): void {
  const secrets = secretsFrom(argv);
  const masked = (stderr: NodeJS.WriteStream): NodeJS.WriteStream => {
    const write = stderr.write.bind(stderr) as (chunk: unknown, ...rest: unknown[]) => boolean;
    stderr.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (typeof chunk === 'string') return write(redactSecrets(chunk, withRunSecrets(secrets)), ...rest);
      if (chunk instanceof Uint8Array) {
        return write(redactSecrets(Buffer.from(chunk).toString('utf8'), withRunSecrets(secrets)), ...rest);
      }
      return write(chunk, ...rest);
    }) as typeof stderr.write;
    return stderr;
  };
  const given = Object.getOwnPropertyDescriptor(process, 'stderr');
  const make = given?.get;
  if (make === undefined || given?.configurable !== true) {
    masked(process.stderr);
    return;
  }
  let stream: NodeJS.WriteStream | undefined;
  nodesStderr = make === nodeStderrGetter;
  Object.defineProperty(process, 'stderr', {
    configurable: true,
    enumerable: given.enumerable ?? true,
    get: () => (stream ??= masked(make.call(process) as NodeJS.WriteStream)),
  });
}

/** Node's own getter of process.stderr (a test's stand-in replaces it for its runs). */
const nodeStderrGetter = Object.getOwnPropertyDescriptor(process, 'stderr')?.get;
/** Whether the process.stderr that redactStandardError masks is Node's own. */
let nodesStderr = false;

/**
 * Whether stderr is a terminal, as process.stderr.isTTY says, without making Node's stream for the answer when
 * file descriptor 2 cannot be a terminal: a pipe, a file, /dev/null (a terminal is a character device).
 */
export function stderrIsTerminal(): boolean {
  if (nodesStderr && process.platform !== 'win32' && !mayBeTerminal(2)) return false;
  return process.stderr.isTTY === true;
}

function mayBeTerminal(fd: number): boolean {
  try {
    const stat = fstatSync(fd);
    return stat.isCharacterDevice() && stat.rdev !== statSync('/dev/null').rdev;
  } catch {
    return true;
  }
}
