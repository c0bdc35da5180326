// `gds tokens issue|refresh --save-profile <name>`: the integration token goes into an `integration`
// profile (secrets in the keychain or the 0600 file, like any profile), from which it renews itself
// (refresh.ts). Nothing is stored without the flag.
import { CliError, ExitCode } from '../core/errors.js';
import { stripControlCharacters } from '../core/terminal-text.js';
import { shellWord } from '../core/shell-word.js';
import type { TokenBundle } from '../contract/types.js';
import type { Env, IntegrationProfile, Profile } from './config.js';
import { checkProfileName, configPath, loadConfig } from './config.js';
import { finishBeforeExit } from './finish-before-exit.js';
import { describeLive, liveToken } from './login.js';
import { clockSkewMs, onLocalClock, saveBoundMs } from './refresh.js';
import type { SavedProfile } from './profiles.js';
import { saveIfUnchanged } from './profiles.js';
import { describeStorage, secretStorageSetting } from './secret-store.js';

/** What the service answered, and where: the tokens and what is known of the token they belong to. */
export interface ObtainedIntegrationTokens {
  base: string;
  tokens: TokenBundle;
  /**
   * Known when issued; a refresh answer says nothing but the tokens (§4.2), so a refresh reads the id,
   * audience, environment and scopes from the new access token's claims (integrationClaims).
   */
  id?: string;
  audience?: string;
  env?: string;
  scopes?: string[];
}

export interface SaveIntegrationOptions {
  /** Replace a profile that holds a live token. */
  force: boolean;
  /** `obtain` spends a refresh token: the tokens it answers exist nowhere else (ProfileOptions.onlyCopy). */
  onlyCopy?: boolean;
  /** With onlyCopy: shows the tokens, as the command does without --save-profile, when they cannot be saved. */
  showUnsaved?: (obtained: ObtainedIntegrationTokens) => void;
  /**
   * Says the failure gds exits with when a Ctrl-C or SIGTERM came meanwhile (not through the command's own error
   * handling): why the tokens were not saved, and what became of them. Returns the exit code (HeldWorkSay.failure):
   * none, the signal's (130 or 143).
   */
  sayFailure?: (error: unknown) => number | undefined | void;
  /** Settles once what was said is written (HeldWorkSay.written): a signal's exit waits for it. */
  written?: () => Promise<void>;
  /** The name the token is issued under (an issue): said when a signal ends gds before the service answered. */
  issuing?: string;
  env?: Env;
  warn?: (message: string) => void;
}

export interface SavedIntegration<T> {
  obtained: T;
  saved: SavedProfile;
  /** Where the secrets went, for people: the keychain entry or the config file. */
  location: string;
}

/**
 * Refuses a profile holding a live token (unless `force`) before anything is sent, runs `obtain` (the request
 * that mints or rotates the tokens) without the profile's lock, and saves its answer under it. The request may
 * wait long on the network: a `gds auth logout` or a sign-in into the profile meanwhile does not wait for it.
 * So the save re-reads the profile under the lock and refuses (profile_changed) when it is no longer the one
 * found before the request: a logged-out profile is not brought back, another command's save not replaced.
 * Whatever keeps the answer from being saved, it is not lost unsaid (notSaved).
 */
export async function saveIntegrationTokens<T extends ObtainedIntegrationTokens>(
  profileName: string,
  obtain: () => Promise<T>,
  options: SaveIntegrationOptions & {
    /**
     * Says the save, as the command does once it returns, when a Ctrl-C or SIGTERM (`signal`) then ends gds at once:
     * with no "Interrupted." error after it (HeldWorkSay.done).
     */
    saySaved?: (saved: SavedIntegration<T>, signal: NodeJS.Signals) => void;
  },
): Promise<SavedIntegration<T>> {
  const name = checkProfileName(profileName);
  const config = await loadConfig(options);
  // A GDS_SECRET_STORAGE that names no storage is refused now, before a token is issued or spent.
  secretStorageSetting(config, options.env);
  const existing = config.profiles[name];
  // A browser sign-in renews itself with its refresh token even after its access token expired.
  const signIn = existing?.kind === 'session' && !liveToken(existing);
  if (!options.force && (liveToken(existing) || signIn)) {
    const what = signIn ? 'a browser sign-in that renews itself' : `a live token (${describeLive(existing)})`;
    throw new CliError(`Profile ${name} already holds ${what}.`, {
      exitCode: ExitCode.Usage,
      code: 'profile_in_use',
      suggestion: `Nothing was issued or spent. Save into another profile, or replace this one with --save-profile ${name} --force`,
    });
  }
  // The answer is the only place its tokens are (a refresh token given is spent; an issued token is live on the
  // service): they are saved, or shown (a refresh) or named to revoke (an issue), before a Ctrl-C or SIGTERM ends
  // gds. The signal waits for a save under way, not for another gds's hold on the profile (GDS_LOCK_WAIT_MS).
  // A request still out when that wait ends leaves its answer unknown: said, with what to look for.
  return finishBeforeExit(
    (saving, interrupted) => obtainAndSave(name, existing, obtain, options, { saving, interrupted }),
    undefined,
    {
      failure: options.sayFailure,
      unanswered: (signal) =>
        options.sayFailure?.(
          requestUnanswered(signal, { issuing: options.issuing, profile: name, force: options.force }),
        ),
      done: options.saySaved,
      ...(options.written === undefined ? {} : { written: options.written }),
    },
  );
}

/**
 * A Ctrl-C or SIGTERM ended gds while the request of `tokens issue` (`issuing`: the token's name) or `tokens refresh`
 * was out, its answer not come within the bound: the service may have issued a token (its id unknown) or spent the
 * refresh token given, and nothing was saved into `profile` (--save-profile) or shown (without it).
 */
export function requestUnanswered(
  signal: NodeJS.Signals,
  request: { issuing?: string; profile?: string; force?: boolean },
): CliError {
  const interrupted = `Interrupted${signal === 'SIGTERM' ? ' (SIGTERM)' : ''} before the service answered`;
  const { issuing, profile } = request;
  const failure = { exitCode: ExitCode.Interrupted, code: 'interrupted' };
  if (issuing === undefined) {
    const into = profile === undefined ? '' : ` --save-profile ${profile}${request.force ? ' --force' : ''}`;
    return new CliError(
      `${interrupted}: it may have spent the refresh token you gave. No new tokens were ` +
        `${profile === undefined ? 'shown' : `saved in profile ${profile}`}.`,
      {
        ...failure,
        suggestion:
          'Present it again (the service answers it again with the same new tokens within its reuse grace): ' +
          `printf %s "$REFRESH_TOKEN" | gds tokens refresh${into}. If it is refused, issue a new token.`,
      },
    );
  }
  return new CliError(
    `${interrupted}: it may have issued the token "${stripControlCharacters(issuing)}", which was not ` +
      `${profile === undefined ? 'shown' : `saved in profile ${profile}`}, and whose id gds did not learn.`,
    { ...failure, suggestion: `Look for it with gds tokens list, and end it with gds tokens revoke <id>.` },
  );
}

/** Runs `obtain`, then saves its answer into the profile under its lock (see saveIntegrationTokens). */
async function obtainAndSave<T extends ObtainedIntegrationTokens>(
  name: string,
  existing: Profile | undefined,
  obtain: () => Promise<T>,
  options: SaveIntegrationOptions,
  held: { saving: (ms: number, cut?: (signal: NodeJS.Signals) => void) => void; interrupted: AbortSignal },
): Promise<SavedIntegration<T>> {
  const obtained = await obtain();
  held.saving(saveBoundMs(options.env, 2), (signal) =>
    options.sayFailure?.(saveCut(name, signal, obtained, options)),
  );
  const { base, tokens, id, audience, env, scopes } = obtained;
  // Kept on this machine's clock, as a refresh keeps them (clockSkewMs).
  const skew = clockSkewMs(tokens.accessToken);
  const fields: IntegrationProfile = {
    kind: 'integration',
    base,
    expiresAt: onLocalClock(tokens.expiresAt, skew),
    refreshExpiresAt: onLocalClock(tokens.refreshExpiresAt, skew),
    ...(id === undefined ? {} : { tokenId: id }),
    ...(audience === undefined ? {} : { audience }),
    ...(env === undefined ? {} : { env }),
    ...(scopes === undefined ? {} : { scopes }),
  };
  let saved: SavedProfile;
  try {
    const result = await saveIfUnchanged(
      name,
      existing,
      fields,
      { accessToken: obtained.tokens.accessToken, refreshToken: obtained.tokens.refreshToken },
      { ...options, signal: held.interrupted },
    );
    if ('changed' in result) throw profileChanged(name, result.changed);
    saved = result.saved;
  } catch (error) {
    throw notSaved(name, error, obtained, options);
  }
  return {
    obtained,
    saved,
    location: describeStorage(saved.storage, saved.profile.secretRef, options.env),
  };
}

/**
 * A Ctrl-C or SIGTERM held for the save of the answer, and gds ended before the save finished (a second signal, or
 * the bound: a keychain that does not answer): it may or may not be in profile `name`. Tokens that exist nowhere
 * else are shown, as notSaved shows them; an issued token is named, to end should the profile not hold it.
 */
function saveCut(
  name: string,
  signal: NodeJS.Signals,
  obtained: ObtainedIntegrationTokens,
  options: SaveIntegrationOptions,
): CliError {
  const token = obtained.id === undefined ? 'the integration token' : `integration token ${obtained.id}`;
  const cut =
    `Interrupted${signal === 'SIGTERM' ? ' (SIGTERM)' : ''} while the new tokens of ${token} were being saved in ` +
    `profile ${name}, before the save finished: they may not have been saved`;
  const failure = { exitCode: ExitCode.Interrupted, code: 'interrupted' };
  const where = `its tokenId in ${configPath(options.env)}`;
  if (options.onlyCopy === true && options.showUnsaved !== undefined) {
    options.showUnsaved(obtained);
    return new CliError(
      `${cut}. They are shown instead, the only copy: the refresh token you gave is spent.`,
      {
        ...failure,
        suggestion: `Put them in your secret manager now, unless profile ${name} holds them (${where}).`,
      },
    );
  }
  const revoke = revokeCommand(obtained);
  return new CliError(`${cut}, and are not shown.`, {
    ...failure,
    suggestion: `Unless profile ${name} holds the token (${where}), end it: ${revoke}.`,
  });
}

/** How to end the token of `obtained`: by its id (the service's, quoted for the shell), or found by its name when
 *  the service gave none. */
function revokeCommand(obtained: ObtainedIntegrationTokens): string {
  return obtained.id === undefined
    ? 'gds tokens list, then gds tokens revoke <id>'
    : `gds tokens revoke ${shellWord(obtained.id)}`;
}

/** The profile changed while the request was out (see saveIntegrationTokens). */
function profileChanged(name: string, current: Profile | undefined): CliError {
  const what =
    current === undefined
      ? `Profile ${name} was logged out`
      : `Profile ${name} changed (another gds command saved into it)`;
  return new CliError(`${what} while the request was out.`, {
    exitCode: ExitCode.Failure,
    code: 'profile_changed',
  });
}

/**
 * Why the answer was not saved (the profile changed, its lock was held too long, the save failed), said with what
 * became of the tokens. Tokens that exist nowhere else (onlyCopy: the refresh token given is spent) are shown as
 * the command shows them without --save-profile, never lost; an issued token is not shown, and named to revoke.
 */
function notSaved(
  name: string,
  error: unknown,
  obtained: ObtainedIntegrationTokens,
  options: SaveIntegrationOptions,
): CliError {
  const cause = error instanceof CliError ? error : undefined;
  const why = (cause?.message ?? (error instanceof Error ? error.message : String(error))).replace(/\.$/, '');
  const token = obtained.id === undefined ? 'the integration token' : `integration token ${obtained.id}`;
  const revoke = revokeCommand(obtained);
  const failure = { exitCode: cause?.exitCode ?? ExitCode.Failure, code: cause?.code ?? 'save_failed' };
  if (options.onlyCopy === true && options.showUnsaved !== undefined) {
    options.showUnsaved(obtained);
    return new CliError(
      `${why}: the new tokens of ${token} were not saved in profile ${name}. They are shown instead, the only ` +
        `copy: the refresh token you gave is spent.`,
      {
        ...failure,
        suggestion:
          'Put them in your secret manager now, or store them in a profile (this spends the refresh token shown ' +
          `for a new pair): printf %s "$REFRESH_TOKEN" | gds tokens refresh --save-profile ${name}` +
          `${options.force ? ' --force' : ''}. To end the token instead: ${revoke}`,
      },
    );
  }
  const spent = options.onlyCopy === true ? ' The refresh token you gave is spent.' : '';
  return new CliError(`${why}: the new tokens of ${token} were not saved, and are not shown.${spent}`, {
    ...failure,
    suggestion: `End the token nothing can renew: ${revoke}. Then issue a new one if you still need it.`,
  });
}
