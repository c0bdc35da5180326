import { Args } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { gateFlag } from '../../cli/gate-flag.js';
import { cancelGateJob } from '../../services/gates.js';
import { printJob } from '../../cli/gate-output.js';

export default class GateCancel extends ApiCommand<typeof GateCancel> {
  static override summary = 'Cancel a queued or running gate job (default Gate 1).';
  static override description =
    'Exit 6 (conflict) when the job has already ended. Under --json one line, the cancelled job.';
  static override examples = ['<%= config.bin %> gate cancel job_01H… --gate 2'];
  static override args = { jobId: Args.string({ description: 'The job id.', required: true }) };
  static override flags = { gate: gateFlag({ default: 1 }) };

  async run(): Promise<void> {
    const job = await this.withClient((client) => cancelGateJob(client, this.args.jobId, this.flags.gate));
    await printJob(this.out, job);
  }
}
