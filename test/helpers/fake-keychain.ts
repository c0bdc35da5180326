// A fake OS keychain for tests that mock secret-store.ts (vi.mock): one entry per account, as the Secret Service
// keeps them, in `entries` (keychainAccounts finds them as its search does). Secrets set to go to the file, and profiles whose secrets are in it, are as ever.
// `beforeWrite` and `afterWrite` run as each keychain write starts and once it landed (one may throw: no answer).
// A write that gets no answer (KeychainUnavailableError) is what placeSecrets makes of it: the file under `auto`
// (or for the only copy), a keychain_unavailable error under `keychain`.
import type { Profile } from '../../src/auth/config.js';
import { CliError, ExitCode } from '../../src/core/errors.js';
import type * as SecretStore from '../../src/auth/secret-store.js';

export function fakeKeychain(
  real: typeof SecretStore,
  entries: Map<string, string>,
  hooks: { beforeWrite?: () => unknown; afterWrite?: () => unknown } = {},
) {
  const write = async (account: string, secrets: object) => {
    await hooks.beforeWrite?.();
    entries.set(account, JSON.stringify(secrets));
    await hooks.afterWrite?.();
  };
  return {
    placeSecrets: async (...args: Parameters<typeof SecretStore.placeSecrets>) => {
      const [name, secrets, setting, options] = args;
      if (setting === 'file') return real.placeSecrets(...args);
      const secretRef = options?.entry ?? real.keychainRefFor(name, options?.env);
      try {
        await write(secretRef.account, secrets);
      } catch (error) {
        if (!(error instanceof real.KeychainUnavailableError)) throw error;
        if (setting === 'keychain' && options?.onlyCopy !== true)
          throw new CliError(`The secret storage is set to keychain, but ${error.message}.`, {
            exitCode: ExitCode.Failure,
            code: 'keychain_unavailable',
          });
        return {
          ...(await real.placeSecrets(name, secrets, 'file', options)),
          keychainProblem: error.reason,
        };
      }
      return { storage: 'keychain' as const, fields: { secretRef } };
    },
    readSecrets: async (profile: Profile, options?: SecretStore.SecretStoreOptions) => {
      if (profile.secretRef === undefined) return real.readSecrets(profile, options);
      const stored = entries.get(profile.secretRef.account);
      return stored === undefined
        ? { secrets: {}, storage: 'none' as const }
        : { secrets: JSON.parse(stored) as object, storage: 'keychain' as const };
    },
    deleteKeychainEntry: async (profile: Profile) => entries.delete(profile.secretRef?.account ?? ''),
    deleteKeychainAccount: async (account: string) => entries.delete(account),
    keychainAccounts: async (options?: SecretStore.SecretStoreOptions) =>
      [...entries.keys()].filter((account) => real.isFolderAccount(account, options?.env)),
  };
}
