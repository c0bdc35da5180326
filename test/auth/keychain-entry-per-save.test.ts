// Two saves of new credentials into one profile, the second taking the config's lock over from the first while that
// one still wrote (a holder starved past the lock's stale time): both wrote the profile's one keychain entry, and the
// config the first wrote last named an entry that held the second's token, with the first's fields (its base, its
// user, its id). Each save of new credentials now writes an entry of its own (`<name>#<savedId>@<config folder>`),
// the config names only an entry that holds what its save wrote, and the entry it replaced goes once the config
// names the new one. A command that read the config before that reads the new entry (once more, of the config as
// it is then); `gds auth logout` sweeps every entry of the profile, those no profile names too; and a profile saved
// with the one entry of before is still read, its entry moved on the next save. The keychain is a fake here (one
// entry per account, as the Secret Service keeps them).
import { AsyncResource } from 'node:async_hooks';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Profile } from '../../src/auth/config.js';
import { loadConfig, updateConfig } from '../../src/auth/config.js';
import { resolveCredentials } from '../../src/auth/credentials.js';
import { removeAllProfiles, removeProfile, saveProfile, setStaticProfile } from '../../src/auth/profiles.js';
import type * as SecretStore from '../../src/auth/secret-store.js';
import { keychainRefFor } from '../../src/auth/secret-store.js';

const keychain = vi.hoisted(() => ({
  entries: new Map<string, string>(),
  /** Runs once, as the next keychain write landed. */
  afterWrite: undefined as (() => Promise<void>) | undefined,
  /** Runs once, as the next keychain read starts. */
  beforeRead: undefined as (() => Promise<void>) | undefined,
}));

vi.mock('../../src/auth/secret-store.js', async (importOriginal) => {
  const real = await importOriginal<typeof SecretStore>();
  const { fakeKeychain } = await import('../helpers/fake-keychain.js');
  const fake = fakeKeychain(real, keychain.entries, {
    afterWrite: () => {
      const hook = keychain.afterWrite;
      keychain.afterWrite = undefined;
      return hook?.();
    },
  });
  return {
    ...real,
    ...fake,
    readSecrets: async (...args: Parameters<typeof fake.readSecrets>) => {
      const hook = keychain.beforeRead;
      keychain.beforeRead = undefined;
      await hook?.();
      return fake.readSecrets(...args);
    },
  };
});

let env: NodeJS.ProcessEnv;
beforeEach(async () => {
  env = { GDS_CONFIG_DIR: join(await mkdtemp(join(tmpdir(), 'gds-entry-per-save-')), 'gds') };
  keychain.entries.clear();
  keychain.afterWrite = undefined;
  keychain.beforeRead = undefined;
});

const base = 'https://gds.example.com';
const save = (user: string, token: string) =>
  saveProfile('ci', { kind: 'static', base, user }, { token }, { env });

/** What the keychain entry profile `name` names holds (its token), and the profile's user. */
async function profileReads(name: string): Promise<{ user?: string; token?: string }> {
  const profile = (await loadConfig({ env })).profiles[name];
  const account = profile?.secretRef?.account;
  const stored = account === undefined ? undefined : keychain.entries.get(account);
  const token = stored === undefined ? undefined : (JSON.parse(stored) as { token?: string }).token;
  return {
    ...(profile?.user === undefined ? {} : { user: profile.user }),
    ...(token === undefined ? {} : { token }),
  };
}

describe('two saves of new credentials into one profile', () => {
  it('the second saving between the first one keychain write and its config write: the profile reads the token its fields were saved with', async () => {
    await save('old@example.com', 'cli_old');
    keychain.afterWrite = async () => {
      await save('second@example.com', 'cli_second');
    };
    await save('first@example.com', 'cli_first');
    expect(await profileReads('ci')).toEqual({ user: 'first@example.com', token: 'cli_first' });
    // The entries the config no longer names are gone: the old one, and the second save's.
    expect([...keychain.entries.values()]).toEqual([JSON.stringify({ token: 'cli_first' })]);
  });

  it('each save writes an entry of its own, named by the id the config records, and removes the one it replaced', async () => {
    await save('a@example.com', 'cli_a');
    const first = (await loadConfig({ env })).profiles.ci!;
    await save('b@example.com', 'cli_b');
    const second = (await loadConfig({ env })).profiles.ci!;
    expect(second.savedId).not.toBe(first.savedId);
    expect(second.secretRef?.account).toBe(keychainRefFor('ci', env, second.savedId).account);
    expect(second.secretRef?.account).toMatch(/^ci#[0-9a-f]+@/);
    expect([...keychain.entries.keys()]).toEqual([second.secretRef?.account]);
  });
});

describe('a command that read the config before a save replaced the profile', () => {
  it('reads the token of the new save, not "its keychain entry is gone"', async () => {
    await save('old@example.com', 'cli_old');
    keychain.beforeRead = async () => {
      await save('new@example.com', 'cli_new');
    };
    const r = await resolveCredentials({ profile: 'ci' }, env);
    expect(r.token).toBe('cli_new');
  });
});

describe('gds auth logout', () => {
  /** An entry of a save of ci cut short before its config write: no profile names it. */
  const orphanOf = (name: string) => keychainRefFor(name, env, 'deadbeefdeadbeef').account;

  it('--profile ci removes its entries no profile names too, and no other profile entry', async () => {
    await save('a@example.com', 'cli_a');
    await saveProfile('other', { kind: 'static', base }, { token: 'cli_other' }, { env });
    keychain.entries.set(orphanOf('ci'), JSON.stringify({ token: 'cli_orphan' }));
    keychain.entries.set(orphanOf('other'), JSON.stringify({ token: 'cli_other_orphan' }));
    await removeProfile('ci', { env });
    const other = (await loadConfig({ env })).profiles.other!;
    expect([...keychain.entries.keys()].sort()).toEqual([other.secretRef?.account, orphanOf('other')].sort());
  });

  it('of every profile removes every entry of the config folder, and none of another folder', async () => {
    await save('a@example.com', 'cli_a');
    keychain.entries.set(orphanOf('ci'), JSON.stringify({ token: 'cli_orphan' }));
    keychain.entries.set(orphanOf('gone'), JSON.stringify({ token: 'cli_gone' }));
    const elsewhere = `ci#deadbeefdeadbeef@${env.GDS_CONFIG_DIR}-elsewhere`;
    keychain.entries.set(elsewhere, JSON.stringify({ token: 'cli_elsewhere' }));
    // A folder whose path ends in `@` and this folder's path: its accounts end as this folder's do.
    const endingAlike = `ci#deadbeefdeadbeef@${env.GDS_CONFIG_DIR}-x@${env.GDS_CONFIG_DIR}`;
    keychain.entries.set(endingAlike, JSON.stringify({ token: 'cli_ending_alike' }));
    await removeAllProfiles({ env });
    expect([...keychain.entries.keys()].sort()).toEqual([elsewhere, endingAlike].sort());
  });

  it('removes the entry of a first sign-in cut short before the config file was written (no config file)', async () => {
    keychain.entries.set(orphanOf('ci'), JSON.stringify({ token: 'cli_orphan' }));
    await removeAllProfiles({ env });
    expect([...keychain.entries.keys()]).toEqual([]);
    keychain.entries.set(orphanOf('ci'), JSON.stringify({ token: 'cli_orphan' }));
    await removeProfile('ci', { env });
    expect([...keychain.entries.keys()]).toEqual([]);
  });

  it.each(['darwin', 'win32'] as const)(
    'on %s removes the entries the profiles name and searches for no other: a search reads every secret (macOS asks for each)',
    async (platform) => {
      await save('a@example.com', 'cli_a');
      keychain.entries.set(orphanOf('ci'), JSON.stringify({ token: 'cli_orphan' }));
      const real = Object.getOwnPropertyDescriptor(process, 'platform')!;
      Object.defineProperty(process, 'platform', { ...real, value: platform });
      try {
        await removeAllProfiles({ env });
      } finally {
        Object.defineProperty(process, 'platform', real);
      }
      expect([...keychain.entries.keys()]).toEqual([orphanOf('ci')]);
    },
  );

  it('in a config folder named relatively (GDS_CONFIG_DIR=.gds) leaves the entries of the .gds of another working folder', async () => {
    const root = await mkdtemp(join(tmpdir(), 'gds-relative-'));
    await Promise.all(['a', 'b'].map((folder) => mkdir(join(root, folder))));
    const relative = { GDS_CONFIG_DIR: '.gds' };
    const saveIn = async (folder: string, token: string) => {
      process.chdir(join(root, folder));
      await saveProfile('ci', { kind: 'static', base }, { token }, { env: relative });
    };
    const cwd = process.cwd();
    try {
      await saveIn('b', 'cli_b');
      await saveIn('a', 'cli_a');
      await removeAllProfiles({ env: relative });
      process.chdir(join(root, 'b'));
      expect((await resolveCredentials({ profile: 'ci' }, relative)).token).toBe('cli_b');
    } finally {
      process.chdir(cwd);
    }
  });

  it('of every profile leaves the entry of a sign-in into a new profile whose config write is yet to come', async () => {
    await save('a@example.com', 'cli_a');
    // Outside the save's call chain, as another gds process is: it holds none of the save's locks.
    const logout = AsyncResource.bind(() => removeAllProfiles({ env }));
    keychain.afterWrite = async () => {
      await logout();
    };
    await setStaticProfile({ name: 'new', token: 'cli_new', base }, { env });
    expect(Object.keys((await loadConfig({ env })).profiles)).toEqual(['new']);
    expect(await profileReads('new')).toEqual({ token: 'cli_new' });
  });
});

describe('a profile saved with the one keychain entry of before (<name>@<config folder>)', () => {
  async function legacyProfile(): Promise<string> {
    const account = keychainRefFor('ci', env).account;
    keychain.entries.set(account, JSON.stringify({ token: 'cli_legacy' }));
    const profile: Profile = {
      kind: 'static',
      base,
      savedId: 'feedfeedfeedfeed',
      secretRef: { store: 'keychain', service: 'gds-cli', account },
    };
    await updateConfig(
      (config) => {
        config.profiles.ci = profile;
        config.activeProfile = 'ci';
      },
      { env },
    );
    return account;
  }

  it('is read as it was', async () => {
    await legacyProfile();
    expect((await resolveCredentials({ profile: 'ci' }, env)).token).toBe('cli_legacy');
  });

  it('moves to an entry of its own on the next save, the old entry removed', async () => {
    const legacy = await legacyProfile();
    await save('new@example.com', 'cli_new');
    expect(await profileReads('ci')).toEqual({ user: 'new@example.com', token: 'cli_new' });
    expect(keychain.entries.has(legacy)).toBe(false);
    expect(keychain.entries.size).toBe(1);
  });
});
