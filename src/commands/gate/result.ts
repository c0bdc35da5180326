import { Args } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { gateJobResult } from '../../services/gates.js';
import { printGateRecord } from '../../cli/gate-output.js';

export default class GateResult extends ApiCommand<typeof GateResult> {
  static override summary = 'Show the report of a finished gate job.';
  static override description =
    'A prf_… id (printed by gds gate submit) shows the persisted Gate 1 proof. ' +
    'Exit 6 (conflict) while the job is still queued or running: wait for it with gds gate status --watch. ' +
    'Under --json one line, the job with its result.';
  static override examples = [
    '<%= config.bin %> gate result job_01H…',
    '<%= config.bin %> gate result job_01H… --json | jq .result',
    '<%= config.bin %> gate result prf_01H…',
  ];
  static override args = { jobId: Args.string({ description: 'The job id.', required: true }) };

  async run(): Promise<void> {
    const job = await this.withClient((client) => gateJobResult(client, this.args.jobId));
    await printGateRecord(this.out, job);
  }
}
