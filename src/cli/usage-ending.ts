// Whether this run ended with a usage error (a word that names no command, a flag that is none), whatever code
// it exits with: 2, or 1 under plan --detailed-exitcode, whose 2 means changes, for a flag written as meant
// (`--Detailed-exitcode`) or through an alias too. The npm package's bin/run.js keeps no code cache of such a
// run (the bundle exports usageErrorEnded): the cache would be named by a mistyped word, or hold only the code
// of a run that stopped at its flags, and a cache V8 takes is never written again.
import { ExitCode } from '../core/errors.js';
import type { CliError } from '../core/errors.js';

let ended = false;

/** The failure as it is met, before --detailed-exitcode renumbers it: a usage error is noted by its code. */
export function noteFailure(failure: CliError): CliError {
  if (failure.exitCode === ExitCode.Usage) ended = true;
  return failure;
}

export function usageErrorEnded(): boolean {
  return ended;
}
