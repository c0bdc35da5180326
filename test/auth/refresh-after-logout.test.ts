// A refresh's save (saveRefreshedProfile) after `gds auth logout` dropped the profile while the refresh's request
// was out: nothing of it is left. The logout can land between the save's first look at the profile and its write
// of the config file, after the new tokens went into the keychain: the keychain entry is removed again.
import type * as SecretStore from '../../src/auth/secret-store.js';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadConfig, updateConfig } from '../../src/auth/config.js';
import type { IntegrationProfile } from '../../src/auth/config.js';
import { saveRefreshedProfile } from '../../src/auth/profiles.js';

const keychain = vi.hoisted(() => ({
  /** Runs while the keychain write is under way. */
  during: undefined as (() => Promise<void>) | undefined,
  entries: new Map<string, string>(),
}));
vi.mock('../../src/auth/secret-store.js', async (actual) => {
  const store = await actual<typeof SecretStore>();
  return {
    ...store,
    secretStorageSetting: () => 'keychain',
    placeSecrets: async (name: string, secrets: object) => {
      await keychain.during?.();
      keychain.entries.set(name, JSON.stringify(secrets));
      return {
        storage: 'keychain',
        fields: { secretRef: { store: 'keychain', service: 'gds-cli', account: name } },
      };
    },
    deleteKeychainEntry: async (profile: { secretRef?: { account: string } }) =>
      keychain.entries.delete(profile.secretRef?.account ?? ''),
  };
});

const claim = '0123456789abcdef';
const fields: IntegrationProfile = { kind: 'integration', base: 'https://ci.example' };

async function profileRefreshing(): Promise<NodeJS.ProcessEnv> {
  const env = { GDS_CONFIG_DIR: join(await mkdtemp(join(tmpdir(), 'gds-refresh-logout-')), 'gds') };
  await updateConfig(
    (config) => {
      config.profiles.ci = {
        ...fields,
        secretRef: { store: 'keychain', service: 'gds-cli', account: 'ci' },
        refreshInFlight: { since: new Date().toISOString(), refreshTokenSha256: claim },
      };
      config.activeProfile = 'ci';
    },
    { env },
  );
  return env;
}

describe('a refresh saving after the profile was logged out', () => {
  it('logged out before the save: writes nothing, not even to the keychain', async () => {
    const env = await profileRefreshing();
    await updateConfig((config) => void delete config.profiles.ci, { env });
    keychain.entries.clear();
    const saved = await saveRefreshedProfile('ci', fields, { accessToken: 'a2', refreshToken: 'r2' }, claim, {
      env,
    });
    expect(saved).toBeUndefined();
    expect(keychain.entries.size).toBe(0);
    expect((await loadConfig({ env })).profiles).toEqual({});
  });

  it('logged out while the keychain is written: the entry is removed again, the file stays without it', async () => {
    const env = await profileRefreshing();
    keychain.entries.clear();
    // The logout drops the profile's record of the refresh (removeAllProfiles) while the keychain write is out.
    keychain.during = async () => {
      await updateConfig(
        (config) => {
          const profile = config.profiles.ci;
          if (profile?.kind === 'integration') delete profile.refreshInFlight;
        },
        { env },
      );
    };
    try {
      const saved = await saveRefreshedProfile(
        'ci',
        fields,
        { accessToken: 'a2', refreshToken: 'r2' },
        claim,
        {
          env,
        },
      );
      expect(saved).toBeUndefined();
    } finally {
      keychain.during = undefined;
    }
    expect(keychain.entries.size).toBe(0);
    expect((await loadConfig({ env })).profiles.ci).not.toHaveProperty('refreshInFlight');
  });

  it('still recorded: saves as a refresh always did', async () => {
    const env = await profileRefreshing();
    keychain.entries.clear();
    const saved = await saveRefreshedProfile('ci', fields, { accessToken: 'a2', refreshToken: 'r2' }, claim, {
      env,
    });
    expect(saved?.storage).toBe('keychain');
    expect(keychain.entries.get('ci')).toContain('r2');
    expect((await loadConfig({ env })).profiles.ci).not.toHaveProperty('refreshInFlight');
  });
});
