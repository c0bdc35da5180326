// A token is never printed whole: errors that echo user input pass through redactError first.
import { redactJson, redactSecrets } from '../core/redact.js';
import { CliError } from './errors.js';

/** Flags and environment variables that carry a secret into gds. */
const SECRET_FLAGS = ['--token', '--refresh-token'] as const;
const SECRET_VARIABLES = ['SERVICE_TOKEN', 'GDS_REFRESH_TOKEN'] as const;

/** The secrets a process was given: the `--token`/`--refresh-token` values, SERVICE_TOKEN and
 *  GDS_REFRESH_TOKEN. */
export function secretsFrom(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): string[] {
  const given = SECRET_FLAGS.map((flag) => {
    const index = argv.indexOf(flag);
    return index === -1
      ? argv.find((a) => a.startsWith(`${flag}=`))?.slice(flag.length + 1)
      : argv[index + 1];
  });
  return [...given, ...SECRET_VARIABLES.map((name) => env[name])].filter(
    (s): s is string => s !== undefined && s !== '-',
  );
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
