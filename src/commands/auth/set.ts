import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { CliError, ExitCode, restated } from '../../core/errors.js';
import { readTextInput } from '../../io/input.js';
import { TOKEN_READ_LIMIT_BYTES } from '../../core/artifact-bounds.js';
import { maskToken } from '../../core/redact.js';
import type { Me } from '../../cli/signed-in.js';
import { canAsk, secret as askSecret } from '../../cli/prompt.js';
import { refuseClientToken, signedInAs, profileOnlyEnv } from '../../cli/signed-in.js';
import { saveIfUnchanged, staticProfile } from '../../auth/profiles.js';
import { describeStorage } from '../../auth/secret-store.js';
import type { Profile } from '../../auth/config.js';
import { checkProfileName, configPath, loadConfig } from '../../auth/config.js';
import { checkBaseUrl } from '../../auth/credentials.js';
import { describeLive, liveToken } from '../../auth/login.js';

export default class AuthSet extends BaseCommand<typeof AuthSet> {
  static override summary = 'Store a CLI token and the API base URL in a profile.';
  static override description =
    'On a terminal without --token the token is asked for, hidden as it is pasted. The token goes to the OS keychain when one answers, else to the config file (mode 600), and stderr ' +
    'says so. Set GDS_SECRET_STORAGE (or "secretStorage" in the config file) to keychain to refuse the ' +
    'file, or to file to skip the keychain. The profile (default: "default") becomes the active one when ' +
    'none is. `--token -` reads the token from stdin, keeping it out of the shell history. The token is ' +
    'never printed. The token is checked with the service first (GET /api/me) and nothing is saved when ' +
    'it is refused; --no-verify skips the check (offline set-up). Nor is it saved over a profile that another ' +
    'command saved into or logged out during the check (exit 1, profile_changed). Client tokens (tf_…) are ' +
    'refused: the REST API never accepts them.';
  static override examples = [
    'printf %s "$GDS_TOKEN" | <%= config.bin %> auth set --token - --base https://gds.example.com --profile staging',
    '<%= config.bin %> auth set --token cli_abc123 --base https://gds.example.com',
    '<%= config.bin %> auth set --token cli_abc123 --base http://127.0.0.1:8080 --profile local --json',
    '<%= config.bin %> auth set --token cli_abc123 --base https://gds.example.com --no-verify',
  ];
  static override flags = {
    verify: Flags.boolean({
      description: 'Check the token with the service before saving it (--no-verify skips the check).',
      default: true,
      allowNo: true,
    }),
    force: Flags.boolean({
      description:
        'Replace a profile that holds a live sign-in (browser or integration) or a token of another user.',
    }),
  };

  async run(): Promise<void> {
    const { base, profile } = this.flags;
    if (base === undefined || (this.flags.token === undefined && !canAsk())) {
      throw new CliError('gds auth set needs both --token and --base.', {
        exitCode: ExitCode.Usage,
        code: 'missing_flag',
        suggestion: 'Run: gds auth set --token <t> --base <url> [--profile <name>]',
      });
    }
    // Checked first: the prompt and the messages below show it.
    const checkedBase = checkBaseUrl(base, '--base');
    if (this.flags.token === '-' && process.stdin.isTTY === true) {
      throw new CliError(
        '--token - reads the token from stdin, and stdin is this terminal: nothing is piped in.',
        {
          exitCode: ExitCode.Usage,
          code: 'stdin_is_terminal',
          suggestion:
            `Pipe it in: printf %s "$TOKEN" | gds auth set --token - --base ${checkedBase}` +
            ' (or leave --token out on a terminal to paste it, hidden).',
        },
      );
    }
    // On a terminal without --token: asked for, masked, so it stays out of the shell history.
    const token = this.flags.token ?? (await askSecret(`Paste the CLI token for ${checkedBase}:`));
    const secret = (
      token === '-'
        ? (await readTextInput('-', { flag: '--token', maxBytes: TOKEN_READ_LIMIT_BYTES, what: 'a token' }))
            .text
        : token
    ).trim();
    // Bad input is refused before any request; a token with spaces is refused by staticProfile below.
    refuseClientToken(secret);
    const name = checkProfileName(profile ?? 'default');
    // Read before the requests below: the save replaces only this (saveIfUnchanged).
    const existing = (await loadConfig({ warn: (m) => this.out.warn(m) })).profiles[name];
    const me =
      this.flags.verify && secret !== '' && !/[\s\p{Cc}]/u.test(secret)
        ? await signedInAs({
            flags: { token: secret, base: checkedBase },
            version: this.config.version,
            warn: (m) => this.out.warn(m),
          }).catch((error: unknown) => {
            throw refusedAs(
              error,
              this.flags.token === undefined
                ? 'you pasted'
                : this.flags.token === '-'
                  ? 'read from stdin'
                  : undefined,
            );
          })
        : undefined;
    if (!this.flags.force) await this.refuseToReplace(name, existing, secret, me);
    const { fields, secrets } = staticProfile({
      name,
      token: secret,
      base,
      ...(me === undefined ? {} : { user: me.user.email }),
    });
    const result = await saveIfUnchanged(name, existing, fields, secrets, {
      warn: (m) => this.out.warn(m),
    }).catch((error: unknown) => {
      throw tokenSaveFailed(name, error);
    });
    if ('changed' in result) throw tokenNotSaved(name, result.changed, checkedBase);
    const saved = result.saved;
    const where = describeStorage(saved.storage, saved.profile.secretRef);
    if (this.out.json) {
      this.out.record({
        profile: saved.name,
        base: saved.profile.base,
        token: maskToken(secret),
        storage: saved.storage,
        storageLocation: where,
        active: saved.active,
        verified: me !== undefined,
        ...(me === undefined ? {} : { email: me.user.email, role: me.role }),
      });
      return;
    }
    this.out.success(`Saved profile ${saved.name}: ${saved.profile.base} with token ${maskToken(secret)}.`);
    if (me !== undefined) this.out.info(`The token signs in as ${me.user.email} (${me.role}).`);
    this.out.info(`The token is stored in ${where}.`);
    if (saved.active) this.out.info(`${saved.name} is the active profile.`);
    else this.out.info(`Use it with --profile ${saved.name}.`);
  }

  /**
   * As `auth login` does: a profile holding a live browser sign-in or integration token, or a CLI token
   * of another user, is replaced only with --force. An expired or refused token is not worth keeping.
   */
  private async refuseToReplace(
    name: string,
    existing: Profile | undefined,
    secret: string,
    me: Me | undefined,
  ): Promise<void> {
    if (existing === undefined || !liveToken(existing)) return;
    const refuse = (what: string) =>
      new CliError(`Profile ${name} holds ${what}; not replacing it.`, {
        exitCode: ExitCode.Usage,
        code: 'profile_in_use',
        suggestion:
          `Store this token in another profile (--profile <name>), or replace it anyway with --force ` +
          `(gds auth logout --profile ${name} first also works).`,
        details: { profile: name, kind: existing.kind },
      });
    if (existing.kind !== 'static') throw refuse(describeLive(existing));
    if (me === undefined) return;
    const before = await signedInAs({
      flags: { profile: name },
      env: profileOnlyEnv(),
      version: this.config.version,
    }).catch(() => undefined);
    if (before !== undefined && before.user.id !== me.user.id && secret !== '') {
      throw refuse(`a live CLI token of ${before.user.email}, not of ${me.user.email}`);
    }
  }
}

/**
 * The profile changed while the token was checked: another command saved into it or logged it out. The token,
 * the person's own, is not saved over that; nothing else became of it.
 */
function tokenNotSaved(name: string, now: Profile | undefined, base: string): CliError {
  const what =
    now === undefined
      ? `Profile ${name} was logged out while the token was checked`
      : `Profile ${name} changed while the token was checked (another gds command saved into it)`;
  const again = `gds auth set --profile ${name} --base ${base} --token -`;
  return new CliError(`${what}: the token was not saved.`, {
    exitCode: ExitCode.Failure,
    code: 'profile_changed',
    suggestion:
      now === undefined
        ? `Store it again if you still want it: ${again}`
        : `Keep what it holds now, or replace it: ${again} --force. Or store it in a profile of its own: --profile <name>`,
    details: { profile: name },
  });
}

/**
 * The save failed (a disk full, the config file's lock held past its wait): said as such, not as an error gds did
 * not expect. The profile holds what it held (the new token's keychain entry is one no profile names: profiles.ts).
 */
function tokenSaveFailed(name: string, error: unknown): unknown {
  if (error instanceof CliError || !(error instanceof Error)) return error;
  const again = `gds auth set --profile ${name} --token - --base <url>`;
  return new CliError(`${error.message.replace(/\.$/, '')}: the token was not saved in profile ${name}.`, {
    exitCode: ExitCode.Failure,
    code: 'save_failed',
    suggestion: `Store it again once ${configPath()} can be written: ${again}`,
  });
}

/**
 * A refused token's advice names where it came from: the one pasted at the prompt or read from stdin is
 * not "the token from the command line".
 */
function refusedAs(error: unknown, how: string | undefined): unknown {
  const suggestion = error instanceof CliError ? error.suggestionLines : undefined;
  if (how === undefined || suggestion === undefined) return error;
  return restated(error as CliError, {
    suggestion: suggestion.map((line) => line.replace('The token from the command line', `The token ${how}`)),
  });
}
