import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { tableEnvFlag } from '../../cli/governance-flags.js';
import { getGate } from '../../services/gates.js';
import { writesToStdout, writeOutputFile } from '../../io/output-file.js';
import { writeDocument } from '../../cli/gate-output.js';

export default class GateGet extends ApiCommand<typeof GateGet> {
  static override summary = "Fetch a table's current gate1.yml (stdout, or a file with -o).";
  static override description =
    'Prints the text exactly as applied, so it can be edited and applied again. -o writes it to a file ' +
    'atomically and never replaces an existing one without --force; -o - is stdout. Under --json one line ' +
    '{tableId,version,content,createdBy,createdAt}.';
  static override examples = [
    '<%= config.bin %> gate get t_42 > gate1.yml',
    '<%= config.bin %> gate get t_42 -o gate1.yml --force',
    '<%= config.bin %> gate get t_42 -o - | <%= config.bin %> gate validate t_42 -f -',
  ];
  static override args = { tableId: Args.string({ description: 'The table id or name.', required: true }) };
  static override flags = {
    env: tableEnvFlag,
    output: Flags.string({
      char: 'o',
      description: 'Write to this file instead of stdout (- is stdout).',
    }),
    force: Flags.boolean({
      description: 'Replace the -o file if it exists.',
      default: false,
    }),
  };

  async run(): Promise<void> {
    const output = writesToStdout(this.flags.output, { flag: '-o', json: this.out.json })
      ? undefined
      : this.flags.output;
    const gate = await this.withClient(async (client) =>
      getGate(client, await this.tableIdOf(client, this.args.tableId)),
    );
    if (output !== undefined) {
      await writeOutputFile(output, gate.content, {
        force: this.flags.force,
        flag: '-o',
        example: 'gate1.yml',
      });
      if (this.out.json) this.out.record({ ...gate, file: output });
      else {
        const table = this.tableLabel(this.args.tableId, gate.tableId);
        this.out.success(`Wrote gate1.yml v${gate.version} of ${table} to ${output}.`);
      }
      return;
    }
    if (this.out.json) this.out.record(gate);
    else await writeDocument(this.out, gate.content);
  }
}
