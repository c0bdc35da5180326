import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../cli/api-command.js';
import { boundedText, tableEnvFlag } from '../cli/governance-flags.js';
import { MAX_NOTE_CHARS } from '../core/text-bounds.js';
import { certifyTable, evidenceOf, requireInteractiveSession } from '../services/certification.js';

export default class Certify extends ApiCommand<typeof Certify> {
  static override summary = 'Certify a PENDING_REVIEW table (interactive sign-in only).';
  static override description =
    'Needs a browser sign-in (gds auth login) as a STEWARD or above: a static token (--token, SERVICE_TOKEN, ' +
    'or a profile stored with gds auth set) is refused with exit 3 before anything is sent. The service checks ' +
    'the review proof; a refusal (stale proof, failed predicates, Gate 3 required, policy unmet) exits 7 with ' +
    'its reason. --evidence-file sends the file name, size and sha256 computed locally, never the file.' +
    " gds waits up to 10 minutes for the answer: a scan under the service's own statement deadlines.";
  static override examples = [
    '<%= config.bin %> certify t_42 --note "reviewed with finance"',
    '<%= config.bin %> certify t_42 --evidence-file review.pdf --json',
  ];
  static override args = { tableId: Args.string({ description: 'The table id or name.', required: true }) };
  static override flags = {
    env: tableEnvFlag,
    note: Flags.string({
      parse: boundedText('note', MAX_NOTE_CHARS),
      description: 'A note recorded with the certification in the audit log.',
    }),
    'evidence-file': Flags.string({
      description: 'A file backing the decision: its name, size and sha256 are recorded.',
    }),
  };

  async run(): Promise<void> {
    const path = this.flags['evidence-file'];
    const evidence = path === undefined ? undefined : await evidenceOf(path);
    const { contract } = await this.out.during(`Certifying ${this.args.tableId}…`, () =>
      this.withClient(async (client, session) => {
        if (session.credentials !== undefined) requireInteractiveSession(session.credentials);
        return certifyTable(client, await this.tableIdOf(client, this.args.tableId), {
          note: this.flags.note,
          evidence,
        });
      }),
    );
    if (this.out.json) {
      this.out.record(contract);
      return;
    }
    this.out.success(`Certified ${this.args.tableId}: contract ${contract.id} ${contract.status}.`);
    if (evidence !== undefined) {
      this.out.info(
        `Evidence ${evidence.evidenceFileName} (${evidence.evidenceSize} bytes, sha256 ${evidence.evidenceHash}).`,
      );
    }
  }
}
