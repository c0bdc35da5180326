import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { tableEnvFlag } from '../../cli/governance-flags.js';
import { readGate1Text } from '../../io/input.js';
import { dryRunFlag, printPreview } from '../../cli/write-preview.js';
import { applyGate, tableColumnsOrUndefined } from '../../services/gates.js';
import { CliError, restated } from '../../core/errors.js';
import { shellWord } from '../../core/shell-word.js';

export default class GateApply extends ApiCommand<typeof GateApply> {
  static override summary = 'Validate a gate1.yml locally, then store it as the next version of the table.';
  static override description =
    'The file is checked first as gds gate validate <table> checks it, column names against the table ' +
    'included: when it is invalid nothing is sent and the command exits 2 with every error. It is then ' +
    'compared with the current version: the same rules (formatting, key order and comments aside) send ' +
    'nothing and print "No change" (exit 0), so a pipeline can apply on every run. The service checks it ' +
    'again. The steward is not notified; on a CERTIFIED table a recertification request is filed. -f - reads ' +
    'stdin.';
  static override examples = [
    '<%= config.bin %> gate apply t_42 -f gate1.yml',
    '<%= config.bin %> gate apply t_42 -f gate1.yml --dry-run',
    '<%= config.bin %> gate suggest t_42 | <%= config.bin %> gate apply t_42 -f -',
  ];
  static override args = { tableId: Args.string({ description: 'The table id or name.', required: true }) };
  static override flags = {
    env: tableEnvFlag,
    file: Flags.string({
      char: 'f',
      description: 'The gate1.yml to apply, or - for stdin.',
      required: true,
    }),
    'dry-run': dryRunFlag,
  };

  async run(): Promise<void> {
    const { tableId } = this.args;
    const dryRun = this.flags['dry-run'];
    const input = await readGate1Text(this.flags.file, { flag: '-f' });
    const outcome = await this.withClient(async (client) => {
      const id = await this.tableIdOf(client, tableId);
      return applyGate(client, id, input, { dryRun, columns: () => tableColumnsOrUndefined(client, id) });
    }).catch((error: unknown) => {
      // Refused here or by the service: the check to run names the table and the file as the person did.
      if (!(error instanceof CliError) || error.code !== 'invalid_gate1') throw error;
      const validate = `gds gate validate ${shellWord(tableId)} -f ${shellWord(this.flags.file)}`;
      throw restated(error, {
        suggestion: `Fix the file (${validate} shows the same), then apply it again.`,
      });
    });
    if (outcome.kind === 'unchanged') {
      const table = this.tableLabel(tableId, outcome.current.tableId);
      const noChange = `No change: gate1.yml of ${table} is already v${outcome.current.version}.`;
      if (dryRun) printPreview(this.out, { changed: false, diff: '' }, noChange);
      else if (this.out.json) this.out.record(outcome.current);
      else this.out.success(noChange);
      return;
    }
    if (outcome.kind === 'preview') {
      printPreview(this.out, { changed: true, diff: outcome.diff }, '');
      return;
    }
    const { applied } = outcome;
    if (this.out.json) {
      this.out.record(applied);
      return;
    }
    this.out.success(
      `Applied ${input.name} to ${this.tableLabel(tableId, applied.tableId)} as gate1.yml v${applied.version}.`,
    );
    for (const warning of applied.warnings) this.out.warn(JSON.stringify(warning));
    if (applied.recertificationRequestId !== null) {
      this.out.info(
        `The table is CERTIFIED: recertification request ${applied.recertificationRequestId} filed.`,
      );
    }
  }
}
