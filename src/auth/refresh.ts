// Stored tokens stay usable across many gds processes: a browser sign-in (`session` profile) and an
// integration token saved with --save-profile (`integration` profile) alike. An access token expiring
// within a minute is refreshed before a request, and a 401 triggers one refresh (the client retries
// once). A refresh runs under the profile's cross-process lock and re-reads the profile first: when
// another process already refreshed, its tokens are adopted and no second refresh is sent, so a
// single-use refresh token is never presented twice; a process that lost the lock before presenting it (a slow
// keychain read on a busy machine) starts over, and one that finds the token presented by a gds process
// that still lives (it may have lost the lock while a slow keychain write outlasted the lock's stale time)
// waits for it to save the new tokens (refresh-holder.ts). The new tokens are written (atomically) before they
// are used, while the profile still records the refresh: a `gds auth logout` does not wait for a request that is
// out, it drops that record, and the refresh then saves nothing (profiles.ts saveRefreshedProfile). Only the grant differs by kind: the OAuth refresh-token grant, or POST /api/integration/refresh.
// A killed gds must not brick its profile: the refresh is recorded in the profile before it is sent, the new
// tokens are saved before anything else, Ctrl-C and SIGTERM wait (bounded) for that save, and a run that
// finds a refresh recorded for the stored refresh token presents it again at once, which the service
// answers with the same new tokens within its reuse grace window.
import { CliError, ExitCode } from '../core/errors.js';
import { MAX_TIMER_MS } from '../core/env-milliseconds.js';
import { shellWord } from '../core/shell-word.js';
import { stripControlCharacters } from '../core/terminal-text.js';
import type { AuthProvider } from '../client/transport.js';
import { staticToken } from '../client/transport.js';
import { isLoopbackUrl } from '../core/url-policy.js';
import { oidcFetch } from './oidc-fetch.js';
import { openIdClient } from './openid-client.js';
import type { Env, IntegrationProfile, RefreshInFlight, SessionProfile } from './config.js';
import type { ResolvedCredentials } from './credentials.js';
import { loadConfig, updateConfig, withProfileLock } from './config.js';
import { addRunSecret } from '../core/redact.js';
import { debugLog } from './debug-log.js';
import { finishBeforeExit, SAVE_BOUND_MS } from './finish-before-exit.js';
import type { ProfileFields } from './profiles.js';
import { refreshTokenFingerprint as fingerprint, saveRefreshedProfile } from './profiles.js';
import { holderAlive, holderOf, holderStopped, presenting } from './refresh-holder.js';
import { readProfileSecrets } from './profile-secrets.js';
import { keychainTimeoutMs } from './secret-store.js';
import { createApiClient, ApiError, NetworkError } from '../client/index.js';
import { unverifiedClaims } from '../core/jwt-claims.js';

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
  initial?: { accessToken: string; expiresAt?: string | undefined; interrupted?: boolean };
  /** "Now" in epoch ms (tests). */
  now?: () => number;
}

interface SessionState {
  accessToken: string;
  expiresAt: string | undefined;
  /** A refresh was recorded in flight: complete it before using the token. */
  interrupted?: boolean;
}

type RenewableProfile = (SessionProfile & SessionExtras) | IntegrationProfile;

interface StoredSession extends SessionState {
  profile: RenewableProfile;
  refreshToken: string | undefined;
  /** The refresh recorded in flight with the stored refresh token, when there is one. */
  inFlight: RefreshInFlight | undefined;
}

/** A stored token of a browser sign-in or an integration renews itself; any other token (flag,
 *  SERVICE_TOKEN, `auth set`) is fixed. */
export function authProviderFor(
  credentials: ResolvedCredentials,
  options: Omit<SessionAuthOptions, 'initial'> = {},
): AuthProvider {
  const { profile, profileName } = credentials;
  if (credentials.tokenKind === 'static' || profileName === undefined || profile?.kind === 'static') {
    return staticToken(credentials.token);
  }
  return renewingAuthProvider(profileName, {
    ...options,
    initial: {
      accessToken: credentials.token,
      expiresAt: profile?.expiresAt,
      interrupted: profile?.refreshInFlight !== undefined,
    },
  });
}

/** ISO instant `expiresIn` seconds from now; undefined when the server did not say. */
export function expiresAtFrom(expiresIn: number | undefined, now = Date.now()): string | undefined {
  return expiresIn === undefined ? undefined : new Date(now + expiresIn * 1000).toISOString();
}

/**
 * How far this machine's clock runs ahead of the service's (negative: behind), read from an access token just
 * received: now minus its issue time (the JWT's `iat`). 0 when that is within the refresh margin (the margin
 * absorbs it, and the time the answer took) or the token says nothing of it. A runner whose clock is an hour
 * ahead (a hardware clock kept in local time, no NTP) would otherwise take every token the service issues,
 * valid for 60 minutes by the service's clock, as expired, and renew it before each request.
 */
export function clockSkewMs(accessToken: string, now = Date.now()): number {
  const issuedAt = unverifiedClaims(accessToken).iat;
  if (typeof issuedAt !== 'number' || !Number.isFinite(issuedAt)) return 0;
  const skew = now - issuedAt * 1000;
  return Math.abs(skew) < REFRESH_MARGIN_MS ? 0 : skew;
}

/** An instant of the service's clock (ISO 8601) on this machine's, `skewMs` (clockSkewMs) apart. */
export function onLocalClock<T extends string | undefined>(instant: T, skewMs: number): T {
  if (instant === undefined || skewMs === 0) return instant;
  const at = Date.parse(instant);
  return (Number.isNaN(at) ? instant : new Date(at + skewMs).toISOString()) as T;
}

/** The client's AuthProvider for a `session` or `integration` profile (see the top of this file). */
export function renewingAuthProvider(profileName: string, options: SessionAuthOptions = {}): AuthProvider {
  const now = options.now ?? Date.now;
  let current: SessionState | undefined = options.initial
    ? { ...options.initial, expiresAt: options.initial.expiresAt }
    : undefined;
  const expiresSoon = (state: SessionState) =>
    state.expiresAt !== undefined && Date.parse(state.expiresAt) - now() < REFRESH_MARGIN_MS;

  return {
    async getToken() {
      current ??= await readSession(profileName, options);
      if (current.interrupted === true || expiresSoon(current))
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
  const fresh = (expiresAt: string | undefined) =>
    expiresAt === undefined || Date.parse(expiresAt) - now() >= REFRESH_MARGIN_MS;
  for (let attempt = 1; ;) {
    const refreshed = await refreshOnce(profileName, stale, forced, fresh, options);
    if (refreshed instanceof PresentedElsewhere) {
      await untilSettled(profileName, refreshed.record, options);
      continue;
    }
    if (refreshed === LOCK_LOST && attempt < lockAttempts) {
      attempt += 1;
      continue;
    }
    if (refreshed === LOCK_LOST) throw lockLost(profileName);
    if (refreshed !== ALREADY_FRESH) return refreshed;
    const stored = await readSession(profileName, options);
    return { accessToken: stored.accessToken, expiresAt: stored.expiresAt };
  }
}

/** How long a held Ctrl-C or SIGTERM waits for the new tokens to be saved: `keychainCalls` keychain calls that
 *  may not answer (a write, then the file takes them; a save of new credentials first reads what the write
 *  replaces, to put it back should the config file not be written), and the config file's write. */
export function saveBoundMs(env: Env | undefined, keychainCalls = 1): number {
  return Math.min(keychainCalls * keychainTimeoutMs(env ?? process.env) + SAVE_BOUND_MS, MAX_TIMER_MS);
}

const ALREADY_FRESH = Symbol('already fresh');
const LOCK_LOST = Symbol('lock lost');
/** How many times a refresh starts over after losing the profile lock before it gives up. */
const lockAttempts = 5;

/** The stored refresh token is being presented by another gds process that still lives. */
class PresentedElsewhere {
  constructor(readonly record: RefreshInFlight) {}
}

/**
 * Whether the refresh `record` names may still be under way: its holder lives and it began less than the
 * longest a refresh takes ago (a minute for the request, plus one keychain write): beyond that, a holder
 * is taken to be stuck, or another process under its pid, and the refresh is taken over.
 */
async function underWay(record: RefreshInFlight, now: number, env: Env | undefined): Promise<boolean> {
  const age = now - Date.parse(record.since);
  if (!(age < 60_000 + keychainTimeoutMs(env ?? process.env))) return false;
  return holderAlive(record.holder, record.refreshTokenSha256);
}

/** How long a refresh's holder is seen stopped before untilSettled gives up (a Ctrl-Z then fg goes on). */
const STOPPED_HOLDER_MS = 2_000;

/** The holder of the profile's refresh is stopped: what to do about it, its pid named. */
function holderIsStopped(profileName: string, pid: number): CliError {
  return new CliError(
    `gds process ${pid} is stopped (Ctrl-Z or SIGSTOP) in the middle of refreshing the tokens of profile ${profileName}: ` +
      `it holds their single-use refresh token, and only it can save what the service answers.`,
    {
      exitCode: ExitCode.Failure,
      code: 'config_locked',
      suggestion:
        `Resume it (fg in its terminal, or kill -CONT ${pid}); it saves the new tokens. Then run this command again. ` +
        `To end it instead: kill -TERM ${pid} && kill -CONT ${pid} (it saves the tokens it got before it exits).`,
    },
  );
}

/**
 * Waits (without the profile lock) until the refresh `record` names is no longer recorded or under way. A holder
 * seen stopped for STOPPED_HOLDER_MS ends the wait with config_locked naming it: it lives, so it is not taken
 * over (resumed, it would save an answer to the token a taker presents again), and it may stay stopped for ever.
 */
async function untilSettled(
  profileName: string,
  record: RefreshInFlight,
  options: SessionAuthOptions,
): Promise<void> {
  const now = options.now ?? Date.now;
  const { setTimeout: sleep } = process.getBuiltinModule('node:timers/promises');
  debugLog(
    `refresh of profile ${profileName}: process ${record.holder?.pid ?? '?'} presented its refresh token at ${record.since}; waiting for it to save the new tokens`,
  );
  let stoppedSince: number | undefined;
  for (;;) {
    await sleep(100 + Math.random() * 150);
    // A holder stopped (Ctrl-Z) would keep this run waiting for as long as a refresh may take (about a minute),
    // then have it present the token the stopped one may save the answer of when resumed: said at once instead.
    if (await holderStopped(record.holder)) stoppedSince ??= Date.now();
    else stoppedSince = undefined;
    if (stoppedSince !== undefined && Date.now() - stoppedSince >= STOPPED_HOLDER_MS)
      throw holderIsStopped(profileName, record.holder?.pid ?? 0);
    const profile = (await loadConfig({ env: options.env, warn: options.warn })).profiles[profileName];
    const current = profile === undefined || profile.kind === 'static' ? undefined : profile.refreshInFlight;
    if (
      current?.since !== record.since ||
      current.refreshTokenSha256 !== record.refreshTokenSha256 ||
      !(await underWay(record, now(), options.env))
    )
      return;
  }
}

async function refreshOnce(
  profileName: string,
  stale: string,
  forced: boolean,
  fresh: (expiresAt: string | undefined) => boolean,
  options: SessionAuthOptions,
): Promise<SessionState | typeof ALREADY_FRESH | typeof LOCK_LOST | PresentedElsewhere> {
  const now = options.now ?? Date.now;
  return withProfileLock(
    profileName,
    async (
      stillHeld,
    ): Promise<SessionState | typeof ALREADY_FRESH | typeof LOCK_LOST | PresentedElsewhere> => {
      // Another process refreshed while this one waited for the lock: the config file says so, and the
      // secrets are read after the lock is let go. A keychain read can take seconds on a busy machine, and
      // every process waiting behind this one would wait for it too.
      if (!forced && (await freshInConfig(profileName, fresh, options))) return ALREADY_FRESH;
      const stored = await readSession(profileName, options);
      if (stored.inFlight === undefined) {
        if (stored.profile.refreshInFlight !== undefined) await forgetInFlight(profileName, options);
        if (stored.accessToken !== stale || (!forced && fresh(stored.expiresAt)))
          return { accessToken: stored.accessToken, expiresAt: stored.expiresAt };
      }
      if (stored.inFlight !== undefined && (await underWay(stored.inFlight, now(), options.env)))
        return new PresentedElsewhere(stored.inFlight);
      const refreshToken = stored.refreshToken;
      if (refreshToken === undefined)
        throw cannotRenew(profileName, stored.profile, 'it holds no refresh token');
      // Also over a record of a holder that has ended: this process presents the token now.
      const claim = await claimRefresh(profileName, stored, refreshToken, now(), options);
      if (claim === PROFILE_CHANGED) return LOCK_LOST;
      if (claim instanceof PresentedElsewhere) return claim;
      // Waiting on the keychain past the lock's stale time lets another process take the lock over and
      // present this same single-use refresh token. Start over instead: it may have refreshed already.
      // (The record just written names this process: others wait for it to start over and present it.)
      if (!(await stillHeld())) return LOCK_LOST;
      return presenting(fingerprint(refreshToken), () =>
        finishBeforeExit(async (saving) => {
          let tokens: GrantedTokens;
          // The refresh token is a secret of this run as the access tokens it sends are: an answer quoting it
          // (an identity provider's error_description) is masked wherever it is shown, as is the new one.
          addRunSecret(refreshToken);
          try {
            tokens = await grants[stored.profile.kind](stored, refreshToken, now());
            if (tokens.refreshToken !== undefined) addRunSecret(tokens.refreshToken);
          } catch (error) {
            if (!(error instanceof InvalidGrant)) throw error;
            // Another writer (a `gds auth login --force`, an older gds without the lock) may just have
            // replaced the tokens: use theirs, and never remove what they wrote.
            const again = await readSession(profileName, options);
            if (again.accessToken !== stale)
              return { accessToken: again.accessToken, expiresAt: again.expiresAt };
            // Refused for good: nothing is left to complete, and the profile stays as it was.
            await forgetInFlight(profileName, options);
            const interrupted =
              stored.inFlight === undefined
                ? ''
                : `; a refresh interrupted at ${stored.inFlight.since} had already spent it, and the service answers a spent refresh token only once`;
            throw cannotRenew(
              profileName,
              stored.profile,
              `the service refused its refresh token (${error.message})${interrupted}`,
            );
          }
          // The new tokens first, even if the lock was lost while the request was out: the old refresh token is
          // spent, these are the only copy.
          const fields = { ...renewableFields(stored.profile), ...tokens.fields };
          // Saved only while the profile still records this refresh: a `gds auth logout` meanwhile (it does
          // not wait for this request) dropped the record, and nothing comes back after it. This run still uses
          // the new access token for the request it renewed it for.
          saving(saveBoundMs(options.env));
          const saved = await saveRefreshedProfile(
            profileName,
            fields,
            { accessToken: tokens.accessToken, refreshToken: tokens.refreshToken ?? refreshToken },
            fingerprint(refreshToken),
            { env: options.env, warn: options.warn, onlyCopy: true, stillHeld },
          );
          if (saved === undefined)
            debugLog(
              `refresh of profile ${profileName}: the profile was logged out or replaced while the request was out; the new tokens are not saved`,
            );
          return { accessToken: tokens.accessToken, expiresAt: tokens.fields.expiresAt };
        }),
      );
    },
    { env: options.env },
  );
}

/** The profile's expiry in the config file is fresh and no refresh is recorded in flight (no secret is read). */
async function freshInConfig(
  profileName: string,
  fresh: (expiresAt: string | undefined) => boolean,
  options: SessionAuthOptions,
): Promise<boolean> {
  const profile = (await loadConfig({ env: options.env, warn: options.warn })).profiles[profileName];
  if (profile === undefined || profile.kind === 'static' || profile.refreshInFlight !== undefined)
    return false;
  return profile.expiresAt !== undefined && fresh(profile.expiresAt);
}

const PROFILE_CHANGED = Symbol('profile changed');

/**
 * Records, durably, that `refreshToken` is about to be presented (see RefreshInFlight), unless the profile
 * changed since `stored` was read (another process saved new tokens: start over) or another live process
 * has since recorded the same token (wait for it). Checked and written under the config file's lock: the
 * profile lock alone lets two processes present one token when both believe they hold it (a starved
 * holder's lock update can land on the lock folder another process took over; an older gds takes no lock).
 */
async function claimRefresh(
  profileName: string,
  stored: StoredSession,
  refreshToken: string,
  now: number,
  options: SessionAuthOptions,
): Promise<'claimed' | typeof PROFILE_CHANGED | PresentedElsewhere> {
  const holder = await holderOf();
  const refreshTokenSha256 = fingerprint(refreshToken);
  const { refreshInFlight: recordRead, ...readFields } = stored.profile;
  return updateConfig(
    async (config) => {
      const profile = config.profiles[profileName];
      if (profile === undefined || profile.kind === 'static') return PROFILE_CHANGED;
      const { refreshInFlight: recorded, ...fields } = profile;
      if (JSON.stringify(fields) !== JSON.stringify(readFields)) return PROFILE_CHANGED;
      if (
        recorded?.refreshTokenSha256 === refreshTokenSha256 &&
        recorded.since !== recordRead?.since &&
        (await underWay(recorded, now, options.env))
      )
        return new PresentedElsewhere(recorded);
      profile.refreshInFlight = { since: new Date(now).toISOString(), refreshTokenSha256, holder };
      return 'claimed';
    },
    { env: options.env, warn: options.warn },
  );
}

/** Drops a record of a refresh whose tokens were saved after all (the keychain has them). */
async function forgetInFlight(profileName: string, options: SessionAuthOptions): Promise<void> {
  await updateConfig(
    (config) => {
      const profile = config.profiles[profileName];
      if (profile !== undefined && profile.kind !== 'static') delete profile.refreshInFlight;
    },
    { env: options.env, warn: options.warn },
  );
}

async function readSession(profileName: string, options: SessionAuthOptions): Promise<StoredSession> {
  const config = await loadConfig({ env: options.env, warn: options.warn });
  const stored = config.profiles[profileName];
  if (stored === undefined || stored.kind === 'static') {
    throw new CliError(`Profile ${profileName} no longer holds tokens that renew themselves.`, {
      exitCode: ExitCode.Unauthenticated,
      code: 'session_expired',
      suggestion: `See what it holds now: gds auth status --profile ${profileName}`,
    });
  }
  const read = await readProfileSecrets(profileName, stored, { env: options.env, warn: options.warn });
  // Of the same kind as `stored` (readProfileSecrets).
  const profile = read.profile as typeof stored;
  const { secrets } = read;
  if (!secrets.accessToken) throw cannotRenew(profileName, profile, 'its tokens are gone');
  const recorded = profile.refreshInFlight;
  const inFlight =
    recorded !== undefined &&
    secrets.refreshToken !== undefined &&
    fingerprint(secrets.refreshToken) === recorded.refreshTokenSha256
      ? recorded
      : undefined;
  return {
    profile,
    accessToken: secrets.accessToken,
    refreshToken: secrets.refreshToken,
    expiresAt: profile.expiresAt,
    // Any record sends the caller through refreshUnderLock, which completes it or, when the stored
    // refresh token is another one, drops it.
    interrupted: recorded !== undefined,
    inFlight,
  };
}

/** What a refresh keeps of the profile: everything but the secrets, where they were, and the old expiries. */
export function renewableFields(profile: RenewableProfile): ProfileFields {
  const {
    secretRef: _ref,
    token: _t,
    accessToken: _a,
    refreshToken: _r,
    expiresAt: _e,
    refreshInFlight: _f,
    ...fields
  } = profile;
  if (fields.kind === 'integration') delete fields.refreshExpiresAt;
  return fields;
}

interface GrantedTokens {
  accessToken: string;
  refreshToken: string | undefined;
  /** The new expiries (`expiresAt`, and `refreshExpiresAt` for an integration token). */
  fields: { expiresAt?: string; refreshExpiresAt?: string };
}

type Grant = (stored: StoredSession, refreshToken: string, now: number) => Promise<GrantedTokens>;

class InvalidGrant extends Error {}

/** The refresh-token grant at the token endpoint saved at login (discovery only when it is missing). */
const sessionGrant: Grant = async (stored, refreshToken, now) => {
  const profile = stored.profile as SessionProfile & SessionExtras;
  const oidc = await openIdClient();
  const clientId = profile.clientId ?? 'gds-cli';
  const issuer = profile.issuer ?? profile.base;
  const insecure = (url: string) => new URL(url).protocol === 'http:' && isLoopbackUrl(new URL(url));
  let config;
  // Outside the try: a proxy variable gds cannot use is said as such, not as a failed refresh.
  const proxied = await oidcFetch();
  try {
    config =
      profile.tokenEndpoint === undefined
        ? await oidc.discovery(new URL(profile.base), clientId, undefined, oidc.None(), {
            ...(insecure(profile.base) ? { execute: [oidc.allowInsecureRequests] } : {}),
            ...(proxied === undefined ? {} : { [oidc.customFetch]: proxied }),
          })
        : new oidc.Configuration(
            { issuer, token_endpoint: profile.tokenEndpoint },
            clientId,
            undefined,
            oidc.None(),
          );
    if (insecure(config.serverMetadata().token_endpoint ?? issuer)) oidc.allowInsecureRequests(config);
    if (proxied !== undefined) config[oidc.customFetch] = proxied;
    const tokens = await oidc.refreshTokenGrant(config, refreshToken);
    const expiresAt = expiresAtFrom(tokens.expires_in, now);
    return {
      accessToken: tokens.access_token,
      refreshToken: tokens.refresh_token,
      fields: expiresAt === undefined ? {} : { expiresAt },
    };
  } catch (error) {
    const code = (error as { error?: unknown }).error;
    if (code === 'invalid_grant') {
      const description = (error as { error_description?: unknown }).error_description;
      throw new InvalidGrant(typeof description === 'string' ? description : 'invalid_grant');
    }
    throw refreshFailed(error);
  }
};

/** §4.2: POST /api/integration/refresh with the refresh token, no Authorization header; 401 = refused. */
const integrationGrant: Grant = async (stored, refreshToken, now) => {
  const client = createApiClient({ baseUrl: stored.profile.base });
  try {
    const { tokens } = await client.tokens.refresh(refreshToken);
    // The service's expiries are instants of its clock: kept on this machine's (clockSkewMs).
    const skew = clockSkewMs(tokens.accessToken, now);
    return {
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      fields: {
        expiresAt: onLocalClock(tokens.expiresAt, skew),
        refreshExpiresAt: onLocalClock(tokens.refreshExpiresAt, skew),
      },
    };
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) throw new InvalidGrant(error.code);
    throw refreshFailed(error);
  } finally {
    await client.close();
  }
};

const grants: Record<RenewableProfile['kind'], Grant> = {
  session: sessionGrant,
  integration: integrationGrant,
};

function lockLost(profileName: string): CliError {
  return new CliError(
    `Lost the lock of profile ${profileName} ${lockAttempts} times while refreshing its tokens: the machine may be too busy.`,
    {
      exitCode: ExitCode.Failure,
      code: 'config_lock_lost',
      suggestion: 'Nothing was sent and the saved tokens are unchanged. Run the command again.',
    },
  );
}

/** Failures that leave a request unsent: no connection was made, so the service never saw the refresh token. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'CONNECT_TIMEOUT',
]);

function refreshFailed(error: unknown): CliError {
  // The answer lost after the request went out (a reset, a timeout waiting for it): the service may have spent
  // the single-use token. Said, so that an exit 3 of the next run is no surprise.
  const mayBeSpent =
    error instanceof NetworkError && error.failure !== 'certificate' && !NOT_SENT.has(error.code ?? '');
  return new CliError(`Could not refresh the tokens: ${stripControlCharacters((error as Error).message)}.`, {
    exitCode: ExitCode.Unavailable,
    code: 'refresh_failed',
    suggestion: mayBeSpent
      ? 'The request went out and its answer was lost: the service may have spent the refresh token. Check the ' +
        'network and run the command again: it presents the token once more, and if the service refuses it, ' +
        'says how to get a new one.'
      : 'Check the network and run the command again; the saved tokens are unchanged.',
  });
}

function cannotRenew(profileName: string, profile: RenewableProfile, why: string): CliError {
  if (profile.kind === 'integration') {
    return new CliError(`The integration token of profile ${profileName} cannot be renewed: ${why}.`, {
      exitCode: ExitCode.Unauthenticated,
      code: 'integration_token_expired',
      suggestion: `Issue a new one into it: ${reissueCommand(profileName, profile)}`,
    });
  }
  return signInAgain(profileName, why);
}

/** The one command line that issues the profile's token again, with the environment and scopes it held. */
export function reissueCommand(profileName: string, profile: IntegrationProfile): string {
  const parts = [
    'gds tokens issue',
    `--save-profile ${shellWord(profileName)}`,
    '--force',
    `--name ${shellWord(profileName)}`,
  ];
  if (profile.env !== undefined) parts.push(`--env ${shellWord(profile.env)}`);
  const tables = new Map<string, string[]>();
  for (const scope of profile.scopes ?? []) {
    const grant = /^tables:(.+):(read|write)$/.exec(scope);
    if (grant?.[1] !== undefined && grant[2] !== undefined)
      tables.set(grant[1], [...(tables.get(grant[1]) ?? []), grant[2]]);
    else parts.push(`--scope ${shellWord(scope)}`);
  }
  for (const [table, permissions] of tables)
    parts.push(`--table ${shellWord(`${table}:${permissions.join(',')}`)}`);
  return parts.join(' ');
}

function signInAgain(profileName: string, why: string): CliError {
  return new CliError(`The sign-in of profile ${profileName} cannot be renewed: ${why}.`, {
    exitCode: ExitCode.Unauthenticated,
    code: 'session_expired',
    suggestion: `Sign in again: gds auth login --profile ${profileName} --force`,
  });
}
