import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { tableEnvFlag } from '../../cli/governance-flags.js';
import { CliError, ExitCode } from '../../core/errors.js';
import { freeingExitOne } from '../../cli/errors.js';
import { readGate1Text } from '../../io/input.js';
import { shellWord } from '../../core/shell-word.js';
import { printUnifiedDiff } from '../../cli/write-preview.js';
import type { DiffSide, GateDiff as GateDiffResult } from '../../core/gate-diff.js';
import { checkSummary, diffGateTexts, GateYamlError, loadGateDiffLibraries } from '../../core/gate-diff.js';
import type { DiffTarget } from '../../services/gates.js';
import { parseGateVersion, diffWithServer } from '../../services/gates.js';
import { DECLARES_NOTHING, declaresNothing } from '../../core/gate1/schema.js';

const localFix = 'Run: gds gate diff -f gate1.yml --against other.yml';
const serverFix = 'Run: gds gate diff t_42 -f gate1.yml, or gds gate diff t_42 --from v1 --to v2';
const mixedSides =
  'Compare one pair: a table with -f or --from/--to, or two local files with -f and --against.';
const mixedSidesFix = `${serverFix}, or ${localFix.slice(5)}`;

function usage(message: string, suggestion: string): CliError {
  return new CliError(message, { exitCode: ExitCode.Usage, suggestion });
}

/** A local side, refused (exit 2) when it declares nothing, as gate validate and gate apply refuse it: an
 *  empty file or pipe is no set of rules to compare. */
async function readGateSide(source: string, flag: string): Promise<DiffSide> {
  const side = await readGate1Text(source, { flag });
  if (!declaresNothing(side.text)) return side;
  throw new CliError(`${side.name}: ${DECLARES_NOTHING}.`, {
    exitCode: ExitCode.Usage,
    code: 'empty_gate1',
    suggestion: `Check what ${flag} names or what is piped in; gds gate validate -f ${source} says the same.`,
  });
}

export default class GateDiff extends ApiCommand<typeof GateDiff> {
  static override pager = true;
  static override summary =
    "Compare a gate1.yml with the server's, two server versions, or two files (exit 0 identical, 1 different, 2 or more a failure).";
  static override description =
    "With a table id: the -f file (after) against the server's current gate1.yml (before; an empty one, " +
    'said on stderr, when none was applied yet), or two stored ' +
    'versions with --from vN --to vM. With --against: two local files, no network. A local side that ' +
    'declares nothing (empty, or comments only) is exit 2, as gate validate says. Prints a unified diff from before to after. With --semantic both ' +
    'are parsed and compared as normalised documents, so key order, quoting, comments and formatting ' +
    'alone are not a difference. The checks are compared by name first: on stderr, which were added, removed, changed ' +
    'or moved. Past 1,000 differing lines the diff is one hunk spanning them (coarse), found in linear time. ' +
    'Under --json: one line {"identical","semantic","hunks","checks":{"added","removed","changed","moved"},"coarse"}.';
  static override examples = [
    '<%= config.bin %> gate diff t_42 -f gate1.yml',
    '<%= config.bin %> gate diff t_42 --from v1 --to v3',
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
    env: tableEnvFlag,
    file: Flags.string({
      char: 'f',
      description: 'The gate1.yml to compare (after), or - for stdin.',
    }),
    against: Flags.string({
      description: 'A second local gate1.yml to compare with (before).',
    }),
    from: Flags.custom<string>({
      description: 'Server version to compare from (vN).',
      dependsOn: ['to'],
      parse: async (input) => parseGateVersion(input),
    })(),
    to: Flags.custom<string>({
      description: 'Server version to compare to (vM).',
      dependsOn: ['from'],
      parse: async (input) => parseGateVersion(input),
    })(),
    semantic: Flags.boolean({
      description: 'Compare normalised documents instead of texts.',
      default: false,
    }),
  };

  async run(): Promise<void> {
    const { tableId } = this.args;
    const { file, against, from, to, semantic } = this.flags;
    let result: GateDiffResult;
    if (against !== undefined) {
      if (tableId !== undefined || from !== undefined) throw usage(mixedSides, mixedSidesFix);
      if (file === undefined)
        throw usage('--against needs -f <file>: the file to compare with it.', localFix);
      if (file === '-' && against === '-') {
        throw usage('Only one side can be read from stdin.', 'Give a file path to -f or to --against.');
      }
      const after = await readGateSide(file, '-f');
      const before = await readGateSide(against, '--against');
      result = await this.diffLocally(before, after, semantic);
    } else {
      if (tableId === undefined)
        throw usage('Name the table to compare with, or give --against <file>.', serverFix);
      if (from !== undefined && file !== undefined) throw usage(mixedSides, mixedSidesFix);
      if (from === undefined && file === undefined) {
        throw usage(
          'Give -f <file> to compare with the server, or --from vN --to vM.',
          serverFix.replaceAll('t_42', shellWord(tableId)),
        );
      }
      const target: DiffTarget =
        from !== undefined && to !== undefined
          ? { kind: 'versions', from, to }
          : { kind: 'current', after: await readGateSide(file ?? '-', '-f') };
      const fromServer = await this.withClient((client) =>
        this.yamlErrors(async () =>
          diffWithServer(client, await this.tableIdOf(client, tableId), target, { semantic }),
        ),
      );
      if (fromServer.noneApplied) {
        const note =
          `Table ${tableId} has no gate1.yml yet: ${file === '-' ? 'stdin' : file} is compared with an empty file. ` +
          `Apply it with gds gate apply ${shellWord(tableId)} -f ${shellWord(file ?? 'gate1.yml')}.`;
        // Under --json every line of stderr is JSON: the note is a warning line there.
        if (this.out.json) this.out.warn(note);
        else this.out.info(note);
      }
      result = fromServer;
    }
    if (this.out.json) {
      this.out.record({
        identical: result.identical,
        semantic: result.semantic,
        hunks: result.hunks,
        ...(result.checks === undefined ? {} : { checks: result.checks }),
        ...(result.coarse === true ? { coarse: true } : {}),
      });
    } else {
      printUnifiedDiff(this.out, result.unified);
      const summary = checkSummary(result);
      if (summary !== undefined) this.out.info(summary);
    }
    if (!result.identical) process.exitCode = ExitCode.Failure;
  }

  /** Exit 1 means "different" and nothing else: a failure other commands end with 1 (a status gds has no code
   *  for, a config file it cannot use, a --jq filter failing on the answer, a bug) ends gate diff with 2, as
   *  diff(1)'s "trouble". */
  protected override endingFailure(failure: CliError): CliError {
    return freeingExitOne(failure);
  }

  private async diffLocally(before: DiffSide, after: DiffSide, semantic: boolean): Promise<GateDiffResult> {
    const libraries = await loadGateDiffLibraries();
    return this.yamlErrors(async () => diffGateTexts(libraries, before, after, { semantic }));
  }

  /** A side that is not YAML under --semantic is bad input (exit 2), wherever it came from. */
  private async yamlErrors<T extends GateDiffResult>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof GateYamlError)) throw error;
      throw new CliError(error.message, {
        exitCode: ExitCode.Usage,
        code: 'invalid_yaml',
        suggestion: 'Fix the YAML, or compare the texts without --semantic.',
        details: { file: error.source, line: error.line, col: error.col },
      });
    }
  }
}
