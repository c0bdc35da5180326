import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { tableEnvFlag } from '../../cli/governance-flags.js';
import { freeingExitOne } from '../../cli/errors.js';
import type { CliError } from '../../core/errors.js';
import { ExitCode } from '../../core/errors.js';
import { parseIdempotencyKey, submitGate } from '../../services/gates.js';
import { printProof } from '../../cli/gate-output.js';
import { onOneLine } from '../../core/terminal-text.js';
import { shellWord } from '../../core/shell-word.js';

export default class GateSubmit extends ApiCommand<typeof GateSubmit> {
  static override summary = 'Run Gate 1 on every row, keep the proof, and send the table to review.';
  static override description =
    'A full scan: the proof is persisted, the table moves to PENDING_REVIEW and the steward is notified. ' +
    'Exit 1 when a HARD_FAIL check failed (the proof is kept, but certification will refuse it); a failure ' +
    'exits 2 or more. ' +
    'Submitting a CERTIFIED table withdraws its certified view (certified_<env>.<table>) until the table is ' +
    'certified again: stderr says so, and the JSON line has viewWithdrawn: true and withdrawnView. ' +
    '--if-not-certified leaves a CERTIFIED table (and its view) as it is: nothing is submitted, stderr says ' +
    'so and the exit is 0 (under --json one line {skipped: true, tableId, state, certifiedView, reason}). ' +
    'Under --json one line, the proof.' +
    " gds waits up to 10 minutes for the answer: a scan under the service's own statement deadlines. " +
    'Each submission carries an Idempotency-Key, a new one each run unless --idempotency-key gives it: a ' +
    'connection lost after the service took the submission is retried with it and answered as the first ' +
    'time. A CI step that passes its own key and runs again gets the first answer: nothing is scanned again ' +
    'and the steward is not notified again; stderr says so, and the JSON line has replayed: true. That answer ' +
    'may be a failed proof: to submit again after fixing the data, give a new key.';
  static override examples = [
    '<%= config.bin %> gate submit t_42',
    '<%= config.bin %> gate submit t_42 --json',
    '<%= config.bin %> gate submit t_42 --if-not-certified',
    '<%= config.bin %> gate submit t_42 --idempotency-key "$GITHUB_RUN_ID-t_42"',
  ];
  static override args = { tableId: Args.string({ description: 'The table id or name.', required: true }) };
  static override flags = {
    env: tableEnvFlag,
    'if-not-certified': Flags.boolean({
      description:
        'Skip (exit 0) a CERTIFIED table instead of withdrawing its certified view until it is certified again.',
    }),
    'idempotency-key': Flags.string({
      description:
        'Send the submission with this key (1-200 printable ASCII characters, no spaces), e.g. a CI run id ' +
        'and the table: the same command run again within 7 days gets the first answer instead of submitting ' +
        'again. One key per table: the same key sent for another table is refused (422 idempotency_key_reused).',
      parse: async (input) => parseIdempotencyKey(input),
    }),
  };

  async run(): Promise<void> {
    const ifNotCertified = this.flags['if-not-certified'];
    const idempotencyKey = this.flags['idempotency-key'];
    const outcome = await this.out.during(`Running Gate 1 over every row of ${this.args.tableId}…`, () =>
      this.withClient(async (client) =>
        submitGate(client, await this.tableIdOf(client, this.args.tableId), {
          ifNotCertified,
          ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
        }),
      ),
    );
    if (outcome.kind === 'skipped') {
      const { kind: _kind, ...skipped } = outcome;
      if (this.out.json) this.out.record({ skipped: true, ...skipped });
      else this.out.info(`Skipped (--if-not-certified): ${outcome.reason}`);
      return;
    }
    const { proof } = outcome;
    // A replay answered to gds's own retry of a lost attempt is this run's submission, not an earlier one's:
    // the client does not count a replay once a lost attempt was sent again (with gds's random key, never one).
    const replayed = outcome.kind === 'submitted' && outcome.replayed;
    if (replayed && this.out.json) this.out.record({ ...proof, replayed: true });
    else await printProof(this.out, proof, this.tableLabel(this.args.tableId, proof.tableId));
    if (replayed) {
      const note =
        `Replayed: the service already took this submission (Idempotency-Key ${outcome.key}) and answered as ` +
        `then (proof of ${onOneLine(proof.ranAt)}): no new scan ran and the steward was not notified again.`;
      // Under --json every line of stderr is JSON: the note is a warning line there.
      if (this.out.json) this.out.warn(note);
      else this.out.info(note);
    }
    if (proof.viewWithdrawn === true && !this.out.json) {
      const view = onOneLine(proof.withdrawnView ?? '');
      this.out.warn(
        replayed
          ? `${proof.tableId} was CERTIFIED: its certified view ${view} was withdrawn by that submission; it stays withdrawn until the table is certified again (gds certify ${shellWord(proof.tableId)}).`
          : `${proof.tableId} was CERTIFIED: its certified view ${view} is withdrawn until the table is certified again (gds certify ${shellWord(proof.tableId)}). --if-not-certified skips a CERTIFIED table instead.`,
      );
    }
    if (!proof.passed) process.exitCode = ExitCode.Failure;
  }

  /** Exit 1 means a HARD_FAIL check failed: a failure (a status gds has no code for, a config file it cannot
   *  use, a --jq filter failing on the proof, a bug) ends with 2, as gate diff's. */
  protected override endingFailure(failure: CliError): CliError {
    return freeingExitOne(failure);
  }
}
