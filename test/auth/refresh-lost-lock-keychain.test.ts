// A refresher that lost the profile lock (starved past its stale time, another gds took the lock over) saving
// its new tokens while a `gds auth login` into the same profile saves a sign-in. Both write the profile's one
// keychain entry. The refresher, finding its record gone when it wrote the config file (the login replaced the
// profile), deleted "its" keychain entry: the one the login had just stored, so the signed-in profile named an
// entry that no longer existed. Now a refresher checks it still holds the lock before it writes the keychain
// (lost: the tokens go to the config file, under the config lock that checks its record) and before it deletes
// the entry (lost: only while the entry still holds what it wrote). The keychain is a fake here: one entry per
// account, as the Secret Service keeps them.
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, beforeEach, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/auth/config.js';
import type * as FinishBeforeExit from '../../src/auth/finish-before-exit.js';
import { removeProfile } from '../../src/auth/profiles.js';
import { refreshUnderLock } from '../../src/auth/refresh.js';
import type * as SecretStore from '../../src/auth/secret-store.js';
import type { OAuthTestServer } from '../server/oauth/oauth-server.js';
import { startOAuthServer, writeSessionProfile } from '../server/oauth/oauth-server.js';
import { gate } from '../helpers/gate.js';

const keychain = vi.hoisted(() => ({
  entries: new Map<string, string>(),
  /** Runs once, as the next keychain write starts (`before`) or once it landed (`after`). */
  before: undefined as (() => Promise<void>) | undefined,
  after: undefined as (() => Promise<void>) | undefined,
}));
/** Runs once, as the refresh has the service's answer and starts saving it. */
const answered = vi.hoisted(() => ({ hook: undefined as (() => void) | undefined }));

vi.mock('../../src/auth/secret-store.js', async (importOriginal) => {
  const real = await importOriginal<typeof SecretStore>();
  const once = (key: 'before' | 'after') => {
    const hook = keychain[key];
    keychain[key] = undefined;
    return hook?.();
  };
  const { fakeKeychain } = await import('../helpers/fake-keychain.js');
  return {
    ...real,
    ...fakeKeychain(real, keychain.entries, {
      beforeWrite: () => once('before'),
      afterWrite: () => once('after'),
    }),
  };
});

vi.mock('../../src/auth/finish-before-exit.js', async (importOriginal) => {
  const real = await importOriginal<typeof FinishBeforeExit>();
  return {
    ...real,
    finishBeforeExit: <T>(work: (saving: (ms: number) => void) => Promise<T>, boundMs?: number) =>
      real.finishBeforeExit(
        (saving) =>
          work((ms) => {
            saving(ms);
            const hook = answered.hook;
            answered.hook = undefined;
            hook?.();
          }),
        boundMs,
      ),
  };
});

let server: OAuthTestServer;
let env: NodeJS.ProcessEnv;
let dir: string;

beforeAll(async () => {
  server = await startOAuthServer();
  return () => server.close();
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gds-refresh-lost-keychain-'));
  env = { GDS_CONFIG_DIR: dir };
  keychain.entries.clear();
  return () => rm(dir, { recursive: true, force: true });
});

/** Another gds takes the refresher's lock over as stale: its folder goes, as proper-lockfile removes it. */
const takeOver = () => rmSync(join(dir, 'profile-work.lock'), { recursive: true, force: true });

const expiresAt = () => new Date(Date.now() + 30_000).toISOString();
const signedIn = { accessToken: 'signed-in-access', refreshToken: 'signed-in-refresh' };
const signIn = () => writeSessionProfile(env, 'work', server.url, signedIn, expiresAt());

/** The profile `work` in the keychain, its access token expiring within the refresh margin. */
async function expiringSession() {
  const issued = await server.signIn('owner@example.com');
  const tokens = { accessToken: issued.access_token, refreshToken: issued.refresh_token };
  await writeSessionProfile(env, 'work', server.url, tokens, expiresAt());
  expect((await loadConfig({ env })).profiles.work?.secretRef).toBeDefined();
  return tokens;
}

/** The profile as the sign-in left it, and the keychain entry it names holding the sign-in's tokens. */
async function signedInIntact() {
  const profile = (await loadConfig({ env })).profiles.work;
  expect(profile).toMatchObject({ kind: 'session', secretRef: { service: 'gds-cli' } });
  expect(profile).not.toHaveProperty('accessToken');
  const entry = keychain.entries.get(profile?.secretRef?.account ?? '');
  expect(entry, 'the keychain entry the signed-in profile names').toBeDefined();
  expect(JSON.parse(entry ?? '{}')).toEqual(signedIn);
}

it('lost before it saves, while a sign-in saves: the sign-in keeps its keychain entry', async () => {
  const before = await expiringSession();
  answered.hook = takeOver;
  const writing = gate();
  keychain.before = writing.hook;
  const refreshed = refreshUnderLock('work', before.accessToken, false, { env });
  // Old: the refresher writes the keychain (held there); new: it saves into the config file and ends.
  await Promise.race([writing.reached, refreshed]);
  keychain.before = undefined;
  await signIn();
  writing.go();

  expect((await refreshed).accessToken).not.toBe(before.accessToken);
  await signedInIntact();
}, 60_000);

it.each([
  {
    meanwhile: 'a sign-in saving once its write landed: the sign-in keeps its entry',
    moment: 'after' as const,
    act: signIn,
    left: signedInIntact,
  },
  {
    meanwhile: 'a logout before its write landed: what it wrote does not outlive the logout',
    moment: 'before' as const,
    act: () => removeProfile('work', { env }),
    left: async () => {
      expect((await loadConfig({ env })).profiles).toEqual({});
      expect([...keychain.entries.keys()]).toEqual([]);
    },
  },
])(
  'lost while its keychain write was out, $meanwhile',
  async ({ moment, act, left }) => {
    const before = await expiringSession();
    const held = gate();
    keychain[moment] = held.hook;
    const refreshed = refreshUnderLock('work', before.accessToken, false, { env });
    await held.reached;
    takeOver();
    await act();
    held.go();

    expect((await refreshed).accessToken).not.toBe(before.accessToken);
    await left();
  },
  60_000,
);

it('lost before it saves, nobody else writing: its tokens go to the file and the old entry goes, so a logout leaves none', async () => {
  // The lock is lost (a laptop asleep while the request was out) but no other gds wrote the profile: the entry
  // still holds the tokens this refresh spent, which the profile, its tokens now in the file, no longer names.
  const before = await expiringSession();
  answered.hook = takeOver;
  const refreshed = await refreshUnderLock('work', before.accessToken, false, { env });
  expect(refreshed.accessToken).not.toBe(before.accessToken);
  const profile = (await loadConfig({ env })).profiles.work;
  expect(profile).toMatchObject({ kind: 'session', accessToken: refreshed.accessToken });
  expect(profile).not.toHaveProperty('secretRef');
  expect([...keychain.entries.values()], 'no entry holds the spent tokens').toEqual([]);

  await removeProfile('work', { env });
  expect((await loadConfig({ env })).profiles).toEqual({});
  expect([...keychain.entries.keys()]).toEqual([]);
}, 60_000);

it('lost before it saves, a sign-in stored its entry but not yet its profile: the sign-in keeps its entry', async () => {
  const before = await expiringSession();
  // The sign-in's keychain write landed while the refresh's request was out; its config write comes later.
  answered.hook = () => {
    takeOver();
    const account = [...keychain.entries.keys()][0] ?? '';
    keychain.entries.set(account, JSON.stringify(signedIn));
  };
  const refreshed = await refreshUnderLock('work', before.accessToken, false, { env });
  expect(refreshed.accessToken).not.toBe(before.accessToken);
  expect([...keychain.entries.values()].map((v) => JSON.parse(v) as unknown)).toEqual([signedIn]);
}, 60_000);
