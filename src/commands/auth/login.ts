import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { chosenBrowser, hasDesktop, openBrowser } from '../../cli/browser.js';
import { CliError, ExitCode } from '../../core/errors.js';
import type { Me } from '../../cli/signed-in.js';
import { signedInAs, signedInLine } from '../../cli/signed-in.js';
import type { DeviceCode } from '../../auth/login.js';
import type { SavedProfile } from '../../auth/profiles.js';
import { login, loginBaseUrl } from '../../auth/login.js';
import { describeStorage } from '../../auth/secret-store.js';
import { updateConfig } from '../../auth/config.js';
import { onOneLine } from '../../core/terminal-text.js';
import { redactError } from '../../cli/secrets.js';
import { heldFailureExit } from '../../auth/finish-before-exit.js';

export default class AuthLogin extends BaseCommand<typeof AuthLogin> {
  static override summary =
    'Sign in with the browser (OAuth device authorization) and save the session in a profile.';
  static override description =
    'Reads the sign-in settings from {base}/.well-known/openid-configuration (base: --base, SERVICE_API_URL or ' +
    'the profile), prints a code and an address on stderr, opens the browser on a desktop terminal, and ' +
    'waits until the code is approved, denied (exit 3) or expires (exit 3). The tokens go to the OS keychain ' +
    '(else the 0600 config file) and are renewed automatically. Refuses to replace a profile that holds a ' +
    'live token unless --force, and one that another command saved into or logged out while the code waited ' +
    '(exit 1, profile_changed: the new sign-in is ended, not saved). Without a terminal, pass --no-browser to ' +
    'get the code, or authenticate CI ' +
    'with SERVICE_TOKEN and SERVICE_API_URL. GDS_CLIENT_ID overrides the client id (gds-cli).';
  static override examples = [
    '<%= config.bin %> auth login --base https://gds.example.com',
    '<%= config.bin %> auth login --profile staging --no-browser',
    '<%= config.bin %> auth login --force --json',
  ];
  static override flags = {
    force: Flags.boolean({ description: 'Sign in again even though the profile holds a live token.' }),
    browser: Flags.boolean({
      description:
        'Open the verification page in a browser (on a desktop terminal; GDS_BROWSER or BROWSER names the ' +
        'program). --no-browser (or GDS_BROWSER=false) ' +
        'only prints the address and the code, and works without a terminal.',
      default: true,
      allowNo: true,
    }),
  };

  async run(): Promise<void> {
    const { base, force, profile } = this.flags;
    const browser = this.flags.browser && chosenBrowser() !== false;
    const terminal = process.stderr.isTTY === true;
    if (browser && !terminal) {
      throw new CliError('gds auth login needs a terminal to show the sign-in code, and stderr is not one.', {
        exitCode: ExitCode.Usage,
        code: 'not_interactive',
        suggestion:
          'In CI, do not sign in: set SERVICE_TOKEN and SERVICE_API_URL (a CLI token or an integration ' +
          'token). To sign in from here anyway, run gds auth login --no-browser and open the address it prints.',
      });
    }
    const name = profile ?? 'default';
    const warn = (m: string) => this.out.warn(m);
    const serviceUrl = await loginBaseUrl(name, base, process.env, warn);
    const desktop = browser && terminal && process.stdout.isTTY === true && hasDesktop();
    const result = await login({
      profile: name,
      base: serviceUrl,
      force,
      warn,
      tell: (text) => this.out.info(text),
      // Under --json every line of stderr is JSON: the code as one ({"signIn":{message,userCode,…}}).
      ...(this.out.json ? { device: (code: DeviceCode) => this.out.errorRecord({ signIn: code }) } : {}),
      ...(desktop ? { onVerificationUri: openBrowser } : {}),
      // A Ctrl-C or SIGTERM held for the save ends gds once it is done: the failure said, or the save (without who
      // signed in: the service is not asked), then exit 130 or 143.
      sayFailure: (error) => {
        if (!(error instanceof CliError)) return undefined;
        this.out.error(redactError(error, this.argv));
        return heldFailureExit(error);
      },
      saySaved: (saved, signal) => {
        this.saySaved(saved, saved.profile.kind === 'session' ? saved.profile : {}, undefined);
        this.sayInterruptedAfter(signal, 'the save finished');
      },
      written: () => this.out.flush(),
    });
    const { saved } = result;
    // Who signed in, asked with the token this login saved: another sign-in may have replaced the profile since.
    // A service that does not answer /api/me does not undo the sign-in: the line is left out.
    const me = await signedInAs({
      flags: { token: result.accessToken, base: saved.profile.base },
      version: this.config.version,
      warn,
    }).catch(() => undefined);
    if (me !== undefined) await recordEmail(saved, me.user.email, warn);
    this.saySaved(saved, result, me);
  }

  /** The saved sign-in, and who signed in when the service said so. */
  private saySaved(
    saved: SavedProfile,
    session: { issuer?: string; expiresAt?: string },
    me: Me | undefined,
  ): void {
    const where = describeStorage(saved.storage, saved.profile.secretRef);
    if (this.out.json) {
      this.out.record({
        profile: saved.name,
        base: saved.profile.base,
        kind: saved.profile.kind,
        issuer: session.issuer ?? null,
        expiresAt: session.expiresAt ?? 'unknown',
        storage: saved.storage,
        storageLocation: where,
        active: saved.active,
        email: me?.user.email ?? null,
        role: me?.role ?? null,
      });
      return;
    }
    this.out.success(
      me !== undefined ? signedInLine(me, saved.profile.base) : `Signed in to ${saved.profile.base}.`,
    );
    this.out.info(`Profile ${saved.name}: tokens stored in ${where}.`);
    this.out.info(
      saved.active ? `${saved.name} is the active profile.` : `Use it with --profile ${saved.name}.`,
    );
  }
}

/**
 * Writes the e-mail into the credentials this login saved (only: another sign-in may have replaced them since), for
 * `auth status` and the profile lists. Best-effort: the sign-in is saved, so a failure (the config's lock held past
 * its wait, say) is a warning.
 */
async function recordEmail(
  saved: SavedProfile,
  email: string,
  warn: (message: string) => void,
): Promise<void> {
  try {
    await updateConfig((config) => {
      const stored = config.profiles[saved.name];
      if (stored !== undefined && stored.savedId === saved.profile.savedId) stored.user = email;
    });
  } catch (error) {
    const why = (error instanceof Error ? error.message : String(error)).replace(/\.$/, '');
    warn(
      `You are signed in, but your e-mail ${onOneLine(email)} was not recorded in profile ${saved.name} (${why}).`,
    );
  }
}
