// What --json prints: each record an NDJSON line on stdout, shaped by `--json a,b`; an error one
// `{"error":{…}}` line on stderr.
import { echoedDetails } from '../core/echo.js';
import { CliError, ExitCode } from '../core/errors.js';

/**
 * A record with only the named fields, in the order named. A field of the command's list this record lacks
 * (another kind of record of the same command) is null; any other field it does not have is a usage error.
 */
export function pickFields(value: object, fields: readonly string[], listed: readonly string[]): object {
  const record = value as Record<string, unknown>;
  const unknown = fields.filter((f) => !Object.hasOwn(record, f) && !listed.includes(f));
  if (unknown.length > 0) {
    throw new CliError(`Unknown JSON field${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}.`, {
      exitCode: ExitCode.Usage,
      code: 'unknown_json_field',
      suggestion: `Available fields: ${Object.keys(record).join(', ')}.`,
      details: { unknown, available: Object.keys(record) },
    });
  }
  return Object.fromEntries(fields.map((f) => [f, Object.hasOwn(record, f) ? record[f] : null]));
}

/** The body of an error's one line under --json: its details' long values cut as its message says them. */
export function errorBody(error: CliError): object {
  return {
    error: {
      code: error.code,
      message: error.message,
      suggestion: error.suggestion ?? null,
      details: echoedDetails(error.details ?? null),
    },
  };
}
