// A token is never printed whole: errors that echo user input pass through redactError first.
import { CliError } from './errors.js';

/** `cli_abcdef…` -> `cli_…****`: enough to recognise which token, never enough to use it. */
export function maskToken(token: string): string {
  const prefix = /^[a-z]+_/i.exec(token)?.[0] ?? '';
  return `${prefix}…****`;
}

export function redactSecrets(text: string, secrets: ReadonlyArray<string | undefined>): string {
  let redacted = text;
  for (const secret of secrets) {
    if (secret === undefined || secret.length < 4) continue;
    redacted = redacted.split(secret).join(maskToken(secret));
  }
  return redacted;
}

/** The secrets a process was given: the `--token` value and SERVICE_TOKEN. */
export function secretsFrom(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): string[] {
  const index = argv.indexOf('--token');
  const flag =
    index === -1 ? argv.find((a) => a.startsWith('--token='))?.slice('--token='.length) : argv[index + 1];
  return [flag, env.SERVICE_TOKEN].filter((s): s is string => s !== undefined);
}

/** The same error with every secret of the process masked in its message. */
export function redactError(error: CliError, argv: readonly string[]): CliError {
  return new CliError(redactSecrets(error.message, secretsFrom(argv)), {
    exitCode: error.exitCode,
    code: error.code,
    suggestion: error.suggestion,
    details: error.details,
  });
}
