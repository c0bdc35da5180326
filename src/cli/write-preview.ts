// The `--dry-run` preview shared by the writes that compare with the service first (gate apply,
// push --replace, env promote, contract set-intent): the diff that would be applied, nothing sent.
import { Flags } from '@oclif/core';
import type { Output } from './output.js';
import type { Segment } from './segment.js';

export const dryRunFlag = Flags.boolean({
  description:
    'Print the diff that would be applied and send nothing (exit 0). Under --json: one line {"changed","diff"}.',
  default: false,
});

export interface WritePreview {
  changed: boolean;
  /** A unified diff from what the service holds to what would be sent; empty when unchanged. */
  diff: string;
}

/** A preview: one `{changed, diff}` line under --json, else the coloured diff on stdout, or the no-change
 *  line on stderr (a confirmation, docs/output.md). */
export function printPreview(out: Output, preview: WritePreview, noChange: string): void {
  if (out.json) {
    out.record(preview);
    return;
  }
  if (!preview.changed) out.success(noChange);
  else printUnifiedDiff(out, preview.diff);
}

export function printUnifiedDiff(out: Output, unified: string): void {
  out.printLines(
    unified
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => [diffLine(out, line)]),
  );
}

function diffLine(out: Output, line: string): Segment {
  if (line.startsWith('---') || line.startsWith('+++')) return out.style('bold', line);
  if (line.startsWith('@@')) return out.style('cyan', line);
  if (line.startsWith('+')) return out.style('green', line);
  if (line.startsWith('-')) return out.style('red', line);
  return line;
}
