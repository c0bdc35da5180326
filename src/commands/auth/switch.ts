import { BaseCommand } from '../../cli/base-command.js';
import { CliError, ExitCode } from '../../core/errors.js';
import { canAsk, select } from '../../cli/prompt.js';
import { profileChoices } from '../../cli/profile-choices.js';
import { loadConfig, updateConfig } from '../../auth/config.js';
import { echoed, echoedList } from '../../core/echo.js';

export default class AuthSwitch extends BaseCommand<typeof AuthSwitch> {
  static override summary = 'Make another stored profile the active one.';
  static override description =
    'With --profile, that profile becomes the active one (the one used when no --profile is given). ' +
    'Without it, on a terminal, the stored profiles are listed to pick from; off a terminal --profile is ' +
    'required.';
  static override examples = [
    '<%= config.bin %> auth switch --profile staging',
    '<%= config.bin %> auth switch',
  ];

  async run(): Promise<void> {
    const config = await loadConfig();
    const known = Object.keys(config.profiles).sort();
    if (known.length === 0) {
      throw new CliError('No profile is stored.', {
        exitCode: ExitCode.Usage,
        code: 'no_profiles',
        suggestion: 'Create one: gds auth login, or gds auth set --token <t> --base <url>.',
      });
    }
    const name = this.flags.profile ?? (await this.pick(known, config.activeProfile));
    if (!known.includes(name)) {
      throw new CliError(`No profile named ${echoed(name)}. Known profiles: ${echoedList(known)}.`, {
        exitCode: ExitCode.Usage,
        code: 'unknown_profile',
        suggestion: `Pick one of them: gds auth switch --profile ${known[0] ?? '<name>'}`,
        details: { profile: name, known },
      });
    }
    const previous = config.activeProfile;
    await updateConfig((c) => {
      c.activeProfile = name;
    });
    if (this.out.json) {
      this.out.record({ activeProfile: name, previous, base: config.profiles[name]?.base ?? null });
      return;
    }
    this.out.success(`${name} is the active profile (${config.profiles[name]?.base ?? 'no base URL'}).`);
  }

  private async pick(known: readonly string[], active: string | null): Promise<string> {
    if (!canAsk() || this.out.json) {
      throw new CliError('gds auth switch needs --profile <name> when it cannot ask.', {
        exitCode: ExitCode.Usage,
        code: 'missing_flag',
        suggestion: `Known profiles: ${echoedList(known)}. Run: gds auth switch --profile <name>`,
        details: { known },
      });
    }
    return select('Which profile?', await profileChoices(known), active === null ? {} : { initial: active });
  }
}
