import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { boundedText } from '../../cli/governance-flags.js';
import { MAX_NOTE_CHARS } from '../../core/text-bounds.js';
import { versionNumberOf } from '../../services/gates.js';
import { restoreVersion } from '../../services/versions.js';

export default class VersionsRestore extends ApiCommand<typeof VersionsRestore> {
  static override summary = 'Put an earlier certified contract back as a new version.';
  static override description =
    'History is never rewritten: the restore is a new version of kind RESTORE, and a recertification request ' +
    'is filed. --env asserts the table environment (a mismatch is refused); restoring across environments is ' +
    'not supported.';
  static override examples = [
    '<%= config.bin %> versions restore t_42 --to 2 --reason "v3 grain was wrong"',
    '<%= config.bin %> versions restore t_42 --to 2 --reason rollback --env production --json',
  ];
  static override args = { tableId: Args.string({ description: 'The table id or name.', required: true }) };
  static override flags = {
    to: Flags.custom<number>({
      description: 'The version to restore: 2, or v2 as versions list shows it.',
      required: true,
      // As gate diff takes --from/--to: the number, or the number after a v (what versions list prints).
      parse: async (input) => {
        const version = versionNumberOf(input);
        if (version === undefined)
          throw new Error(
            `${JSON.stringify(input)} is not a version: give a whole number greater than or equal to 1, e.g. 2 or v2`,
          );
        return version;
      },
    })(),
    reason: Flags.string({
      parse: boundedText('reason', MAX_NOTE_CHARS),
      description: 'Why it is restored (audit trail).',
      required: true,
    }),
    env: Flags.string({ description: 'The environment the table must be in.' }),
  };

  async run(): Promise<void> {
    const { to, reason, env } = this.flags;
    const restored = await this.withClient(async (client) =>
      restoreVersion(client, await this.tableIdOf(client, this.args.tableId), { to, reason, env }),
    );
    if (this.out.json) {
      this.out.record(restored);
      return;
    }
    this.out.success(
      `Restored v${to} of ${this.tableLabel(this.args.tableId, restored.tableId)} as v${restored.version.version}; state ${restored.state}.`,
    );
    this.out.info(`Recertification request ${restored.recertificationRequestId} filed.`);
  }
}
