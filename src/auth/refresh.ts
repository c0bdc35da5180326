// Session tokens stay usable across many gds processes: an access token expiring within a minute is
// refreshed before a request, and a 401 triggers one refresh (the client retries once). A refresh runs
// under the profile's cross-process lock and re-reads the profile first: when another process already
// refreshed, its tokens are adopted and no second refresh is sent, so a single-use refresh token is
// never presented twice. The new tokens are written (atomically) before they are used.
import { CliError, ExitCode } from '../cli/errors.js';
import { stripControlCharacters } from '../core/terminal-text.js';
import type { AuthProvider } from '../client/transport.js';
import { staticToken } from '../client/transport.js';
import { isLoopbackUrl } from '../core/url-policy.js';
import type { Env, SessionProfile } from './config.js';
import type { ResolvedCredentials } from './credentials.js';
import { loadConfig, withProfileLock } from './config.js';
import type { ProfileFields } from './profiles.js';
import { saveProfile } from './profiles.js';
import { readSecrets } from './secret-store.js';

/** Refresh when the access token expires within this long. */
export const REFRESH_MARGIN_MS = 60_000;

/** Non-secret fields a browser sign-in keeps beside SessionProfile's own. */
export interface SessionExtras {
  /** From discovery at login, so a refresh needs no discovery round trip. */
  tokenEndpoint?: string;
  clientId?: string;
}

export interface SessionAuthOptions {
  env?: Env;
  warn?: (message: string) => void;
  /** The token the caller already read (resolveCredentials), to skip a second keychain read. */
  initial?: { accessToken: string; expiresAt?: string | undefined };
  /** "Now" in epoch ms (tests). */
  now?: () => number;
}

interface SessionState {
  accessToken: string;
  expiresAt: string | undefined;
}

interface StoredSession extends SessionState {
  profile: SessionProfile & SessionExtras;
  refreshToken: string | undefined;
}

/** A browser sign-in's tokens renew themselves; any other token (flag, SERVICE_TOKEN, `auth set`) is fixed. */
export function authProviderFor(
  credentials: ResolvedCredentials,
  options: Omit<SessionAuthOptions, 'initial'> = {},
): AuthProvider {
  if (credentials.tokenKind !== 'session' || credentials.profileName === undefined) {
    return staticToken(credentials.token);
  }
  const expiresAt = credentials.profile?.kind === 'session' ? credentials.profile.expiresAt : undefined;
  return sessionAuthProvider(credentials.profileName, {
    ...options,
    initial: { accessToken: credentials.token, expiresAt },
  });
}

/** ISO instant `expiresIn` seconds from now; undefined when the server did not say. */
export function expiresAtFrom(expiresIn: number | undefined, now = Date.now()): string | undefined {
  return expiresIn === undefined ? undefined : new Date(now + expiresIn * 1000).toISOString();
}

/** The client's AuthProvider for a `session` profile (see the top of this file). */
export function sessionAuthProvider(profileName: string, options: SessionAuthOptions = {}): AuthProvider {
  const now = options.now ?? Date.now;
  let current: SessionState | undefined = options.initial
    ? { accessToken: options.initial.accessToken, expiresAt: options.initial.expiresAt }
    : undefined;
  const expiresSoon = (state: SessionState) =>
    state.expiresAt !== undefined && Date.parse(state.expiresAt) - now() < REFRESH_MARGIN_MS;

  return {
    async getToken() {
      current ??= await readSession(profileName, options);
      if (expiresSoon(current))
        current = await refreshUnderLock(profileName, current.accessToken, false, options);
      return current.accessToken;
    },
    async onUnauthorized() {
      const stale = current?.accessToken ?? (await readSession(profileName, options)).accessToken;
      current = await refreshUnderLock(profileName, stale, true, options);
      return current.accessToken;
    },
  };
}

/**
 * Refreshes the profile's tokens unless another process did since `stale` was read. `forced` (a 401)
 * refreshes even a token that looks fresh, as long as it is still the one that was refused.
 */
export async function refreshUnderLock(
  profileName: string,
  stale: string,
  forced: boolean,
  options: SessionAuthOptions = {},
): Promise<SessionState> {
  const now = options.now ?? Date.now;
  const fresh = (s: SessionState) =>
    s.expiresAt === undefined || Date.parse(s.expiresAt) - now() >= REFRESH_MARGIN_MS;
  return withProfileLock(
    profileName,
    async () => {
      const stored = await readSession(profileName, options);
      if (stored.accessToken !== stale || (!forced && fresh(stored))) return stored;
      if (stored.refreshToken === undefined) throw signInAgain(profileName, 'it holds no refresh token');
      let tokens: GrantedTokens;
      try {
        tokens = await refreshGrant(stored, stored.refreshToken);
      } catch (error) {
        if (!(error instanceof InvalidGrant)) throw error;
        // Another writer (a `gds auth login --force`, an older gds without the lock) may just have
        // replaced the tokens: use theirs, and never remove what they wrote.
        const again = await readSession(profileName, options);
        if (again.accessToken !== stale) return again;
        throw signInAgain(profileName, `the service refused its refresh token (${error.message})`);
      }
      const { profile } = stored;
      const expiresAt = expiresAtFrom(tokens.expiresIn, now());
      const fields = { ...renewableFields(profile), ...(expiresAt === undefined ? {} : { expiresAt }) };
      await saveProfile(
        profileName,
        fields,
        { accessToken: tokens.accessToken, refreshToken: tokens.refreshToken ?? stored.refreshToken },
        { env: options.env, warn: options.warn },
      );
      return { accessToken: tokens.accessToken, expiresAt };
    },
    { env: options.env },
  );
}

async function readSession(profileName: string, options: SessionAuthOptions): Promise<StoredSession> {
  const config = await loadConfig({ env: options.env, warn: options.warn });
  const profile = config.profiles[profileName];
  if (profile?.kind !== 'session') throw signInAgain(profileName, 'it is no longer a browser sign-in');
  const { secrets } = await readSecrets(profile, { env: options.env, warn: options.warn });
  if (!secrets.accessToken) throw signInAgain(profileName, 'its tokens are gone');
  return {
    profile,
    accessToken: secrets.accessToken,
    refreshToken: secrets.refreshToken,
    expiresAt: profile.expiresAt,
  };
}

/** What a refresh keeps of the profile: everything but the secrets, where they were, and the old expiry. */
function renewableFields(profile: SessionProfile & SessionExtras): ProfileFields & SessionExtras {
  const { secretRef: _ref, token: _t, accessToken: _a, refreshToken: _r, expiresAt: _e, ...fields } = profile;
  return fields;
}

interface GrantedTokens {
  accessToken: string;
  refreshToken: string | undefined;
  expiresIn: number | undefined;
}

class InvalidGrant extends Error {}

/** The refresh-token grant at the token endpoint saved at login (discovery only when it is missing). */
async function refreshGrant(stored: StoredSession, refreshToken: string): Promise<GrantedTokens> {
  const oidc = await import('openid-client');
  const clientId = stored.profile.clientId ?? 'gds-cli';
  const issuer = stored.profile.issuer ?? stored.profile.base;
  const insecure = (url: string) => new URL(url).protocol === 'http:' && isLoopbackUrl(new URL(url));
  let config;
  try {
    config =
      stored.profile.tokenEndpoint === undefined
        ? await oidc.discovery(new URL(stored.profile.base), clientId, undefined, oidc.None(), {
            ...(insecure(stored.profile.base) ? { execute: [oidc.allowInsecureRequests] } : {}),
          })
        : new oidc.Configuration(
            { issuer, token_endpoint: stored.profile.tokenEndpoint },
            clientId,
            undefined,
            oidc.None(),
          );
    if (insecure(config.serverMetadata().token_endpoint ?? issuer)) oidc.allowInsecureRequests(config);
    const tokens = await oidc.refreshTokenGrant(config, refreshToken);
    return {
      accessToken: tokens.access_token,
      refreshToken: tokens.refresh_token,
      expiresIn: tokens.expires_in,
    };
  } catch (error) {
    const code = (error as { error?: unknown }).error;
    if (code === 'invalid_grant') {
      const description = (error as { error_description?: unknown }).error_description;
      throw new InvalidGrant(typeof description === 'string' ? description : 'invalid_grant');
    }
    throw new CliError(
      `Could not refresh the session: ${stripControlCharacters((error as Error).message)}.`,
      {
        exitCode: ExitCode.Unavailable,
        code: 'refresh_failed',
        suggestion: 'Check the network and run the command again; the saved tokens are unchanged.',
      },
    );
  }
}

function signInAgain(profileName: string, why: string): CliError {
  return new CliError(`The sign-in of profile ${profileName} cannot be renewed: ${why}.`, {
    exitCode: ExitCode.Unauthenticated,
    code: 'session_expired',
    suggestion: `Sign in again: gds auth login --profile ${profileName}`,
  });
}
