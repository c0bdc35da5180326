// Where a profile's secrets live: the OS keychain (@napi-rs/keyring, pinned to the Secret Service on
// Linux: its default silently falls back to the kernel keyring) or, when no keychain answers or the
// setting says so, the 0600 config file. The addon loads only when a secret is read or written, and every
// keychain call has a timeout so a locked keychain never hangs the CLI.
import { CliError, ExitCode } from '../cli/errors.js';
import type { Env, GdsConfig, KeychainRef, Profile, ProfileSecrets, SecretStorageSetting } from './config.js';
import { configDir, configPath, secretStorageSettings } from './config.js';

export const keychainService = 'gds-cli';
const defaultTimeoutMs = 3_000;
const secretFields = ['token', 'accessToken', 'refreshToken'] as const;

export type SecretStorage = 'keychain' | 'file';

export interface SecretStoreOptions {
  env?: Env;
  /**
   * Output.warn of the command: told once per process when secrets fall back to the file (saveProfile
   * passes none for a profile whose secrets were in the file already: once per profile too).
   */
  warn?: (message: string) => void;
}

/** The profile fields that say where its secrets are: a keychain reference, or the secrets themselves. */
export interface SecretPlacement {
  storage: SecretStorage;
  fields: { secretRef: KeychainRef } | ProfileSecrets;
  /** Why the keychain was not used in auto mode (undefined when it was, or when the setting is `file`). */
  keychainProblem?: string;
}

export class KeychainUnavailableError extends Error {
  constructor(readonly reason: string) {
    super(`the OS keychain did not answer: ${reason}`);
    this.name = 'KeychainUnavailableError';
  }
}

/** GDS_SECRET_STORAGE, else the config's `secretStorage`, else `auto`. */
export function secretStorageSetting(config: GdsConfig, env: Env = process.env): SecretStorageSetting {
  const fromEnv = env.GDS_SECRET_STORAGE;
  if (fromEnv === undefined || fromEnv === '') return config.secretStorage ?? 'auto';
  if (!secretStorageSettings.includes(fromEnv as SecretStorageSetting)) {
    throw new CliError(`GDS_SECRET_STORAGE=${fromEnv} is not a secret storage.`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_secret_storage',
      suggestion: `Set it to one of ${secretStorageSettings.join(', ')} (or unset it for auto).`,
    });
  }
  return fromEnv as SecretStorageSetting;
}

export function keychainRefFor(profileName: string, env: Env = process.env): KeychainRef {
  return { store: 'keychain', service: keychainService, account: `${profileName}@${configDir(env)}` };
}

/**
 * Stores a profile's secrets by the setting and returns the fields to put into its config entry.
 * `auto`: the keychain, else the file with one warning per process; `keychain`: the keychain or a clear
 * error; `file`: the file.
 */
export async function placeSecrets(
  profileName: string,
  secrets: ProfileSecrets,
  setting: SecretStorageSetting,
  options: SecretStoreOptions = {},
): Promise<SecretPlacement> {
  const inFile: SecretPlacement = { storage: 'file', fields: onlySecrets(secrets) };
  if (setting === 'file') return inFile;
  const ref = keychainRefFor(profileName, options.env);
  try {
    await keychainCall(ref, options.env, (entry, signal) =>
      entry.setPassword(JSON.stringify(secrets), signal),
    );
    return { storage: 'keychain', fields: { secretRef: ref } };
  } catch (error) {
    if (!(error instanceof KeychainUnavailableError)) throw error;
    if (setting === 'keychain') throw keychainRequired(error);
    warnFileFallbackOnce(options);
    return { ...inFile, keychainProblem: error.reason };
  }
}

export interface ReadSecrets {
  secrets: ProfileSecrets;
  storage: SecretStorage | 'none';
}

/** A profile's secrets from wherever its entry says they are. Throws KeychainUnavailableError. */
export async function readSecrets(profile: Profile, options: SecretStoreOptions = {}): Promise<ReadSecrets> {
  const ref = profile.secretRef;
  if (ref === undefined) {
    const secrets = onlySecrets(profile);
    return { secrets, storage: Object.keys(secrets).length > 0 ? 'file' : 'none' };
  }
  const stored = await keychainCall(ref, options.env, (entry, signal) => entry.getPassword(signal));
  if (stored === null) return { secrets: {}, storage: 'none' };
  return { secrets: parseStoredSecrets(stored), storage: 'keychain' };
}

/** Removes a profile's keychain entry, if it has one. True when an entry was deleted. */
export async function deleteKeychainEntry(
  profile: Profile,
  options: SecretStoreOptions = {},
): Promise<boolean> {
  const ref = profile.secretRef;
  if (ref === undefined) return false;
  return keychainCall(ref, options.env, (entry, signal) => entry.deleteCredential(signal));
}

export function describeStorage(storage: SecretStorage, ref: KeychainRef | undefined, env?: Env): string {
  if (storage === 'keychain' && ref !== undefined) {
    return `the OS keychain (service ${ref.service}, account ${ref.account})`;
  }
  return `the config file ${configPath(env)}`;
}

interface KeyringEntry {
  setPassword(password: string, signal?: AbortSignal): Promise<void>;
  getPassword(signal?: AbortSignal): Promise<string | null>;
  deleteCredential(signal?: AbortSignal): Promise<boolean>;
}

/** One keychain operation, bounded by GDS_KEYCHAIN_TIMEOUT_MS (default 3 s). */
async function keychainCall<T>(
  ref: KeychainRef,
  env: Env | undefined,
  operation: (entry: KeyringEntry, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const timeoutMs = keychainTimeoutMs(env ?? process.env);
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new KeychainUnavailableError(`no answer within ${timeoutMs} ms (is it locked?)`));
    }, timeoutMs);
  });
  try {
    const attempt = (async () => {
      const { AsyncEntry } = await import('@napi-rs/keyring');
      // The constructor already talks to D-Bus and throws when there is no session bus.
      const entry = new AsyncEntry(ref.service, ref.account, { linux: { store: 'secret-service' } });
      return operation(entry, controller.signal);
    })();
    attempt.catch(() => undefined);
    return await Promise.race([attempt, timeout]);
  } catch (error) {
    if (error instanceof KeychainUnavailableError) throw error;
    throw new KeychainUnavailableError(keychainReason(error));
  } finally {
    clearTimeout(timer);
  }
}

function keychainTimeoutMs(env: Env): number {
  const value = Number(env.GDS_KEYCHAIN_TIMEOUT_MS);
  return Number.isFinite(value) && value > 0 ? value : defaultTimeoutMs;
}

/** The library's message without its generic prefix, e.g. `DBus error: Failed to connect to socket …`. */
function keychainReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (
    message.replace(/^(Platform failure|Couldn't access platform storage):\s*/, '').split('\n')[0] ?? message
  );
}

let warnedFileFallback = false;

function warnFileFallbackOnce(options: SecretStoreOptions): void {
  if (warnedFileFallback) return;
  warnedFileFallback = true;
  // One short line: why the keychain did not answer (D-Bus's own words) is no help to act on.
  options.warn?.(
    `No OS keychain answered, so the token is stored in ${configPath(options.env)} (mode 600); ` +
      'GDS_SECRET_STORAGE=keychain refuses instead, =file silences this.',
  );
}

function keychainRequired(error: KeychainUnavailableError): CliError {
  return new CliError(`The secret storage is set to keychain, but ${error.message}.`, {
    exitCode: ExitCode.Failure,
    code: 'keychain_unavailable',
    suggestion:
      'Unlock or start the OS keychain (a Secret Service such as gnome-keyring on Linux), or allow the ' +
      '0600 config file: GDS_SECRET_STORAGE=auto (or file).',
  });
}

function onlySecrets(source: ProfileSecrets): ProfileSecrets {
  const secrets: ProfileSecrets = {};
  for (const field of secretFields) {
    const value = source[field];
    if (typeof value === 'string') secrets[field] = value;
  }
  return secrets;
}

function parseStoredSecrets(stored: string): ProfileSecrets {
  try {
    const value: unknown = JSON.parse(stored);
    if (typeof value === 'object' && value !== null) return onlySecrets(value as ProfileSecrets);
  } catch {
    // Written by hand or by another tool: a bare token.
  }
  return { token: stored };
}
