import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { tableEnvFlag } from '../../cli/governance-flags.js';
import { listGateJobs } from '../../services/gates.js';
import { gateJobColumns } from '../../cli/gate-output.js';

export default class GateJobs extends ApiCommand<typeof GateJobs> {
  static override pager = true;
  static override summary = "List a table's recent gate jobs and Gate 1 submissions, finished ones included.";
  static override description =
    'Newest first: id, gate, type (gate-baseline-auto, gate2, gate3, gate1-submit), status, started, ended, and ' +
    'the proof gds gate result reads once it ended. A finished gate-baseline-auto job is the --baseline of ' +
    'gds gate run --gate 3; a gate1-submit row is the prf_… proof gds gate submit printed. Under --json one ' +
    'line per job.';
  static override examples = [
    '<%= config.bin %> gate jobs tbl_42',
    '<%= config.bin %> gate jobs tbl_42 --limit 5 --json',
    '<%= config.bin %> gate jobs tbl_42 --json | jq -r \'select(.type == "gate-baseline-auto" and .status == "SUCCEEDED") | .id\' | head -1',
  ];
  static override args = { tableId: Args.string({ description: 'The table id or name.', required: true }) };
  static override flags = {
    env: tableEnvFlag,
    limit: Flags.integer({
      char: 'L',
      description: 'How many to list (1-100, default 20).',
      min: 1,
      max: 100,
    }),
  };

  async run(): Promise<void> {
    const jobs = await this.withClient(async (client) =>
      listGateJobs(client, await this.tableIdOf(client, this.args.tableId), this.flags.limit),
    );
    await this.out.table(jobs, gateJobColumns, { empty: 'No gate jobs for this table yet.' });
  }
}
