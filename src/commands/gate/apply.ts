import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { readTextInput } from '../../cli/input.js';

export default class GateApply extends ApiCommand<typeof GateApply> {
  static override summary = 'Validate a gate1.yml locally, then store it as the next version of the table.';
  static override description =
    'The file is checked first with the same rules as gds gate validate: when it is invalid nothing is sent ' +
    'and the command exits 2 with every error. The service checks it again against the table columns. ' +
    'The steward is not notified; on a CERTIFIED table a recertification request is filed. -f - reads stdin.';
  static override examples = [
    '<%= config.bin %> gate apply t_42 -f gate1.yml',
    '<%= config.bin %> gate suggest t_42 | <%= config.bin %> gate apply t_42 -f -',
  ];
  static override args = { tableId: Args.string({ description: 'The table id.', required: true }) };
  static override flags = {
    file: Flags.string({
      char: 'f',
      description: 'The gate1.yml to apply, or - for stdin.',
      env: 'GDS_FILE',
      required: true,
    }),
  };

  async run(): Promise<void> {
    const input = await readTextInput(this.flags.file, { flag: '-f' });
    const { applyGate } = await import('../../services/gates.js');
    const applied = await this.withClient((client) => applyGate(client, this.args.tableId, input));
    if (this.out.json) {
      this.out.record(applied);
      return;
    }
    this.out.print(`Applied ${input.name} to ${applied.tableId} as gate1.yml v${applied.version}.`);
    for (const warning of applied.warnings) this.out.warn(JSON.stringify(warning));
    if (applied.recertificationRequestId !== null) {
      this.out.print(
        `The table is CERTIFIED: recertification request ${applied.recertificationRequestId} filed.`,
      );
    }
  }
}
