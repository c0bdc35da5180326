// What `gds gate validate` prints for a gate1.yml: one compiler-style line per diagnostic on stdout and a
// summary on stderr, or under --json one record per diagnostic and a summary record; exit code 2 when there
// is an error.
import type { TextInput } from '../io/input.js';
import { ExitCode } from '../core/errors.js';
import type { Output } from './output.js';
import { countDiagnostics, diagnosticParts } from '../core/gate1/diagnostic.js';
import { validateGate1Lazily } from '../core/gate1/validate.js';

export async function printGate1Check(
  out: Output,
  input: TextInput,
  columns?: Iterable<string>,
): Promise<void> {
  const { diagnostics } = await validateGate1Lazily(input.text, {
    fileName: input.name,
    ...(columns === undefined ? {} : { columns }),
  });
  const { errors, warnings } = countDiagnostics(diagnostics);
  if (out.json) {
    for (const d of diagnostics) out.record(d);
    out.record({ valid: errors === 0, file: input.name, errors, warnings });
  } else {
    for (const d of diagnostics) {
      const [location, severity, rest] = diagnosticParts(d);
      out.print(location, ' ', out.style(severity === 'error' ? 'red' : 'yellow', severity), rest);
    }
    out.info(summary(input.name, errors, warnings));
  }
  if (errors > 0) process.exitCode = ExitCode.Usage;
}

function summary(file: string, errors: number, warnings: number): string {
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (errors === 0) return `${file}: valid${warnings > 0 ? ` (${plural(warnings, 'warning')})` : ''}`;
  return `${file}: invalid, ${plural(errors, 'error')}${warnings > 0 ? `, ${plural(warnings, 'warning')}` : ''}`;
}
