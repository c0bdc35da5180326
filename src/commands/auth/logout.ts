import { BaseCommand } from '../../cli/base-command.js';
import type { RemovedProfile } from '../../auth/profiles.js';
import { removeAllProfiles, removeProfile } from '../../auth/profiles.js';
import { configPath } from '../../auth/config.js';

export default class AuthLogout extends BaseCommand<typeof AuthLogout> {
  static override summary = 'Forget one profile, or every profile and the config file.';
  static override description =
    'With --profile: removes that profile and its keychain entries (on Linux, one a save cut short left too). ' +
    'Without it, on a terminal or not, it removes every profile: their keychain entries (on Linux, every one of ' +
    'the config folder), then the ' +
    'file itself (a damaged file too), and prints what it removed. Running it again changes nothing and ' +
    'succeeds. It does not revoke tokens on the server.';
  static override examples = [
    '<%= config.bin %> auth logout --profile staging',
    '<%= config.bin %> auth logout',
    '<%= config.bin %> auth logout --json',
  ];

  async run(): Promise<void> {
    const profile = this.flags.profile;
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
}

function removedLine({ name, keychainEntry }: RemovedProfile): string {
  if (keychainEntry === true) return `Removed profile ${name} and its keychain entry.`;
  if (typeof keychainEntry === 'string')
    return `Removed profile ${name}; its keychain entry could not be removed.`;
  return `Removed profile ${name}.`;
}
