import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { tableEnvFlag } from '../../cli/governance-flags.js';
import { printGate1Check } from '../../cli/gate1-check.js';
import { readGate1Text } from '../../io/input.js';

export default class GateValidate extends ApiCommand<typeof GateValidate> {
  static override summary = 'Check a gate1.yml offline (exit 0 valid, 2 invalid; warnings alone keep 0).';
  static override description =
    'Reports every problem as a compiler-style line on stdout (file:line:col severity path: message (code)) ' +
    'and a summary on stderr. Needs no config and no network, unless a table id is given: then the column ' +
    'names are checked against that table too, as gds gate apply has the service do. Under --json: one line per diagnostic ' +
    '{file,line,column,path,severity,code,message}, then one summary line {valid,file,errors,warnings}.';
  static override examples = [
    '<%= config.bin %> gate validate -f gate1.yml',
    'cat gate1.yml | <%= config.bin %> gate validate -f -',
    '<%= config.bin %> gate validate -f gate1.yml --json',
    '<%= config.bin %> gate validate t_42 -f gate1.yml',
  ];
  static override args = {
    tableId: Args.string({
      description: "Check column names against this table's columns as well (asks the service for them).",
    }),
  };
  static override flags = {
    env: tableEnvFlag,
    file: Flags.string({ char: 'f', description: 'The gate1.yml to check, or - for stdin.', required: true }),
  };

  async run(): Promise<void> {
    const input = await readGate1Text(this.flags.file, { flag: '-f' });
    const tableId = this.args.tableId;
    const columns =
      tableId === undefined
        ? undefined
        : (await this.withClient(async (client) => client.tables.ddl(await this.tableIdOf(client, tableId))))
            .columns;
    await printGate1Check(this.out, input, columns);
  }
}
