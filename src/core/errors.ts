// Exit codes and the one error type commands, services and auth throw; rendered once, at the top (src/cli).
// The codes are the README's (Output and exit codes); `gate diff` uses 1 for "different".
import { Lines, serviceMessageLines } from './terminal-text.js';

export const ExitCode = {
  Ok: 0,
  Failure: 1,
  Usage: 2,
  Unauthenticated: 3,
  Forbidden: 4,
  NotFound: 5,
  Conflict: 6,
  Refused: 7,
  RateLimited: 8,
  Unavailable: 9,
  Interrupted: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export interface CliErrorOptions {
  exitCode: ExitCodeValue;
  /** snake_case, the `code` of the `{"error":{…}}` line; defaults from the exit code. */
  code?: string;
  /** What to do next, printed under the error in human mode: on one line, unless gds wrote its lines (`lines`). */
  suggestion?: string | Lines;
  details?: unknown;
}

const defaultCodes: Record<ExitCodeValue, string> = {
  0: 'ok',
  1: 'failed',
  2: 'usage',
  3: 'unauthenticated',
  4: 'forbidden',
  5: 'not_found',
  6: 'conflict',
  7: 'refused',
  8: 'rate_limited',
  9: 'unavailable',
  130: 'interrupted',
};

export class CliError extends Error {
  readonly exitCode: ExitCodeValue;
  readonly code: string;
  readonly suggestion: string | undefined;
  readonly details: unknown;
  /** The message and suggestion as given: a plain string (read on one line), or the lines gds wrote. */
  readonly given: { readonly message: string | Lines; readonly suggestion: string | Lines | undefined };

  /** `message` and the suggestion as --json says them (a service's line breaks kept); as lines to a person. */
  constructor(message: string | Lines, options: CliErrorOptions) {
    super(String(message));
    this.name = 'CliError';
    this.exitCode = options.exitCode;
    this.code = options.code ?? defaultCodes[options.exitCode];
    this.suggestion = options.suggestion === undefined ? undefined : String(options.suggestion);
    this.details = options.details;
    this.given = { message, suggestion: options.suggestion };
  }

  /** The message as a person reads it: one line, or the lines gds wrote (a service's string never starts one). */
  get messageLines(): Lines {
    return shownAsLines(this.given.message);
  }

  /** The suggestion as a person reads it, as the message. */
  get suggestionLines(): Lines | undefined {
    return this.given.suggestion === undefined ? undefined : shownAsLines(this.given.suggestion);
  }
}

/** A plain string on one line, whatever it holds (an SQL error's caret block under it); gds's own lines as they are. */
function shownAsLines(text: string | Lines): Lines {
  return text instanceof Lines ? text : serviceMessageLines(text);
}

/** Maps an HTTP status of the service (e.g. `ApiError.status`) to the exit code a command ends with. */
export function exitCodeForStatus(status: number): ExitCodeValue {
  switch (status) {
    case 400:
    case 422:
      return ExitCode.Refused;
    case 401:
      return ExitCode.Unauthenticated;
    case 403:
      return ExitCode.Forbidden;
    case 404:
      return ExitCode.NotFound;
    case 409:
    case 412:
      return ExitCode.Conflict;
    case 429:
      return ExitCode.RateLimited;
    default:
      if (status >= 500 || status === 0) return ExitCode.Unavailable;
      if (status >= 200 && status < 300) return ExitCode.Ok;
      return ExitCode.Failure;
  }
}

/** `error` said again in the person's terms (the table as they named it, the file they gave); the rest kept. */
export function restated(
  error: CliError,
  change: { message?: string | Lines; suggestion?: string | Lines },
): CliError {
  return new CliError(change.message ?? error.given.message, {
    exitCode: error.exitCode,
    code: error.code,
    details: error.details,
    suggestion: change.suggestion ?? error.given.suggestion,
  });
}
