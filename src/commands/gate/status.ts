import { Args } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { gateFlag } from '../../cli/gate-flag.js';

export default class GateStatus extends ApiCommand<typeof GateStatus> {
  static override summary = 'Show the status of a gate job (--gate is required).';
  static override description =
    '--gate names the gate the job belongs to (1 = the auto-baseline job); the service refuses a mismatch. ' +
    'Under --json one line, the job.';
  static override examples = ['<%= config.bin %> gate status job_01H… --gate 2'];
  static override args = { jobId: Args.string({ description: 'The job id.', required: true }) };
  static override flags = { gate: gateFlag({ required: true }) };

  async run(): Promise<void> {
    const { gateJobStatus } = await import('../../services/gates.js');
    const job = await this.withClient((client) => gateJobStatus(client, this.args.jobId, this.flags.gate));
    const { printJob } = await import('../../cli/gate-output.js');
    await printJob(this.out, job);
  }
}
