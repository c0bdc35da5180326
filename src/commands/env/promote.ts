import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { tableEnvFlag } from '../../cli/governance-flags.js';
import { dryRunFlag, printPreview } from '../../cli/write-preview.js';
import type { PromotionOutcome } from '../../services/promotions.js';
import type { ApiClient } from '../../client/index.js';
import { writesToStdout, writeOutputFile } from '../../io/output-file.js';
import { writeDocument } from '../../cli/gate-output.js';
import { readTextInput } from '../../io/input.js';
import { withSession } from '../../cli/session.js';
import { resolveTableId } from '../../services/table-ref.js';
import * as promotions from '../../services/promotions.js';
import { shellWord } from '../../core/shell-word.js';

const modes = ['dest-profile', 'bundle-out', 'bundle-in'];

export default class EnvPromote extends ApiCommand<typeof EnvPromote> {
  static override summary = "Promote a table's artifact to another environment.";
  static override description =
    "Registers the artifact on the target environment's connector, QUARANTINED with its auto-baseline queued. " +
    '--dest-profile relays across two profiles: the bundle is read with the current credentials and ' +
    "registered with the other profile's (two workspaces or services). --bundle-out writes the portable JSON " +
    'bundle to a file (0600, never over an existing file without --force) and promotes nothing; --bundle-in ' +
    'registers such a file on --to, after checking its sha256 locally: a changed bundle is refused (exit 2) ' +
    'and nothing is sent, as is a bundle of another table than the one named. The table already holding the ' +
    'name in the target environment is compared first: when it holds the same definition, gate1.yml and contract ' +
    'nothing changes ("No change", exit 0); otherwise the promotion is refused (exit 6) unless --replace names ' +
    'it. --dry-run prints the diff and changes nothing. An unknown --to is exit 5 naming the environment meant, one ' +
    'without an active connector exit 7, one outside your environment scope exit 4. A Mode B (custody) table is not promoted or bundled (exit 7, ' +
    'see docs/spec-deviations.md): its rows stay in its environment, its gate1.yml and contract are copied by hand.';
  static override examples = [
    '<%= config.bin %> env promote t_42 --to staging',
    '<%= config.bin %> env promote t_42 --to staging --dry-run',
    '<%= config.bin %> env promote t_42 --to staging --replace t_57',
    '<%= config.bin %> env promote t_42 --to production --dest-profile prod',
    '<%= config.bin %> env promote t_42 --to production --bundle-out t_42.bundle.json',
    '<%= config.bin %> --profile prod env promote t_42 --to production --bundle-in t_42.bundle.json',
  ];
  static override args = {
    tableId: Args.string({ description: 'The table id or name (the source table).', required: true }),
  };
  static override flags = {
    env: tableEnvFlag,
    to: Flags.string({ description: 'The target environment label.', required: true }),
    'dest-profile': Flags.string({
      description: 'Register with this profile (read with the current credentials).',
      exclusive: modes.filter((m) => m !== 'dest-profile'),
    }),
    'bundle-out': Flags.string({
      description: 'Write the portable bundle to this file instead of promoting (- is stdout).',
      exclusive: modes.filter((m) => m !== 'bundle-out'),
    }),
    'bundle-in': Flags.string({
      description: 'Register the bundle in this file (- for stdin) on --to.',
      exclusive: modes.filter((m) => m !== 'bundle-in'),
    }),
    replace: Flags.string({
      description:
        'The governance id of the table already in the target environment, to replace it (exit 6 naming it otherwise).',
      exclusive: ['bundle-out'],
    }),
    'dry-run': { ...dryRunFlag, exclusive: ['bundle-out'] },
    force: Flags.boolean({
      description: 'Replace the --bundle-out file if it exists.',
      default: false,
    }),
  };

  async run(): Promise<void> {
    const { tableId } = this.args;
    const { to, force } = this.flags;
    const bundleOut = this.flags['bundle-out'];
    const bundleIn = this.flags['bundle-in'];
    const destProfile = this.flags['dest-profile'];
    if (writesToStdout(bundleOut, { flag: '--bundle-out', json: this.out.json })) {
      const bundle = await this.withClient(async (client) =>
        promotions.exportBundle(client, await this.tableIdOf(client, tableId), to),
      );
      await writeDocument(this.out, `${JSON.stringify(bundle, null, 2)}\n`);
      return;
    }
    if (bundleOut !== undefined) {
      const bundle = await this.withClient(async (client) =>
        promotions.exportBundle(client, await this.tableIdOf(client, tableId), to),
      );
      await writeOutputFile(bundleOut, `${JSON.stringify(bundle, null, 2)}\n`, {
        force,
        mode: 0o600,
        flag: '--bundle-out',
        example: 'bundle.json',
      });
      if (this.out.json) this.out.record({ tableId, file: bundleOut, sha256: bundle.sha256 });
      else {
        this.out.success(`Wrote the bundle of ${tableId} to ${bundleOut} (sha256 ${bundle.sha256}).`);
        this.out.info(
          `Register it on ${to}: gds env promote ${shellWord(tableId)} --to ${shellWord(to)} --bundle-in ${shellWord(bundleOut)}`,
        );
      }
      return;
    }
    const landing = { replaceId: this.flags.replace, dryRun: this.flags['dry-run'] };
    let outcome: PromotionOutcome;
    if (bundleIn !== undefined) {
      const input = await readTextInput(bundleIn, { flag: '--bundle-in', what: 'a bundle' });
      const bundle = promotions.parseBundle(input.text, input.name);
      promotions.checkBundleTable(bundle, tableId, input.name);
      outcome = await this.out.during(`Registering the bundle of ${tableId} on ${to}…`, () =>
        this.withClient(async (client) =>
          promotions.importBundle(client, bundle, to, {
            ...landing,
            replaceId: await this.replaceIdOf(client, landing.replaceId, to),
          }),
        ),
      );
    } else if (destProfile !== undefined) {
      outcome = await this.withClient(async (source) => {
        const id = await this.tableIdOf(source, tableId);
        return this.withDestination(destProfile, async (destination) =>
          promotions.relayPromotion(source, destination, id, to, {
            ...landing,
            replaceId: await this.replaceIdOf(destination, landing.replaceId, to),
          }),
        );
      });
    } else {
      outcome = await this.out.during(`Promoting ${tableId} to ${to}…`, () =>
        this.withClient(async (client) =>
          promotions.promoteTable(client, await this.tableIdOf(client, tableId), to, {
            ...landing,
            replaceId: await this.replaceIdOf(client, landing.replaceId, to),
          }),
        ),
      );
    }
    if (outcome.kind === 'preview') {
      printPreview(
        this.out,
        { changed: outcome.changed, diff: outcome.diff },
        `No change: ${tableId} is already promoted to ${to} as it is.`,
      );
      return;
    }
    const { result } = outcome;
    if (this.out.json) {
      this.out.record(result);
      return;
    }
    if (outcome.kind === 'unchanged') {
      this.out.success(
        `No change: ${result.tableId} in ${result.environmentLabel} already holds this definition, gate1.yml and contract.`,
      );
      return;
    }
    this.out.success(
      `Promoted ${tableId} to ${result.environmentLabel}: table ${result.tableId} on connector ${result.connectorId}.`,
    );
    this.out.printField(`Governance id: ${result.governanceId}`);
    this.out.printField(`Tracking:      ${result.trackingUrl}`);
    if (result.job) this.out.printField(`Baseline job:  ${result.job.id} ${result.job.status}`);
  }

  /** A second session on `profile` alone: SERVICE_TOKEN/SERVICE_API_URL and --token/--base are the source's. */
  private async withDestination<R>(profile: string, work: (client: ApiClient) => Promise<R>): Promise<R> {
    const { SERVICE_TOKEN: _token, SERVICE_API_URL: _base, ...env } = process.env;
    return withSession(
      {
        flags: {
          profile,
          'max-retry-after': (this.flags as { 'max-retry-after'?: number })['max-retry-after'],
        },
        version: this.config.version,
        env,
        warn: (message) => this.out.warn(message),
      },
      (session) => work(session.client),
    );
  }

  /** --replace as an id: a table name is looked up in the target environment. */
  private async replaceIdOf(client: ApiClient, replace: string | undefined, to: string) {
    if (replace === undefined) return undefined;
    return resolveTableId(client, replace, { env: to, flag: '--replace' });
  }
}
