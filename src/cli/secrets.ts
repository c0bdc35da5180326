// A token is never printed whole: errors that echo user input pass through redactError first.
import { redactJson, redactSecrets } from '../core/redact.js';
import { CliError } from './errors.js';

/** The secrets a process was given: the `--token` value and SERVICE_TOKEN. */
export function secretsFrom(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): string[] {
  const index = argv.indexOf('--token');
  const flag =
    index === -1 ? argv.find((a) => a.startsWith('--token='))?.slice('--token='.length) : argv[index + 1];
  return [flag, env.SERVICE_TOKEN].filter((s): s is string => s !== undefined);
}

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
