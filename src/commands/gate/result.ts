import { Args } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';

export default class GateResult extends ApiCommand<typeof GateResult> {
  static override summary = 'Show the report of a finished gate job.';
  static override description =
    'Exit 6 (conflict) while the job is still queued or running: wait for it with gds gate status. ' +
    'Under --json one line, the job with its result.';
  static override examples = [
    '<%= config.bin %> gate result job_01H…',
    '<%= config.bin %> gate result job_01H… --json | jq .result',
  ];
  static override args = { jobId: Args.string({ description: 'The job id.', required: true }) };

  async run(): Promise<void> {
    const { gateJobResult } = await import('../../services/gates.js');
    const job = await this.withClient((client) => gateJobResult(client, this.args.jobId));
    const { printJob } = await import('../../cli/gate-output.js');
    await printJob(this.out, job);
  }
}
