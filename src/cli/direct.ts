// The command lines gds answers without oclif (command-route.ts directRun): `gate validate -f FILE [--json]`,
// an offline check CI runs on every commit, whose start-up was mostly oclif's config and parser.
// It prints, fails and is interrupted exactly as the command does (test/e2e/gate-validate-direct.test.ts
// compares the two).
import { toCliError } from './errors.js';
import { directRun } from './command-route.js';
import type { DirectRun } from './command-route.js';
import { printGate1Check } from './gate1-check.js';
import { readGate1Text } from '../io/input.js';
import { JSON_FIELDS } from './json-fields.js';
import { exitInterrupted, jsonRequested, Output } from './output.js';
import { redactError } from './secrets.js';

/** Runs these (normalised) arguments directly when directRun says they can be: true when it did. */
export async function ranDirectly(argv: readonly string[]): Promise<boolean> {
  const run = directRun(argv);
  if (run === undefined) return false;
  await runDirect(run, argv);
  return true;
}

async function runDirect(run: DirectRun, argv: readonly string[]): Promise<void> {
  const listedFields = JSON_FIELDS[run.id];
  const out = new Output({ json: jsonRequested(argv), ...(listedFields ? { listedFields } : {}) });
  process.once('SIGINT', () => exitInterrupted(out));
  try {
    const input = await readGate1Text(run.file, { flag: '-f' });
    await printGate1Check(out, input);
  } catch (error) {
    const failure = toCliError(error, 'See `gds gate validate --help`.');
    out.error(redactError(failure, argv));
    process.exitCode = failure.exitCode;
  }
  await out.flush();
}
