import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { tableEnvFlag } from '../../cli/governance-flags.js';
import { openQuarantinedDdl } from '../../services/quarantine.js';
import { writesToStdout } from '../../io/output-file.js';
import { writeDocument } from '../../cli/gate-output.js';

export default class QuarantineOpen extends ApiCommand<typeof QuarantineOpen> {
  static override summary = "Fetch a table's DDL into a local .sql file.";
  static override description =
    'Writes <table>.sql in the current folder (the name the service suggests, reduced to a plain file name ' +
    'so it can never land elsewhere), or the file given with -o. An existing file is kept unless --force; the ' +
    'file is written whole or not at all. Prints the path (under --json one line with path, tableId, name, state).';
  static override examples = [
    '<%= config.bin %> quarantine open tbl_42',
    '<%= config.bin %> quarantine open tbl_42 -o sql/orders.sql --force',
    '<%= config.bin %> quarantine open tbl_42 -o - | less',
  ];
  static override args = {
    tableId: Args.string({ description: 'The table id or name (gds quarantine list).', required: true }),
  };
  static override flags = {
    env: tableEnvFlag,
    output: Flags.string({
      char: 'o',
      description: 'File to write instead of <table>.sql in the current folder (- is stdout).',
    }),
    force: Flags.boolean({ description: 'Overwrite the file when it exists.' }),
  };

  async run(): Promise<void> {
    const { output, force } = this.flags;
    if (writesToStdout(output, { flag: '-o', json: this.out.json })) {
      const { ddl } = await this.withClient(async (client) =>
        client.tables.ddl(await this.tableIdOf(client, this.args.tableId)),
      );
      await writeDocument(this.out, ddl.endsWith('\n') ? ddl : `${ddl}\n`);
      return;
    }
    const opened = await this.withClient(async (client) =>
      openQuarantinedDdl(client, await this.tableIdOf(client, this.args.tableId), { output, force }),
    );
    const { table } = opened;
    if (this.out.json) {
      this.out.record({ path: opened.path, tableId: table.tableId, name: table.name, state: table.state });
      return;
    }
    this.out.print(opened.path);
    this.out.success(`Wrote the DDL of ${table.name} (${table.tableId}, ${table.state}).`);
  }
}
