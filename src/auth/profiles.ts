// Writing and removing profiles: the secrets go where the secret storage setting says (secret-store.ts),
// the rest into the config file (config.ts). `gds auth set`, `gds auth logout`, and later the browser
// sign-in and the token refresh write through here.
import { CliError, ExitCode } from '../core/errors.js';
import type { Env, GdsConfig, Profile, ProfileSecrets } from './config.js';
import {
  checkProfileName,
  configPath,
  emptyConfig,
  isEmpty,
  loadConfig,
  removeConfigFile,
  updateConfig,
  withProfileLock,
  withProfileLocks,
} from './config.js';
import { checkBaseUrl } from './credentials.js';
import type { SecretStorage } from './secret-store.js';
import { holderAlive } from './refresh-holder.js';
import {
  deleteKeychainAccount,
  deleteKeychainEntry,
  isProfileAccount,
  keychainAccounts,
  keychainRefFor,
  placeSecrets,
  readSecrets,
  secretStorageSetting,
} from './secret-store.js';
import { debugLog } from './debug-log.js';

export interface ProfileOptions {
  env?: Env;
  warn?: (message: string) => void;
  /** The secrets exist nowhere else (a refresh spent what they replace): see SecretStoreOptions.onlyCopy. */
  onlyCopy?: boolean;
  /** Whether the caller's lock of the profile is still its own (withProfileLock's stillHeld). */
  stillHeld?: () => Promise<boolean>;
  /** Aborted (a Ctrl-C or SIGTERM finishBeforeExit holds), ends a wait for the config's lock (updateConfig). */
  signal?: AbortSignal;
}

/** A profile's non-secret fields: everything but the secrets and where they are. */
export type ProfileFields = Profile extends infer P
  ? P extends Profile
    ? Omit<P, 'secretRef' | 'token' | 'accessToken' | 'refreshToken'>
    : never
  : never;

export interface SavedProfile {
  name: string;
  profile: Profile;
  storage: SecretStorage;
  active: boolean;
}

/**
 * Stores a profile's secrets (keychain or file, by the setting) and its entry in the config file; it
 * becomes the active profile when there is none. Call it inside withProfileLock(name, …).
 */
export async function saveProfile(
  name: string,
  fields: ProfileFields,
  secrets: ProfileSecrets,
  options: ProfileOptions = {},
): Promise<SavedProfile> {
  return (await save(name, fields, secrets, options, undefined)) as SavedProfile;
}

/** A refresh token's fingerprint, as RefreshInFlight.refreshTokenSha256 records it (never the token itself). */
export function refreshTokenFingerprint(refreshToken: string): string {
  // Loaded here, as config.ts does: node:crypto costs at start-up and only a refresh needs it.
  const { createHash } = process.getBuiltinModule('node:crypto');
  return createHash('sha256').update(refreshToken).digest('hex').slice(0, 16);
}

/**
 * A token refresh's save (refresh.ts): as saveProfile, only while the profile still records the refresh that
 * presented the refresh token of fingerprint `claim` (RefreshInFlight.refreshTokenSha256); undefined, and
 * nothing left written, when it does not. `gds auth logout` does not wait for a refresh whose request is out
 * (the service may not answer for long): it drops the profile, or the record, and the refresh saves nothing.
 * The refresh saves even when it lost the profile's lock (its tokens are the only copy), and another gds that
 * took the lock over may be writing the profile's keychain entry meanwhile (a `gds auth login`): checked by
 * `options.stillHeld` right before, the save then writes no keychain entry (the tokens go to the config file,
 * written only while the record is there), and deletes only an entry that still holds what it wrote.
 */
export async function saveRefreshedProfile(
  name: string,
  fields: ProfileFields,
  secrets: ProfileSecrets,
  claim: string,
  options: ProfileOptions = {},
): Promise<SavedProfile | undefined> {
  return save(name, fields, secrets, options, claim);
}

async function save(
  name: string,
  fields: ProfileFields,
  secrets: ProfileSecrets,
  options: ProfileOptions,
  claim: string | undefined,
): Promise<SavedProfile | undefined> {
  const claimed = (config: GdsConfig) => {
    const current = config.profiles[name];
    return (
      claim === undefined ||
      (current !== undefined &&
        current.kind !== 'static' &&
        current.refreshInFlight?.refreshTokenSha256 === claim)
    );
  };
  const before = await loadConfig(options);
  if (!claimed(before)) return undefined;
  const previous = before.profiles[name];
  // A profile whose secrets already sit in the file was told so when they first fell back: once per profile.
  // (Not under the keychain setting: tokens that go to the file then against it are said each time.)
  const setting = secretStorageSetting(before, options.env);
  const toldBefore = previous !== undefined && previous.secretRef === undefined && setting !== 'keychain';
  // Each keychain write or delete of a refresh is checked right before it: another gds may own the entry now.
  const lockLost = async () => claim !== undefined && (await options.stillHeld?.()) === false;
  const lostBeforeWrite = await lockLost();
  if (lostBeforeWrite) {
    debugLog(`profile ${name}: lost its lock before saving the refreshed tokens; they go to the config file`);
    // Under the keychain setting, tokens in the file are said each time (as placeSecrets says its fallback).
    if (setting === 'keychain')
      options.warn?.(
        `Lost the lock of profile ${name} while renewing its tokens (the machine may be too busy): the renewed ` +
          `tokens are stored in ${configPath(options.env)} (mode 600), not in the keychain, where another gds ` +
          'may be writing. The next renewal moves them to the keychain.',
      );
  }
  // New credentials get an id of their own, and with it a keychain entry of their own (keychainRefFor): no other save
  // writes it, so the config never names an entry another save overwrote (one that took the config's lock over from
  // this one, say). A renewal (a claim) keeps the id among the fields it carries over, and writes the entry the
  // profile names (a profile saved before entries had ids keeps its one entry until new credentials replace it).
  const savedId = claim === undefined ? newSavedId() : fields.savedId;
  const entry = claim === undefined ? undefined : previous?.secretRef;
  const placement = await placeSecrets(name, secrets, lostBeforeWrite ? 'file' : setting, {
    ...options,
    entry: entry ?? keychainRefFor(name, options.env, savedId),
    ...(toldBefore || lostBeforeWrite ? { warn: undefined } : {}),
  });
  const profile = {
    ...fields,
    ...(claim === undefined ? { savedId } : {}),
    ...placement.fields,
  } as Profile;
  // An entry of new credentials: no profile names it before this save does, and nobody else writes it.
  const ownEntry = claim === undefined && placement.storage === 'keychain';
  // The profile the config named when this save replaced it: its entry goes once the config names this one.
  let replaced: Profile | undefined;
  let active: boolean | undefined;
  try {
    active = await updateConfig((config) => {
      if (!claimed(config)) return undefined;
      replaced = config.profiles[name];
      config.profiles[name] = profile;
      config.activeProfile ??= name;
      return config.activeProfile === name;
    }, options);
  } catch (error) {
    // The config still names what it named: the new credentials' entry goes (should it stay, no profile names it,
    // and a logout sweeps it). A renewal's tokens written over their entry are the only copy: they stay.
    if (ownEntry) await forget(name, profile, { ...options, warn: undefined });
    throw error;
  }
  if (active === undefined) {
    // Logged out (or replaced) between the check and the write: the keychain entry just written must not outlive
    // it. An entry of its own, or one the refresh wrote while it held the profile's lock, no other gds wrote since;
    // once it lost the lock, a renewal that took it over may have stored its own tokens there, which stay.
    if (placement.storage === 'keychain') {
      if (ownEntry || !(await lockLost())) await forget(name, profile, options);
      else await forgetIfStill(name, profile, (stored) => sameSecrets(stored, secrets), options);
    }
    return undefined;
  }
  // The config names this save's secrets now, no longer the entry of those it replaced: that entry goes, or the
  // keychain would keep a copy no profile names. Once the lock was lost (a renewal) the entry may be another gds's
  // by now: only while it still holds the refresh token this refresh spent.
  if (replaced?.secretRef !== undefined && !sameEntry(replaced, profile)) {
    if (!(await lockLost())) await forget(name, replaced, options);
    else
      await forgetIfStill(
        name,
        replaced,
        (stored) =>
          stored.refreshToken !== undefined && refreshTokenFingerprint(stored.refreshToken) === claim,
        options,
      );
  }
  return { name, profile, storage: placement.storage, active };
}

/** Whether two profiles name the same keychain entry. */
function sameEntry(profile: Profile, other: Profile | undefined): boolean {
  const ref = profile.secretRef;
  const otherRef = other?.secretRef;
  return ref !== undefined && ref.service === otherRef?.service && ref.account === otherRef.account;
}

function newSavedId(): string {
  return process.getBuiltinModule('node:crypto').randomBytes(8).toString('hex');
}

/**
 * Whether profile `current` still holds the credentials `before` held, read before a long request (a sign-in,
 * `tokens issue|refresh --save-profile`): both absent, or the same but for what a renewal of the credentials
 * changes (their secrets, where they are, their expiries, the record of a refresh under way), as when `gds tokens
 * issue --profile ci --save-profile ci` renews ci's sign-in to mint the token it then saves. Other credentials
 * saved meanwhile have a savedId of their own, even when every other field is the same.
 */
export function sameCredentials(current: Profile | undefined, before: Profile | undefined): boolean {
  if (current === undefined || before === undefined) return current === before;
  return credentialsIdentity(current) === credentialsIdentity(before);
}

/**
 * What a renewal of the credentials changes (see sameCredentials), and `user`: the e-mail `gds auth login` writes
 * into the profile after its save, once the service says who signed in.
 */
const renewedFields = new Set([
  'user',
  'secretRef',
  'token',
  'accessToken',
  'refreshToken',
  'expiresAt',
  'refreshExpiresAt',
  'refreshInFlight',
]);

function credentialsIdentity(profile: Profile): string {
  const kept = Object.entries(profile).filter(([field]) => !renewedFields.has(field));
  return JSON.stringify(kept.sort(([a], [b]) => a.localeCompare(b)));
}

/** Whether a keychain entry holds these very secrets. */
const sameSecrets = (stored: ProfileSecrets, secrets: ProfileSecrets) =>
  (['token', 'accessToken', 'refreshToken'] as const).every((field) => stored[field] === secrets[field]);

export interface StaticProfileInput {
  name: string;
  token: string;
  base: string;
  /** Who the token signs in as, when the service said so. */
  user?: string;
}

/** `gds auth set`: a static CLI token and its API base, checked first; nothing changes when they are bad. */
export async function setStaticProfile(input: StaticProfileInput, options: ProfileOptions = {}) {
  const { name, fields, secrets } = staticProfile(input);
  return withProfileLock(name, () => saveProfile(name, fields, secrets, options), options);
}

/** A static profile's fields and secret, checked (a clear error for a bad token, base or name). */
export function staticProfile(input: StaticProfileInput) {
  const name = checkProfileName(input.name);
  const token = checkToken(input.token);
  const base = checkBaseUrl(input.base, '--base');
  const fields: ProfileFields = {
    kind: 'static',
    base,
    ...(input.user === undefined ? {} : { user: input.user }),
  };
  return { name, fields, secrets: { token } };
}

/** What saveIfUnchanged did: saved, or found the profile changed (`changed`: what it holds now; none: logged out). */
export type SaveIfUnchanged = { saved: SavedProfile } | { changed: Profile | undefined };

/**
 * Saves into profile `name`, under its lock, only over the credentials `before` it held when the command read it,
 * ahead of a request that may have taken long (a sign-in, a token checked or minted): a sign-in into it, another
 * command's save or a logout meanwhile is neither replaced nor undone (sameCredentials; a renewal of `before` is no
 * change). `signal` ends a wait for the profile's lock (withProfileLock) or the config's (updateConfig).
 */
export async function saveIfUnchanged(
  name: string,
  before: Profile | undefined,
  fields: ProfileFields,
  secrets: ProfileSecrets,
  options: ProfileOptions = {},
): Promise<SaveIfUnchanged> {
  return withProfileLock(
    name,
    async () => {
      const now = (await loadConfig(options)).profiles[name];
      if (!sameCredentials(now, before)) return { changed: now };
      return { saved: await saveProfile(name, fields, secrets, options) };
    },
    options,
  );
}

export interface RemovedProfile {
  name: string;
  /** True when its keychain entry was deleted; a string says why it could not be. */
  keychainEntry: boolean | string;
}

export interface LogoutResult {
  removed: RemovedProfile[];
  /** The profile active now, when a removed one was active and another remains. */
  activeProfile: string | null;
  configFileRemoved: boolean;
}

/** `gds auth logout --profile <name>`: that profile and its keychain entry; nothing when it is absent. */
export async function removeProfile(name: string, options: ProfileOptions = {}): Promise<LogoutResult> {
  checkProfileName(name);
  return withProfileLocks(
    [name],
    async () => {
      let removedProfile: Profile | undefined;
      let sweep = false;
      // The profile goes first, and with it the record of a refresh under way: that refresh saves nothing now.
      const { activeProfile, configFileRemoved } = await updateConfig((config) => {
        removedProfile = config.profiles[name];
        sweep = removedProfile?.secretRef !== undefined || keychainInUse(config, options);
        delete config.profiles[name];
        if (config.activeProfile === name) config.activeProfile = firstProfile(config);
        return { activeProfile: config.activeProfile, configFileRemoved: isEmpty(config) };
      }, options);
      const removed = removedProfile === undefined ? [] : [await forget(name, removedProfile, options)];
      if (sweep) await sweepKeychain((account) => isProfileAccount(account, name, options.env), options);
      return { removed, activeProfile, configFileRemoved: removed.length > 0 && configFileRemoved };
    },
    { ...options, unlessRefreshing: (profile) => refreshUnderWay(profile, options) },
  );
}

/**
 * `gds auth logout`: every profile's keychain entry, then the config file itself. Under every profile's lock,
 * as removeProfile is under its one, but for that of a profile whose tokens another gds is refreshing (its
 * request out: the service may not answer for long). What holds after it, all the same: no profile, no
 * keychain entry, no config file, and no refresh under way writes them back. A refresh saves only while the
 * profile still records it (saveRefreshedProfile, checked under the config file's lock); the logout drops those
 * records first, then the keychain entries (an entry such a refresh writes after that, it removes itself when
 * it finds its record gone), then the file. The locks are taken all or none (withProfileLocks): a logout that
 * held some while it waited for the rest would wait for a command that holds one of those and waits for one it
 * holds (as `gds tokens issue --profile a --save-profile b` once did).
 */
export async function removeAllProfiles(options: ProfileOptions = {}): Promise<LogoutResult> {
  const names = Object.keys((await readForLogout(options))?.profiles ?? {}).filter(lockable);
  return withProfileLocks(
    names,
    async () => {
      await dropRefreshRecords(options);
      // Read again under the locks: a refresh that finished while they were awaited changed the profiles.
      const config = await readForLogout(options);
      const removed: RemovedProfile[] = [];
      const profiles = Object.entries(config?.profiles ?? {});
      for (const [profileName, profile] of profiles) {
        removed.push(await forget(profileName, profile, options));
      }
      const named = profiles.some(([, profile]) => profile.secretRef !== undefined);
      if (named || keychainInUse(config, options)) await sweepKeychain(() => true, options);
      const configFileRemoved = await removeConfigFile(options);
      return { removed, activeProfile: null, configFileRemoved };
    },
    { ...options, unlessRefreshing: (profile) => refreshUnderWay(profile, options) },
  );
}

/** Whether the profile records a refresh whose holder (another gds process) still lives (refresh-holder.ts). */
async function refreshUnderWay(name: string, options: ProfileOptions): Promise<boolean> {
  const profile = (await readForLogout(options))?.profiles[name];
  if (profile === undefined || profile.kind === 'static' || profile.refreshInFlight === undefined)
    return false;
  const { holder, refreshTokenSha256 } = profile.refreshInFlight;
  return holderAlive(holder, refreshTokenSha256);
}

/** Drops every profile's record of a refresh under way: from now on, no refresh saves its tokens. */
async function dropRefreshRecords(options: ProfileOptions): Promise<void> {
  const config = await readForLogout(options);
  const recorded = (profile: Profile) => profile.kind !== 'static' && profile.refreshInFlight !== undefined;
  if (!Object.values(config?.profiles ?? {}).some(recorded)) return;
  await updateConfig((current) => {
    for (const profile of Object.values(current.profiles))
      if (profile.kind !== 'static') delete profile.refreshInFlight;
  }, options);
}

/** A name no gds command takes (a hand-edited file) has no lock: nothing can be refreshing it. */
function lockable(name: string): boolean {
  try {
    checkProfileName(name);
    return true;
  } catch {
    return false;
  }
}

/** The config, or undefined when it is damaged: logging out is the way out of that, and removes it all the same. */
async function readForLogout(options: ProfileOptions): Promise<GdsConfig | undefined> {
  try {
    return await loadConfig(options);
  } catch (error) {
    if (!(error instanceof CliError && error.code === 'config_invalid')) throw error;
    return undefined;
  }
}

async function forget(name: string, profile: Profile, options: ProfileOptions): Promise<RemovedProfile> {
  if (profile.secretRef === undefined) return { name, keychainEntry: false };
  try {
    return { name, keychainEntry: await deleteKeychainEntry(profile, options) };
  } catch (error) {
    const ref = profile.secretRef;
    options.warn?.(
      `Could not remove the keychain entry of profile ${name} (${(error as Error).message}). ` +
        `Remove it later with: secret-tool clear service ${ref.service} username ${ref.account}`,
    );
    return { name, keychainEntry: (error as Error).message };
  }
}

/**
 * Whether the keychain may hold entries of this folder no profile names: unless the secret storage is set to the file.
 * A save cut short before the config file was first written left an entry, and no config at all (a bad
 * GDS_SECRET_STORAGE: maybe, here).
 */
function keychainInUse(config: GdsConfig | undefined, options: ProfileOptions): boolean {
  try {
    return secretStorageSetting(config ?? emptyConfig(), options.env) !== 'file';
  } catch {
    return true;
  }
}

/**
 * Whether gds searches the keychain for its entries: where the Secret Service keeps them (Linux, the BSDs), whose
 * search lists them without a question. @napi-rs/keyring's search reads every item's secret: on macOS that asks
 * the user for each item this build of gds did not write (every one after an upgrade), and on Windows one item it
 * cannot read fails the whole search. There a logout removes the entries the profiles name, as before the search.
 */
export const keychainSearchable = (platform: NodeJS.Platform = process.platform): boolean =>
  platform === 'linux' || platform === 'freebsd' || platform === 'openbsd';

/**
 * After a logout: the keychain entries of this config folder that `belongs` picks, named by no profile now. Each save
 * of new credentials writes an entry of its own (keychainRefFor), and one cut short before its config write (a
 * killed gds, a config file that could not be written and an entry that could not be removed) left its entry behind.
 * Only where the keychain may be in use: a removed profile named an entry, or the setting is not the file. What cannot
 * be found or removed stays (said in the debug log): the profiles' own entries were said already (forget).
 */
async function sweepKeychain(belongs: (account: string) => boolean, options: ProfileOptions): Promise<void> {
  if (!keychainSearchable()) return;
  let accounts: string[];
  try {
    accounts = (await keychainAccounts(options)).filter(belongs);
  } catch (error) {
    debugLog(`keychain entries not swept: ${(error as Error).message}`);
    return;
  }
  const byProfile = new Map<string, string[]>();
  for (const account of accounts) {
    const name = account.slice(0, account.search(/[#@]/));
    byProfile.set(name, [...(byProfile.get(name) ?? []), account]);
  }
  for (const [name, entries] of byProfile) await sweepProfileEntries(name, entries, options);
}

/**
 * Removes keychain entries `accounts` of profile `name` under its lock: a save of new credentials holds it from its
 * keychain write to its config write (saveIfUnchanged), so an entry a save wrote and is about to name (a sign-in into
 * a profile this logout never saw) is not taken from under it. The lock is tried once: while another gds holds it,
 * the entries stay (no wait, and no deadlock with a holder that waits for a lock this logout holds).
 */
async function sweepProfileEntries(name: string, accounts: string[], options: ProfileOptions): Promise<void> {
  const remove = async () => {
    for (const account of accounts) {
      if (await deleteKeychainAccount(account, options)) debugLog(`keychain entry ${account}: swept`);
    }
  };
  try {
    // A name no gds command takes (a hand-edited file) has no lock, and no save of new credentials.
    if (!lockable(name)) await remove();
    else await withProfileLock(name, remove, { env: options.env, waitMs: 0 });
  } catch (error) {
    const busy = error instanceof CliError && error.code === 'config_locked';
    debugLog(
      `keychain entries of profile ${name} not swept: ${busy ? 'another gds holds its lock' : (error as Error).message}`,
    );
  }
}

/**
 * Deletes the keychain entry `profile` names only while it still holds what this gds knows there (`ours`: what
 * it wrote, or the tokens it replaced): without the profile's lock, another gds may have stored its own secrets
 * in it since. Read and delete are two keychain calls: only another write landing between them is not seen.
 */
async function forgetIfStill(
  name: string,
  profile: Profile,
  ours: (stored: ProfileSecrets) => boolean,
  options: ProfileOptions,
): Promise<void> {
  const stored = await readSecrets(profile, options).catch(() => undefined);
  const still = stored?.storage === 'keychain' && ours(stored.secrets);
  debugLog(
    `profile ${name}: lock lost; its keychain entry ${still ? 'still holds' : 'no longer holds'} our tokens`,
  );
  if (still) await forget(name, profile, options);
}

function firstProfile(config: GdsConfig): string | null {
  return Object.keys(config.profiles).sort()[0] ?? null;
}

function checkToken(token: string): string {
  const trimmed = token.trim();
  if (trimmed === '' || /[\s\p{Cc}]/u.test(trimmed)) {
    throw new CliError('The token is empty or contains spaces or control characters.', {
      exitCode: ExitCode.Usage,
      code: 'invalid_token',
      suggestion: 'Pass the token exactly as issued: gds auth set --token <t> --base <url>',
    });
  }
  return trimmed;
}
