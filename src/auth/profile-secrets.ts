// Reading a profile's secrets as a command does: where the config says they are, read once more when a save
// replaced them meanwhile. Apart from secret-store.ts, whose keychain tests replace (vi.mock) readSecrets.
import type { Profile } from './config.js';
import { loadConfig } from './config.js';
import { debugLog } from './debug-log.js';
import type { ReadSecrets, SecretStoreOptions } from './secret-store.js';
import { readSecrets } from './secret-store.js';

/**
 * Profile `name`'s secrets where `profile`, read from the config, says they are; read once more where the config
 * says now when its keychain entry was gone: a save of new credentials removes the entry it replaced once the config
 * names its own (profiles.ts), which may fall between this gds's read of the config and its read of the entry. Only
 * new credentials of the same kind for the same base are read so (what `profile` was checked for).
 */
export async function readProfileSecrets(
  name: string,
  profile: Profile,
  options: SecretStoreOptions = {},
): Promise<ReadSecrets & { profile: Profile }> {
  const read = await readSecrets(profile, options);
  if (read.storage !== 'none' || profile.secretRef === undefined) return { ...read, profile };
  const now = (await loadConfig(options)).profiles[name];
  const moved =
    now !== undefined &&
    now.kind === profile.kind &&
    now.base === profile.base &&
    now.secretRef?.account !== profile.secretRef.account;
  if (!moved) return { ...read, profile };
  debugLog(`profile ${name}: its keychain entry was replaced while it was read; reading the new one`);
  return { ...(await readSecrets(now, options)), profile: now };
}
