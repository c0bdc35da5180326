import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { gateFlag } from '../../cli/gate-flag.js';
import { intervalFlag } from '../../cli/governance-flags.js';
import type { Spinner } from '../../cli/output-spinner.js';
import type { GateRecord } from '../../client/areas/gate-jobs.js';
import { gateJobStatus, isProof, watchGateJob } from '../../services/gates.js';
import { printGateRecord } from '../../cli/gate-output.js';
import { jobEnded } from '../../core/job-status.js';

export default class GateStatus extends ApiCommand<typeof GateStatus> {
  static override summary = 'Show the status of a gate job (--gate is required).';
  static override description =
    '--gate names the gate the job belongs to (1 = the auto-baseline job and Gate 1 proofs); the service ' +
    'refuses a mismatch. A prf_… id (printed by gds gate submit) shows the persisted proof. --watch polls ' +
    'until the job ends (after 0.25 s, then twice as long each time up to --interval seconds, default 3): the ' +
    'job first, then a line on stdout each time it changes while it runs, and how it ended as one final line ' +
    'on stderr; a spinner on a terminal. Under --json one line per status on stdout (with --watch: the first, ' +
    'then each change; the last is terminal) and nothing on stderr. Ctrl-C stops with exit 130.';
  static override examples = [
    '<%= config.bin %> gate status job_01H… --gate 2',
    '<%= config.bin %> gate status job_01H… --gate 3 --watch',
    "<%= config.bin %> gate status job_01H… --gate 1 --watch --json | jq -c '{status, finishedAt}'",
    '<%= config.bin %> gate status prf_01H… --gate 1',
  ];
  static override args = {
    jobId: Args.string({ description: 'The job id, or a prf_… proof id.', required: true }),
  };
  static override flags = {
    gate: gateFlag({ required: true }),
    watch: Flags.boolean({ description: 'Poll until the job ends.' }),
    interval: intervalFlag,
  };

  async run(): Promise<void> {
    const { jobId } = this.args;
    const { gate } = this.flags;
    if (!this.flags.watch) {
      const record = await this.withClient((client) => gateJobStatus(client, jobId, gate));
      await printGateRecord(this.out, record);
      return;
    }
    let spinner: Spinner | undefined;
    let first = true;
    // stdout: the first record (a proof whole), then each change while the job runs; how it ended is one
    // line on stderr, unless the first record already showed it.
    const show = async (record: GateRecord) => {
      spinner?.stop();
      const running = !isProof(record) && !jobEnded(record.status);
      if (this.out.json || first || isProof(record)) await printGateRecord(this.out, record);
      else if (running) this.out.printField(`${new Date().toISOString()}  ${record.id}  ${record.status}`);
      else this.out.info(`${new Date().toISOString()}  Job ${record.id} ended ${record.status}.`);
      first = false;
      if (running) spinner = await this.out.spinner(`Job ${record.id} ${record.status}…`);
    };
    await this.withClient((client) =>
      watchGateJob(client, jobId, gate, { intervalMs: this.flags.interval }, show),
    );
    spinner?.stop();
  }
}
