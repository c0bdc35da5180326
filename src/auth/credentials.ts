// The credentials a command calls the API with. First match wins, for the token and the base each on
// its own: the --token/--base flags, then SERVICE_TOKEN/SERVICE_API_URL, then the profile named by
// --profile (else the active one). The config and the keychain are read only when a flag or variable
// leaves something missing, so a CI job with SERVICE_TOKEN and SERVICE_API_URL touches neither.
import { echoed, echoedList } from '../core/echo.js';
import { CliError, ExitCode } from '../core/errors.js';
import { maskToken } from '../core/redact.js';
import { Lines } from '../core/terminal-text.js';
import { INSECURE_URL_ADVICE, INSECURE_URL_CODE, isInsecureUrl, shownUrl } from '../core/url-policy.js';
import type { Env, GdsConfig, Profile, ProfileKind, SecretStorageSetting } from './config.js';
import { configPath, loadConfig } from './config.js';
import { readProfileSecrets } from './profile-secrets.js';
import type { SecretStorage } from './secret-store.js';
import { describeStorage, KeychainUnavailableError, secretStorageSetting } from './secret-store.js';
import { shellWord } from '../core/shell-word.js';

export interface CredentialFlags {
  token?: string | undefined;
  base?: string | undefined;
  profile?: string | undefined;
}

/** `flag`, `env` (SERVICE_TOKEN / SERVICE_API_URL), or `profile:<name>`. */
export type CredentialSource = 'flag' | 'env' | `profile:${string}`;

export interface ResolvedCredentials {
  token: string;
  baseUrl: string;
  tokenSource: CredentialSource;
  baseSource: CredentialSource;
  /** The profile that gave the token or the base, if one did. */
  profileName?: string;
  /** The kind of the profile that gave the token; flags and SERVICE_TOKEN are static. */
  tokenKind: ProfileKind;
  /** Where the token is kept: `none` when it came from a flag or the environment. */
  storage: SecretStorage | 'none';
  /** The profile's entry (no secrets in it when they are in the keychain), for the refresh of a session. */
  profile?: Profile;
}

export interface CredentialOptions {
  warn?: (message: string) => void;
}

interface Found {
  value: string;
  source: CredentialSource;
}

interface Resolution {
  token?: Found;
  base?: Found;
  profileName?: string;
  profile?: Profile;
  storage: SecretStorage | 'none';
  /** Why the profile's token could not be read (keychain silent, entry gone). */
  tokenProblem?: string;
  /** --base or SERVICE_API_URL names another service than the profile's: its token is not sent there. */
  foreignBase?: CliError;
  config?: GdsConfig;
}

/** The credentials for an API call, or a CliError that says how to get them (exit 3; 2 for bad input). */
export async function resolveCredentials(
  flags: CredentialFlags,
  env: Env = process.env,
  options: CredentialOptions = {},
): Promise<ResolvedCredentials> {
  const r = await resolve(flags, env, options);
  if (r.foreignBase !== undefined) throw r.foreignBase;
  if (r.base === undefined) throw missing('API base URL', r, env);
  if (r.token === undefined) throw missing('API token', r, env);
  return {
    token: r.token.value,
    baseUrl: r.base.value,
    tokenSource: r.token.source,
    baseSource: r.base.source,
    ...(r.profileName === undefined ? {} : { profileName: r.profileName, profile: r.profile }),
    tokenKind: r.token.source.startsWith('profile:') ? (r.profile?.kind ?? 'static') : 'static',
    storage: r.storage,
  };
}

export interface ProfileSummary {
  name: string;
  base: string;
  kind: ProfileKind;
  storage: SecretStorage | 'none';
  active: boolean;
  /** The e-mail the token signed in as when it was stored; null when unknown. */
  user: string | null;
}

export interface CredentialStatus {
  signedIn: boolean;
  baseUrl: string | null;
  baseSource: CredentialSource | null;
  /** Masked: `cli_…****`. */
  token: string | null;
  tokenSource: CredentialSource | null;
  storage: SecretStorage | 'none';
  /** The keychain entry or the config file path; null when the token is not stored. */
  storageLocation: string | null;
  profile: string | null;
  activeProfile: string | null;
  profiles: ProfileSummary[];
  configPath: string;
  secretStorage: SecretStorageSetting;
  /** What is missing or unreadable, each with what to do. Empty when signed in. */
  problems: string[];
  /** When the access token of the profile in use expires (a browser sign-in or an integration token). */
  expiresAt: string | null;
}

/** `gds auth status`: what resolveCredentials would use, and why not when it would fail. Never throws for
 *  missing credentials (signedIn: false); still exit 2 for an unknown --profile or a bad base URL. */
export async function credentialStatus(
  flags: CredentialFlags,
  env: Env = process.env,
  options: CredentialOptions = {},
): Promise<CredentialStatus> {
  const config = await loadConfig({ env, warn: options.warn });
  const r = await resolve(flags, env, options, config);
  const problems: string[] = [];
  if (r.foreignBase !== undefined) problems.push(r.foreignBase.message);
  else if (r.token === undefined) problems.push(missing('API token', r, env).message);
  if (r.base === undefined) problems.push(missing('API base URL', r, env).message);
  const stored = r.storage !== 'none';
  return {
    signedIn: problems.length === 0,
    baseUrl: r.base?.value ?? null,
    baseSource: r.base?.source ?? null,
    token: r.token === undefined ? null : maskToken(r.token.value),
    tokenSource: r.token?.source ?? null,
    storage: r.storage,
    storageLocation: stored ? describeStorage(r.storage as SecretStorage, r.profile?.secretRef, env) : null,
    profile: r.profileName ?? null,
    activeProfile: config.activeProfile,
    profiles: Object.entries(config.profiles)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, p]) => ({
        name,
        base: p.base,
        kind: p.kind,
        storage: storageOf(p),
        active: name === config.activeProfile,
        user: p.user ?? null,
      })),
    configPath: configPath(env),
    secretStorage: secretStorageSetting(config, env),
    problems,
    expiresAt:
      r.token?.source.startsWith('profile:') === true &&
      r.profile !== undefined &&
      r.profile.kind !== 'static'
        ? (r.profile.expiresAt ?? null)
        : null,
  };
}

/** An https URL (http only to a loopback host) without credentials, query or fragment in it, without a
 *  trailing slash. Exit 2 naming where it came from; the value is never echoed whole (shownUrl). */
export function checkBaseUrl(value: string, from: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new CliError(`The API base URL from ${from} is not an http(s) URL: ${shownUrl(value)}`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_base_url',
      suggestion: 'Give the full address of the service, e.g. https://gds.example.com',
    });
  }
  if (url.username !== '' || url.password !== '') {
    throw new CliError(`The API base URL from ${from} contains a user name or password.`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_base_url',
      suggestion: 'Give the address alone (https://host/path) and the token with --token.',
    });
  }
  // `?` or `#` in the text, even with nothing after it: request paths are appended to the base.
  if (/[?#]/.test(url.href)) {
    const alone = `${url.origin}${url.pathname}`.replace(/\/+$/, '');
    throw new CliError(`The API base URL from ${from} has a query or a fragment: ${shownUrl(value)}.`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_base_url',
      suggestion:
        `Give the address of the service alone: ${alone} (gds sends its token itself: --token, ` +
        'SERVICE_TOKEN or a profile).',
    });
  }
  refuseInsecureUrl(url, `the API base URL from ${from}`);
  return url.href.replace(/\/+$/, '');
}

/** A CliError (exit 2, insecure_url) for plain http to a host that is not loopback: tokens go over https. */
export function refuseInsecureUrl(url: URL, what: string): void {
  if (!isInsecureUrl(url)) return;
  throw new CliError(`Refusing plain http to ${url.host}: ${what} must use https.`, {
    exitCode: ExitCode.Usage,
    code: INSECURE_URL_CODE,
    suggestion: INSECURE_URL_ADVICE,
  });
}

async function resolve(
  flags: CredentialFlags,
  env: Env,
  options: CredentialOptions,
  loaded?: GdsConfig,
): Promise<Resolution> {
  if (flags.token === '-') {
    // Only gds auth set reads the token from stdin; anywhere else "-" would go out as the token itself.
    throw new CliError(
      '--token - reads a token from stdin only in gds auth set; no other command reads it.',
      {
        exitCode: ExitCode.Usage,
        code: 'token_from_stdin',
        suggestion:
          'Give the token in SERVICE_TOKEN (SERVICE_TOKEN="$(cat token.txt)" gds …), or store it once: ' +
          'printf %s "$TOKEN" | gds auth set --token - --base <url>.',
      },
    );
  }
  const r: Resolution = {
    token: tokenGiven(flags.token, 'flag') ?? tokenGiven(env.SERVICE_TOKEN, 'env'),
    base:
      checked(nonEmpty(flags.base, 'flag'), '--base') ??
      checked(nonEmpty(env.SERVICE_API_URL, 'env'), 'SERVICE_API_URL'),
    storage: 'none',
  };
  if (flags.profile === undefined && r.token !== undefined && r.base !== undefined) return r;
  const config = loaded ?? (await loadConfig({ env, warn: options.warn }));
  r.config = config;
  const name = flags.profile ?? config.activeProfile ?? undefined;
  if (name === undefined) return r;
  const profile = config.profiles[name];
  if (profile === undefined) throw unknownProfile(name, config);
  const source: CredentialSource = `profile:${name}`;
  if (r.base === undefined) {
    r.base = checked({ value: profile.base, source }, `profile ${name} (${configPath(env)})`);
    r.profileName = name;
    r.profile = profile;
  }
  if (r.token === undefined) {
    r.profileName = name;
    r.profile = profile;
    // The token goes to the profile's own service only: a --base (or SERVICE_API_URL) gds cannot show to be it,
    // the profile's base being unreadable too, is refused as one that is not.
    const same = r.base === undefined || r.base.source === source || sameService(profile.base, r.base.value);
    if (same !== true && r.base !== undefined) {
      r.foreignBase = foreignBase(name, profile.base, r.base, same === undefined);
      return r;
    }
    await readProfileToken(r, name, profile, env, options);
  }
  return r;
}

/** Whether two base URLs name the same service; undefined when the profile's own is unreadable. */
function sameService(profileBase: string, base: string): boolean | undefined {
  try {
    return checkBaseUrl(profileBase, 'the profile') === base;
  } catch {
    return undefined;
  }
}

/**
 * A profile's token goes only to that profile's base: --base (or SERVICE_API_URL) elsewhere is refused, and so
 * is any, when the profile's own base is `unreadable` (no http(s) URL gds would call: nothing to compare with).
 */
function foreignBase(name: string, profileBase: string, base: Found, unreadable = false): CliError {
  const from = base.source === 'flag' ? '--base' : 'SERVICE_API_URL';
  // An unreadable base may hold anything (a password in it, say): shown as shownUrl shows it.
  const shown = unreadable ? shownUrl(profileBase) : profileBase;
  const why = unreadable
    ? `the profile's own base URL (${shown}) is not one gds calls, so nothing shows that ${base.value} is its service`
    : `that token is for ${profileBase}`;
  return new CliError(`Not sending profile ${name}'s token to ${base.value} (from ${from}): ${why}.`, {
    exitCode: ExitCode.Usage,
    code: 'token_not_for_base',
    suggestion: unreadable
      ? `Give a token for ${base.value} too (--token or SERVICE_TOKEN), or store profile ${name}'s address ` +
        `again: gds auth set --profile ${name} --base <https URL> --token <t>`
      : `Give a token for ${base.value} too (--token or SERVICE_TOKEN), drop ${from} to use ${profileBase}, ` +
        `or store a profile for it: gds auth set --profile <name> --base ${base.value} --token <t>`,
    details: { profile: name, profileBase: shown, base: base.value },
  });
}

async function readProfileToken(
  r: Resolution,
  name: string,
  profile: Profile,
  env: Env,
  options: CredentialOptions,
): Promise<void> {
  try {
    const { secrets, storage } = await readProfileSecrets(name, profile, { env, warn: options.warn });
    const token = profile.kind === 'static' ? secrets.token : secrets.accessToken;
    if (token !== undefined && token !== '') {
      r.token = { value: token, source: `profile:${name}` };
      r.storage = storage;
    } else if (profile.secretRef !== undefined) {
      r.tokenProblem = `its keychain entry (service ${profile.secretRef.service}, account ${profile.secretRef.account}) is gone`;
    }
  } catch (error) {
    if (!(error instanceof KeychainUnavailableError)) throw error;
    r.tokenProblem = `its token is in the OS keychain, and ${error.message}`;
  }
}

/**
 * A token from --token or SERVICE_TOKEN without the white space around it: a CI secret read from a file, or
 * pasted, often ends with a newline, which no HTTP header may hold (it failed as a network error that blamed
 * the base URL). White space or control characters inside it are exit 2, naming where it came from, never
 * echoing it.
 */
function tokenGiven(value: string | undefined, source: 'flag' | 'env'): Found | undefined {
  const trimmed = value?.trim();
  if (trimmed === undefined || trimmed === '') return undefined;
  if (/[\s\p{Cc}]/u.test(trimmed)) {
    const from = source === 'flag' ? '--token' : 'SERVICE_TOKEN';
    throw new CliError(`The API token from ${from} contains spaces or control characters.`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_token',
      suggestion: `Give the token exactly as issued in ${from}: one word, nothing around it.`,
    });
  }
  return { value: trimmed, source };
}

function nonEmpty(value: string | undefined, source: CredentialSource): Found | undefined {
  return value === undefined || value === '' ? undefined : { value, source };
}

function checked(found: Found | undefined, from: string): Found | undefined {
  return found === undefined ? undefined : { ...found, value: checkBaseUrl(found.value, from) };
}

function storageOf(profile: Profile): SecretStorage | 'none' {
  if (profile.secretRef !== undefined) return 'keychain';
  return [profile.token, profile.accessToken, profile.refreshToken].some((s) => s !== undefined)
    ? 'file'
    : 'none';
}

const howToSignIn = new Lines([
  'Get credentials with one of:',
  '  gds auth set --token <t> --base <url>      store a CLI token in a profile',
  '  gds auth login                             sign in with the browser',
  '  SERVICE_TOKEN=<t> SERVICE_API_URL=<url>    in CI, nothing stored',
]);

function missing(what: 'API token' | 'API base URL', r: Resolution, env: Env): CliError {
  const [flag, variable] =
    what === 'API token' ? ['--token', 'SERVICE_TOKEN'] : ['--base', 'SERVICE_API_URL'];
  let profilePart: string;
  if (r.profileName !== undefined && what === 'API token' && r.tokenProblem !== undefined) {
    profilePart = `profile ${r.profileName}: ${r.tokenProblem}`;
  } else if (r.profileName !== undefined) {
    profilePart = `profile ${r.profileName} has none`;
  } else {
    profilePart = `no profile is configured in ${configPath(env)}`;
  }
  // The spec's client message for a missing token (§7.3) is "Unauthorized".
  const lead = what === 'API token' ? 'Unauthorized: no API token' : 'No API base URL';
  return new CliError(`${lead}: no ${flag} flag, no ${variable}, and ${profilePart}.`, {
    exitCode: ExitCode.Unauthenticated,
    code: what === 'API token' ? 'no_token' : 'no_base_url',
    suggestion: howToSignIn,
  });
}

function unknownProfile(name: string, config: GdsConfig): CliError {
  const known = Object.keys(config.profiles).sort();
  return new CliError(
    `No profile named ${echoed(name)}. ${known.length === 0 ? 'No profile is configured.' : `Known profiles: ${echoedList(known)}.`}`,
    {
      exitCode: ExitCode.Usage,
      code: 'unknown_profile',
      suggestion: `Create it with: gds auth set --profile ${name.length > 64 ? '<name>' : shellWord(name)} --token <t> --base <url>`,
      details: { profile: name, known },
    },
  );
}
