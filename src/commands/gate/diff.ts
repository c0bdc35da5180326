import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { CliError, ExitCode } from '../../cli/errors.js';
import { readTextInput } from '../../cli/input.js';
import type { Segment } from '../../cli/output.js';

const serverComparisonUnavailable =
  'Comparing with the server needs a table id and a signed-in profile, which arrive with the command tree; ' +
  'this version compares two local files only.';

export default class GateDiff extends BaseCommand<typeof GateDiff> {
  static override summary = 'Show how a gate1.yml differs from another (exit 0 identical, 1 different).';
  static override description =
    'Prints a unified diff from the --against file (before) to the -f file (after). With --semantic both ' +
    'are parsed and compared as normalised documents, so key order, quoting, comments and formatting ' +
    'alone are not a difference. Under --json: one line {"identical","semantic","hunks"}.';
  static override examples = [
    '<%= config.bin %> gate diff -f gate1.yml --against gate1.old.yml',
    '<%= config.bin %> gate diff -f gate1.yml --against gate1.old.yml --semantic --json',
    'cat gate1.yml | <%= config.bin %> gate diff -f - --against gate1.old.yml',
  ];
  static override args = {
    tableId: Args.string({
      description:
        "Table whose server-side gate1.yml to compare with (with --from/--to: the table's versions).",
    }),
  };
  static override flags = {
    file: Flags.string({ char: 'f', description: 'The gate1.yml to compare (after), or - for stdin.' }),
    against: Flags.string({ description: 'A second local gate1.yml to compare with (before).' }),
    from: Flags.string({ description: 'Server version to compare from (vN).', dependsOn: ['to'] }),
    to: Flags.string({ description: 'Server version to compare to (vM).', dependsOn: ['from'] }),
    semantic: Flags.boolean({
      description: 'Compare normalised documents instead of texts.',
      default: false,
    }),
  };

  async run(): Promise<void> {
    const { file, against, from, semantic } = this.flags;
    if (from !== undefined || against === undefined) {
      throw new CliError(serverComparisonUnavailable, {
        exitCode: ExitCode.Usage,
        code: 'server_comparison_unavailable',
        suggestion: 'Compare two local files: gds gate diff -f gate1.yml --against other.yml',
      });
    }
    if (file === undefined) {
      throw new CliError('--against needs -f <file>: the file to compare with it.', {
        exitCode: ExitCode.Usage,
        suggestion: 'Run: gds gate diff -f gate1.yml --against other.yml',
      });
    }
    if (file === '-' && against === '-') {
      throw new CliError('Only one side can be read from stdin.', {
        exitCode: ExitCode.Usage,
        suggestion: 'Give a file path to -f or to --against.',
      });
    }
    const after = await readTextInput(file, { flag: '-f' });
    const before = await readTextInput(against, { flag: '--against' });
    const { diffGateTexts, GateYamlError } = await import('../../core/gate-diff.js');
    let result;
    try {
      result = diffGateTexts(before, after, { semantic });
    } catch (error) {
      if (!(error instanceof GateYamlError)) throw error;
      throw new CliError(error.message, {
        exitCode: ExitCode.Usage,
        code: 'invalid_yaml',
        suggestion: 'Fix the YAML, or compare the texts without --semantic.',
        details: { file: error.source, line: error.line, col: error.col },
      });
    }
    if (this.out.json) {
      this.out.record({ identical: result.identical, semantic: result.semantic, hunks: result.hunks });
    } else {
      for (const line of result.unified.split('\n').slice(0, -1)) this.out.print(this.styled(line));
    }
    if (!result.identical) process.exitCode = ExitCode.Failure;
  }

  private styled(line: string): Segment {
    if (line.startsWith('---') || line.startsWith('+++')) return this.out.style('bold', line);
    if (line.startsWith('@@')) return this.out.style('cyan', line);
    if (line.startsWith('+')) return this.out.style('green', line);
    if (line.startsWith('-')) return this.out.style('red', line);
    return line;
  }
}
