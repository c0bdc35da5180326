// `gds auth login`: OAuth 2.0 device authorization (RFC 8628) against whatever authorization server the
// service's discovery document names (RFC 8414 / OpenID discovery at {base}/.well-known/openid-configuration),
// through openid-client. The tokens land in a `session` profile; the token endpoint is kept beside them
// so a refresh (refresh.ts) needs no discovery round trip. openid-client loads only inside login().
import type * as OpenIdClient from 'openid-client';
import { createApiClient } from '../client/index.js';
import { staticToken } from '../client/transport.js';
import { CliError, ExitCode } from '../core/errors.js';
import { addRunSecret } from '../core/redact.js';
import { stripControlCharacters } from '../core/terminal-text.js';
import { INSECURE_URL_CODE, isInsecureUrl } from '../core/url-policy.js';
import type { Env, Profile } from './config.js';
import { checkProfileName, configPath, loadConfig } from './config.js';
import { checkBaseUrl, refuseInsecureUrl } from './credentials.js';
import type { ProfileFields, SavedProfile } from './profiles.js';
import { saveIfUnchanged } from './profiles.js';
import { finishBeforeExit } from './finish-before-exit.js';
import type { SessionExtras } from './refresh.js';
import { expiresAtFrom, saveBoundMs } from './refresh.js';
import { oidcFetch } from './oidc-fetch.js';
import { secretStorageSetting } from './secret-store.js';
import { openIdClient } from './openid-client.js';

export const DEFAULT_CLIENT_ID = 'gds-cli';
export const LOGIN_SCOPE = 'openid offline_access';

export interface LoginOptions {
  profile: string;
  /** The service's base URL (already checked: http(s), no credentials). */
  base: string;
  /** Sign in again even though the profile holds a live token. */
  force: boolean;
  env?: Env;
  warn?: (message: string) => void;
  /** Shown to the person (stderr): the code and where to enter it. */
  tell: (text: string) => void;
  /** Instead of `tell`, the same as fields (a `--json` run, whose every stderr line is JSON). */
  device?: (code: DeviceCode) => void;
  /** Called with the verification address once the code is shown (the command opens a browser). */
  onVerificationUri?: (uri: string) => void;
  /** Aborts the wait (Ctrl-C); the code's own lifetime bounds it otherwise. */
  signal?: AbortSignal;
  /**
   * What the command says when a Ctrl-C or SIGTERM held for the save (finishBeforeExit) ends gds once the save is
   * done (HeldWorkSay): the save's failure (the sign-in not saved, and ended), or the save, then the exit by the
   * signal; `written` settles once that is written.
   */
  sayFailure?: (error: unknown) => number | undefined | void;
  saySaved?: (saved: SavedProfile, signal: NodeJS.Signals) => void;
  written?: () => Promise<void>;
}

/** The code the person enters, and where (each stripped of control characters), as `tell` says it. */
export interface DeviceCode {
  message: string;
  verificationUri: string;
  verificationUriComplete?: string;
  userCode: string;
  expiresIn: number;
}

export interface LoginResult {
  saved: SavedProfile;
  /** The access token this sign-in saved: who signed in is asked with it, not with what the profile holds by then. */
  accessToken: string;
  issuer: string;
  expiresAt: string;
}

/** Client id of the CLI: GDS_CLIENT_ID, else `gds-cli`. */
export function clientIdFrom(env: Env): string {
  return env.GDS_CLIENT_ID || DEFAULT_CLIENT_ID;
}

/** The service to sign in to: --base, else SERVICE_API_URL, else the profile's base; exit 2 when none. */
export async function loginBaseUrl(
  profile: string,
  flag: string | undefined,
  env: Env,
  warn?: (message: string) => void,
): Promise<string> {
  if (flag) return checkBaseUrl(flag, '--base');
  if (env.SERVICE_API_URL) return checkBaseUrl(env.SERVICE_API_URL, 'SERVICE_API_URL');
  const existing = (await loadConfig({ env, warn })).profiles[checkProfileName(profile)];
  if (existing) return checkBaseUrl(existing.base, `profile ${profile}`);
  throw new CliError('gds auth login needs the address of the service.', {
    exitCode: ExitCode.Usage,
    code: 'no_base_url',
    suggestion: `Run: gds auth login --base https://gds.example.com${profile === 'default' ? '' : ` --profile ${profile}`}`,
  });
}

/** True when plain http is in use (and allowed); a CliError (exit 2) for http to any other host. */
export function insecureAllowed(url: URL, what: string): boolean {
  refuseInsecureUrl(url, what);
  return url.protocol === 'http:';
}

/** A profile holds a live token: a static token (no expiry known), a session token not yet expired, or
 *  an integration token whose refresh token has not expired (it renews itself until then). */
export function liveToken(profile: Profile | undefined, now = Date.now()): boolean {
  if (profile === undefined) return false;
  if (profile.kind === 'static') return true;
  const until =
    profile.kind === 'integration' ? (profile.refreshExpiresAt ?? profile.expiresAt) : profile.expiresAt;
  return until !== undefined && Date.parse(until) > now;
}

export async function login(options: LoginOptions): Promise<LoginResult> {
  const env = options.env ?? process.env;
  const name = checkProfileName(options.profile);
  const stored = await loadConfig({ env, warn: options.warn });
  // A GDS_SECRET_STORAGE that names no storage is refused now, not after the sign-in.
  secretStorageSetting(stored, env);
  const existing = stored.profiles[name];
  if (!options.force && liveToken(existing)) {
    throw new CliError(`Profile ${name} already holds a live token (${describeLive(existing)}).`, {
      exitCode: ExitCode.Usage,
      code: 'already_signed_in',
      suggestion: `Use it as it is, or sign in again with: gds auth login --profile ${name} --force`,
    });
  }
  const server = new URL(options.base);
  const insecure = insecureAllowed(server, 'the service');
  const clientId = clientIdFrom(env);
  const oidc = await openIdClient();
  const config = await discover(oidc, server, clientId, insecure);
  const metadata = config.serverMetadata();
  if (metadata.token_endpoint === undefined || metadata.device_authorization_endpoint === undefined) {
    throw new CliError(`The authorization server of ${options.base} does not offer the device sign-in.`, {
      exitCode: ExitCode.Failure,
      code: 'device_flow_unsupported',
      suggestion: 'Ask the service operator, or use a CLI token: gds auth set --token <t> --base <url>',
    });
  }
  for (const endpoint of [metadata.token_endpoint, metadata.device_authorization_endpoint]) {
    const url = new URL(endpoint);
    if (isInsecureUrl(url)) {
      throw new CliError(`The authorization server names a plain http endpoint: ${endpoint}.`, {
        exitCode: ExitCode.Failure,
        code: INSECURE_URL_CODE,
        suggestion: 'Ask the service operator to serve every sign-in endpoint over https.',
      });
    }
  }
  const device = await oauthCall(() => oidc.initiateDeviceAuthorization(config, { scope: LOGIN_SCOPE }));
  const code = stripControlCharacters(device.user_code);
  const uri = stripControlCharacters(device.verification_uri);
  const complete =
    device.verification_uri_complete === undefined
      ? undefined
      : stripControlCharacters(device.verification_uri_complete);
  const message = `To sign in, open ${uri} and enter the code ${code}`;
  if (options.device) {
    options.device({
      message,
      verificationUri: uri,
      ...(complete === undefined ? {} : { verificationUriComplete: complete }),
      userCode: code,
      expiresIn: device.expires_in,
    });
  } else {
    // A line each: `tell` says one line, so the service's address or code cannot forge another.
    options.tell(message);
    if (complete) options.tell(`(or open ${complete})`);
    options.tell(`Waiting for the approval (the code expires in ${describeSeconds(device.expires_in)})…`);
  }
  options.onVerificationUri?.(
    stripControlCharacters(device.verification_uri_complete ?? device.verification_uri),
  );
  // The server decides expiry (expired_token); this only bounds a server that never says so.
  const deadline = AbortSignal.timeout((device.expires_in + (device.interval ?? 5) + 30) * 1000);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  const tokens = await oauthCall(() =>
    oidc.pollDeviceAuthorizationGrant(config, device, undefined, { signal }),
  );
  // Masked wherever a message might say them back (a refusal below names what became of them).
  addRunSecret(tokens.access_token);
  if (tokens.refresh_token !== undefined) addRunSecret(tokens.refresh_token);
  if (tokens.refresh_token === undefined) {
    options.warn?.('The authorization server gave no refresh token: sign in again when the session expires.');
  }
  const expiresAt = expiresAtFrom(tokens.expires_in);
  const fields: ProfileFields & SessionExtras = {
    kind: 'session',
    base: options.base,
    issuer: metadata.issuer,
    tokenEndpoint: metadata.token_endpoint,
    clientId,
    ...(expiresAt === undefined ? {} : { expiresAt }),
  };
  const secrets = {
    accessToken: tokens.access_token,
    ...(tokens.refresh_token === undefined ? {} : { refreshToken: tokens.refresh_token }),
  };
  // The approval may have taken minutes: another command may have saved into the profile, or logged it out,
  // since it was read above. Saved only over the profile found then (or a renewal of it), as tokens
  // --save-profile saves (integration-profile.ts). A Ctrl-C or SIGTERM meanwhile is held until the save is done
  // (bounded, as theirs), so it never ends gds between the keychain's write and the config file's; one while the
  // save waits for another gds's lock ends that wait, and the sign-in, not saved, is ended.
  const saved = await finishBeforeExit(
    async (saving, interrupted) => {
      saving(saveBoundMs(env, 2));
      const current = await saveIfUnchanged(name, existing, fields, secrets, {
        env,
        warn: options.warn,
        signal: interrupted,
      }).catch(async (error: unknown) => {
        throw await signInNotSaved(error, options.base, tokens.access_token, env);
      });
      if ('changed' in current)
        throw await signInNotSaved(
          profileChanged(name, current.changed, options.base),
          options.base,
          tokens.access_token,
          env,
        );
      return current.saved;
    },
    undefined,
    {
      ...(options.sayFailure === undefined ? {} : { failure: options.sayFailure }),
      ...(options.saySaved === undefined ? {} : { done: options.saySaved }),
      ...(options.written === undefined ? {} : { written: options.written }),
    },
  );
  return {
    saved,
    accessToken: tokens.access_token,
    issuer: metadata.issuer,
    expiresAt: expiresAt ?? 'unknown',
  };
}

/** The profile changed while the person signed in: the new sign-in is not saved over what is there now. */
function profileChanged(name: string, now: Profile | undefined, base: string): CliError {
  const what =
    now === undefined
      ? `Profile ${name} was logged out while you signed in`
      : `Profile ${name} changed while you signed in (another gds command saved into it)`;
  const again =
    now === undefined
      ? `Sign in again if you still want it: gds auth login --profile ${name} --base ${base}`
      : `Keep what it holds now, or replace it: gds auth login --profile ${name} --force. ` +
        'Or sign in into a profile of its own: gds auth login --profile <name>';
  return new CliError(what, { exitCode: ExitCode.Failure, code: 'profile_changed', suggestion: again });
}

/**
 * Why the new sign-in was not saved (the profile changed, its lock was held too long, the save failed), said with
 * its fate: held by nothing, it is ended on the service (POST /api/auth/revoke, as `gds auth revoke` ends one).
 */
async function signInNotSaved(
  failure: unknown,
  base: string,
  accessToken: string,
  env: Env | undefined,
): Promise<CliError> {
  const ended = await endSignIn(base, accessToken);
  // A write that failed (a disk full, a read-only config directory) is a Node error: said as the save's failure,
  // with the fate, not as an error gds did not expect.
  const cause =
    failure instanceof CliError
      ? failure
      : new CliError(failure instanceof Error ? failure.message : String(failure), {
          exitCode: ExitCode.Failure,
          code: 'save_failed',
          suggestion: `Sign in again once ${configPath(env)} can be written.`,
        });
  const fate =
    ended === true
      ? 'your new sign-in was not saved, and was ended'
      : `your new sign-in was not saved, and could not be ended (${ended}): it ends when its tokens expire`;
  return new CliError(`${cause.message.replace(/\.$/, '')}: ${fate}.`, {
    exitCode: cause.exitCode,
    code: cause.code,
    ...(cause.given.suggestion === undefined ? {} : { suggestion: cause.given.suggestion }),
    ...(cause.details === undefined ? {} : { details: cause.details }),
  });
}

/** Revokes the sign-in of `accessToken`: true, or why not (no token in it). */
async function endSignIn(base: string, accessToken: string): Promise<true | string> {
  const client = createApiClient({ baseUrl: base, auth: staticToken(accessToken), retry: { maxRetries: 1 } });
  try {
    await client.tokens.revokeOwn();
    return true;
  } catch (error) {
    return stripControlCharacters(error instanceof Error ? error.message : String(error));
  } finally {
    await client.close();
  }
}

async function discover(oidc: typeof OpenIdClient, server: URL, clientId: string, insecure: boolean) {
  // Outside the try: a proxy variable gds cannot use is said as such, not as the service's failure.
  const proxied = await oidcFetch();
  try {
    return await oidc.discovery(server, clientId, undefined, oidc.None(), {
      ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
      ...(proxied === undefined ? {} : { [oidc.customFetch]: proxied }),
      timeout: 30,
    });
  } catch (error) {
    throw new CliError(
      `Could not read the sign-in settings of ${server.href.replace(/\/$/, '')} (${describeOAuthError(error)}).`,
      {
        exitCode: ExitCode.Unavailable,
        code: 'discovery_failed',
        suggestion:
          'Check the address (--base, SERVICE_API_URL or the profile): it must serve ' +
          '/.well-known/openid-configuration. In CI, use SERVICE_TOKEN and SERVICE_API_URL instead of signing in.',
      },
    );
  }
}

/** Runs one OAuth exchange; the RFC 8628 outcomes a person must hear about become exit 3. */
async function oauthCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const code = (error as { error?: unknown }).error;
    if (code === 'access_denied') {
      throw new CliError('The sign-in was denied on the verification page; nothing was saved.', {
        exitCode: ExitCode.Unauthenticated,
        code: 'login_denied',
        suggestion: 'Run gds auth login again and approve it.',
      });
    }
    if (code === 'expired_token' || (error as Error).name === 'TimeoutError') {
      throw new CliError('The code expired before anyone approved it; nothing was saved.', {
        exitCode: ExitCode.Unauthenticated,
        code: 'login_expired',
        suggestion: 'Run gds auth login again and approve it within the time shown.',
      });
    }
    const answer = answerOf(error);
    if (answer?.status === 429) {
      // The service's own limit on sign-ins (per address, or codes waiting at once), in its error shape,
      // which openid-client does not read as an OAuth error.
      const asked = Number(answer.headers.get('retry-after'));
      const seconds = Number.isFinite(asked) && asked > 0 ? Math.ceil(asked) : 60;
      throw new CliError('The service is refusing new sign-ins for now (429); nothing was saved.', {
        exitCode: ExitCode.RateLimited,
        code: 'rate_limited',
        suggestion: `Wait ${describeSeconds(seconds)} and run gds auth login again.`,
        details: { retryAfterSeconds: seconds },
      });
    }
    throw new CliError(`The sign-in failed: ${describeOAuthError(error)}.`, {
      exitCode: ExitCode.Unauthenticated,
      code: 'login_failed',
      suggestion:
        'Run gds auth login again; if it keeps failing, use a CLI token: gds auth set --token <t> --base <url>',
    });
  }
}

/**
 * The HTTP answer openid-client keeps as an error's cause when it cannot read it as an OAuth answer (a
 * redirect, the service's own error shape). Read by shape: sign-in fetches with undici's Response class.
 */
function answerOf(error: unknown): Pick<Response, 'status' | 'headers'> | undefined {
  const cause = (error as { cause?: { status?: unknown; headers?: { get?: unknown } } }).cause;
  return typeof cause?.status === 'number' && typeof cause.headers?.get === 'function'
    ? (cause as Response)
    : undefined;
}

function describeOAuthError(error: unknown): string {
  const e = error as { error?: unknown; error_description?: unknown; message?: unknown; cause?: unknown };
  if (typeof e.error === 'string') {
    const description = typeof e.error_description === 'string' ? `: ${e.error_description}` : '';
    return stripControlCharacters(`${e.error}${description}`);
  }
  // openid-client never follows a redirect (fetch with redirect: 'manual'): the answer is its cause.
  const answer = answerOf(error);
  const location = answer?.headers.get('location') ?? null;
  if (location !== null) {
    return stripControlCharacters(
      `the server answered ${String(answer?.status)}, redirecting to ${location}, which gds does not follow`,
    );
  }
  const cause = e.cause instanceof Error ? ` (${e.cause.message})` : '';
  return stripControlCharacters(`${String(e.message ?? error)}${cause}`);
}

function describeSeconds(seconds: number): string {
  return seconds < 120 ? `${seconds} s` : `${Math.round(seconds / 60)} min`;
}

export function describeLive(profile: Profile | undefined): string {
  if (profile?.kind === 'integration')
    return `an integration token renewable until ${profile.refreshExpiresAt ?? 'unknown'}`;
  if (profile?.kind === 'session') return `a session valid until ${profile.expiresAt ?? 'unknown'}`;
  return 'a static CLI token';
}
