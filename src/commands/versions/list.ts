import { Args } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { tableEnvFlag } from '../../cli/governance-flags.js';
import type { Column } from '../../cli/output-table.js';
import type { ContractVersion } from '../../client/areas/versions.js';
import { limitFlag } from '../../cli/list-flags.js';
import { listVersions } from '../../services/versions.js';

const columns: ReadonlyArray<Column<ContractVersion>> = [
  { header: 'Version', kind: 'id', value: (v) => v.version },
  { header: 'Kind', value: (v) => (v.restoredFrom === null ? v.kind : `${v.kind} of v${v.restoredFrom}`) },
  { header: 'Certified at', kind: 'time', value: (v) => v.certifiedAt },
  { header: 'Certified by', kind: 'who', value: (v) => v.certifiedByEmail ?? v.certifiedBy },
  { header: 'Env', kind: 'version', value: (v) => v.environmentLabel },
  { header: 'Grain', value: (v) => v.grain },
  { header: 'Reason', value: (v) => v.reason },
];

export default class VersionsList extends ApiCommand<typeof VersionsList> {
  static override pager = true;
  static override summary = "Show a table's certification history, oldest first.";
  static override description =
    'Every certified version of the contract: number, when, by whom, grain; restores appear as versions of ' +
    'kind RESTORE. Under --json one line per version.';
  static override examples = [
    '<%= config.bin %> versions list t_42',
    '<%= config.bin %> versions list t_42 --json',
  ];
  static override args = { tableId: Args.string({ description: 'The table id or name.', required: true }) };

  static override flags = {
    env: tableEnvFlag,
    limit: limitFlag,
  };

  async run(): Promise<void> {
    const versions = await this.withClient(async (client) =>
      listVersions(client, await this.tableIdOf(client, this.args.tableId)),
    );
    await this.out.table(versions, columns, { limit: this.flags.limit, empty: 'No certified versions.' });
  }
}
