// A token is never printed whole: errors that echo user input pass through redactError first.
import { redactJson, redactSecrets } from '../core/redact.js';
import { CliError } from '../core/errors.js';
import { secretsFrom } from './process-title.js';

export { scrubProcessTitle, secretsFrom } from './process-title.js';

/** The same error with every secret of the process masked in its message, suggestion and details. */
export function redactError(error: CliError, argv: readonly string[]): CliError {
  const secrets = secretsFrom(argv);
  return new CliError(redactSecrets(error.message, secrets), {
    exitCode: error.exitCode,
    code: error.code,
    suggestion: error.suggestion === undefined ? undefined : redactSecrets(error.suggestion, secrets),
    details: redactJson(error.details, secrets),
  });
}

/**
 * What gds does not print itself still reaches stderr: oclif's debug log (`DEBUG=*`) prints argv and
 * process.argv whole, plugin-not-found echoes a stray argument (`gds auth set cli_…`, the flag forgotten).
 * Every write to stderr masks the secrets the process was given and every token the service issues.
 * stdout is left alone: `tokens issue` prints its tokens there on purpose.
 */
export function redactStandardError(argv: readonly string[]): void {
  const secrets = secretsFrom(argv);
  const stderr = process.stderr;
  const write = stderr.write.bind(stderr) as (chunk: unknown, ...rest: unknown[]) => boolean;
  stderr.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk === 'string') return write(redactSecrets(chunk, secrets), ...rest);
    if (chunk instanceof Uint8Array) {
      return write(redactSecrets(Buffer.from(chunk).toString('utf8'), secrets), ...rest);
    }
    return write(chunk, ...rest);
  }) as typeof stderr.write;
}
