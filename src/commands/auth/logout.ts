import { BaseCommand } from '../../cli/base-command.js';
import { CliError, ExitCode } from '../../core/errors.js';
import type { RemovedProfile } from '../../auth/profiles.js';
import { canAsk, confirm, select } from '../../cli/prompt.js';
import { profileChoices } from '../../cli/profile-choices.js';
import { removeAllProfiles, removeProfile } from '../../auth/profiles.js';
import { configPath, loadConfig } from '../../auth/config.js';

export default class AuthLogout extends BaseCommand<typeof AuthLogout> {
  static override summary = 'Forget one profile, or every profile and the config file.';
  static override description =
    'With --profile: removes that profile and its keychain entry. Without it, on a terminal, it asks which ' +
    'profile (Enter: the active one), and asks again before removing them all. Off a terminal (or with ' +
    '--json or GDS_PROMPT_DISABLED) it removes every keychain entry the config file refers to, then the ' +
    'file itself (a damaged file too), and prints what it removed. Running it again changes nothing and ' +
    'succeeds. It does not revoke tokens on the server.';
  static override examples = [
    '<%= config.bin %> auth logout --profile staging',
    '<%= config.bin %> auth logout',
    '<%= config.bin %> auth logout --json',
  ];

  async run(): Promise<void> {
    const profile = this.flags.profile ?? (await this.askWhich());
    const options = { warn: (m: string) => this.out.warn(m) };
    const result =
      profile === undefined ? await removeAllProfiles(options) : await removeProfile(profile, options);
    const path = configPath();
    if (this.out.json) {
      this.out.record({ ...result, configPath: path });
      return;
    }
    if (result.removed.length === 0 && !result.configFileRemoved) {
      this.out.info(
        profile === undefined
          ? 'Nothing to remove: no config file.'
          : `No profile ${profile}: nothing removed.`,
      );
      return;
    }
    for (const removed of result.removed) this.out.success(removedLine(removed));
    if (result.configFileRemoved) this.out.success(`Removed ${path}.`);
    if (profile !== undefined && result.activeProfile !== null) {
      this.out.info(`Active profile: ${result.activeProfile}.`);
    }
  }

  /** On a terminal: which profile to forget (Enter: the active one), or all of them after a second yes.
   *  Off a terminal, undefined: every profile, as the spec says. */
  private async askWhich(): Promise<string | undefined> {
    if (this.out.json || !canAsk()) return undefined;
    let config;
    try {
      config = await loadConfig();
    } catch {
      return undefined;
    }
    const known = Object.keys(config.profiles).sort();
    if (known.length === 0) return undefined;
    const all = '\u0000all';
    const picked = await select(
      'Log out of which profile?',
      [
        ...(await profileChoices(known)),
        { value: all, name: `All ${known.length} profiles, and the config file` },
      ],
      { initial: config.activeProfile ?? known[0] },
    );
    if (picked !== all) return picked;
    if (await confirm(`Remove every profile (${known.join(', ')}) and their keychain entries?`))
      return undefined;
    throw new CliError('Nothing removed.', { exitCode: ExitCode.Failure, code: 'cancelled' });
  }
}

function removedLine({ name, keychainEntry }: RemovedProfile): string {
  if (keychainEntry === true) return `Removed profile ${name} and its keychain entry.`;
  if (typeof keychainEntry === 'string')
    return `Removed profile ${name}; its keychain entry could not be removed.`;
  return `Removed profile ${name}.`;
}
