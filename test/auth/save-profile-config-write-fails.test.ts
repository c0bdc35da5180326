// `gds tokens refresh|issue --save-profile ci` writes the new tokens into ci's keychain entry, then ci's entry in the
// config file. When that second write failed (a disk full, the config's lock held past its wait), gds said the
// tokens were not saved in ci (and showed them, or named the token to revoke), while ci's keychain entry held them:
// ci read the new tokens with the rest of what it held before (its old token's id and expiries), its own tokens
// gone, and a revoke as advised would leave it holding a revoked token. Each save of new credentials now writes a
// keychain entry of its own, which the config names only once written: ci keeps its entry and its tokens, and the new
// entry is removed (one that could not be is named by no profile, and `gds auth logout` sweeps it).
// The keychain is a fake here (one entry per account, as the Secret Service keeps them); the config file's write
// fails once, right after the keychain write.
// A config write renames its temporary copy over config.json, then syncs the folder. When that sync failed (an I/O
// error, a file system that refuses to sync a folder), the write failed although config.json held the new profile:
// gds said the tokens were not saved and put ci's entry back as it was, under the new config fields (ci read its
// old tokens as the new token's). The rename writes the file: a failed sync (said in the debug log) now fails nothing.
import { mkdtemp } from 'node:fs/promises';
import type * as FsPromises from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfig, withProfileLock } from '../../src/auth/config.js';
import type * as Config from '../../src/auth/config.js';
import { saveProfile } from '../../src/auth/profiles.js';
import type * as SecretStore from '../../src/auth/secret-store.js';
import { answeringService } from '../helpers/held-profile-lock.js';
import { integrationAnswers } from '../helpers/integration-answers.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { ndjson } from '../e2e/login-helpers.js';

const keychain = vi.hoisted(() => ({
  entries: new Map<string, string>(),
  /** Fails the config file's next write once the next keychain write landed. */
  failConfigAfterWrite: false,
  /** Fails every keychain write from the next one on (the put-back's). */
  failWrites: false,
  /** Whether the keychain stops answering writes once the new tokens are in it (the put-back then fails). */
  putBackFails: false,
  /** Fails the next sync of the config folder (`config.dir`) once the next keychain write landed. */
  failFolderSyncAfterWrite: false,
}));
const config = vi.hoisted(() => ({
  failNext: false,
  /** The config folder of the test (GDS_CONFIG_DIR). */
  dir: '',
  /** The folder whose next sync fails with `syncFailure`. */
  failSyncOf: undefined as string | undefined,
  /** What that sync fails with: EIO (a disk failing), EINVAL (a file system that cannot sync a folder). */
  syncFailure: 'EIO',
}));

vi.mock('../../src/auth/secret-store.js', async (importOriginal) => {
  const real = await importOriginal<typeof SecretStore>();
  const { fakeKeychain } = await import('../helpers/fake-keychain.js');
  return {
    ...real,
    ...fakeKeychain(real, keychain.entries, {
      beforeWrite: () => {
        if (keychain.failWrites) throw new real.KeychainUnavailableError('the keychain is locked');
      },
      afterWrite: () => {
        if (keychain.failFolderSyncAfterWrite) {
          keychain.failFolderSyncAfterWrite = false;
          config.failSyncOf = config.dir;
        }
        if (!keychain.failConfigAfterWrite) return;
        keychain.failConfigAfterWrite = false;
        config.failNext = true;
        keychain.failWrites = keychain.putBackFails;
      },
    }),
  };
});

vi.mock('../../src/auth/config.js', async (importOriginal) => {
  const real = await importOriginal<typeof Config>();
  return {
    ...real,
    updateConfig: async (...args: Parameters<typeof Config.updateConfig>) => {
      if (config.failNext) {
        config.failNext = false;
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      }
      return real.updateConfig(...args);
    },
  };
});

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof FsPromises>();
  const open = async (...args: Parameters<typeof real.open>) => {
    const handle = await real.open(...args);
    if (config.failSyncOf === undefined || args[0] !== config.failSyncOf) return handle;
    config.failSyncOf = undefined;
    return Object.assign(handle, {
      sync: () =>
        Promise.reject(
          Object.assign(new Error(`${config.syncFailure}: fsync`), { code: config.syncFailure }),
        ),
    });
  };
  return { ...real, default: { ...real, open }, open };
});

const { tokens, issued } = integrationAnswers('tok_newPair42');
const old = { accessToken: 'old-access-42', refreshToken: 'old-refresh-42' };
const given = 'tok_given42.givenRefreshSecret42';

let env: NodeJS.ProcessEnv;
let closeService: (() => Promise<void>) | undefined;
beforeEach(async () => {
  config.dir = join(await mkdtemp(join(tmpdir(), 'gds-config-write-fails-')), 'gds');
  env = { GDS_CONFIG_DIR: config.dir };
  keychain.entries.clear();
  keychain.failConfigAfterWrite = false;
  keychain.failWrites = false;
  keychain.putBackFails = false;
  keychain.failFolderSyncAfterWrite = false;
  config.failNext = false;
  config.failSyncOf = undefined;
  config.syncFailure = 'EIO';
});
afterEach(async () => {
  await closeService?.();
  closeService = undefined;
});

/** Profile ci: an integration token in the keychain, live. */
async function ciInKeychain(base: string) {
  await withProfileLock(
    'ci',
    () =>
      saveProfile(
        'ci',
        {
          kind: 'integration',
          base,
          tokenId: 'tok_old42',
          expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
        },
        old,
        { env },
      ),
    { env },
  );
  expect(await entryOfCi()).toEqual(old);
}

/** What the keychain entry profile ci names holds. */
const entryOfCi = async () => {
  const account = (await loadConfig({ env })).profiles.ci?.secretRef?.account;
  const stored = account === undefined ? undefined : keychain.entries.get(account);
  return stored === undefined ? undefined : (JSON.parse(stored) as object);
};

const commands = {
  refresh: {
    args: ['tokens', 'refresh', '--refresh-token', given],
    answer: { tokens },
    extra: {},
  },
  issue: {
    args: ['tokens', 'issue', '--name', 'ci', '--env', 'dev', '--scope', 'workspace:read:audit'],
    answer: issued,
    extra: { SERVICE_TOKEN: 'cli_person42' },
  },
};

/** Runs `command` --save-profile ci (--json), the config file's write failing right after the keychain's. */
async function saveFailing(command: keyof typeof commands, prepare?: (base: string) => Promise<void>) {
  const { args, answer, extra } = commands[command];
  const service = await answeringService(answer);
  closeService = service.close;
  await prepare?.(service.url);
  const before = await loadConfig({ env });
  keychain.failConfigAfterWrite = true;
  const r = await runInProcess([...args, '--save-profile', 'ci', '--force', '--json'], {
    env: { ...env, ...extra, SERVICE_API_URL: service.url },
  });
  expect(r.code, r.stderr).toBe(1);
  expect(config.failNext, 'the config write failed').toBe(false);
  const error = ndjson(r.stderr).find((line) => line.error !== undefined)?.error as Record<string, string>;
  expect(error.message).toMatch(/^ENOSPC: no space left on device, write/);
  // ci is as it was, in the config file as in the keychain.
  expect(await loadConfig({ env })).toEqual(before);
  return { r, error };
}

describe('--save-profile ci, the config file not written after the keychain was', () => {
  it('tokens refresh into ci held in the keychain: the tokens shown, and ci keeps its own tokens', async () => {
    const { r, error } = await saveFailing('refresh', ciInKeychain);
    expect(error.message).toMatch(
      /new tokens of integration token tok_newPair42 were not saved in profile ci/,
    );
    expect(ndjson(r.stdout)).toEqual([{ tokens }]);
    expect(await entryOfCi()).toEqual(old);
  });

  it('tokens issue into ci held in the keychain: the token to revoke named, and ci keeps its own tokens', async () => {
    const { r, error } = await saveFailing('issue', ciInKeychain);
    expect(error.message).toMatch(/integration token tok_newPair42 were not saved, and are not shown/);
    expect(error.suggestion).toContain('gds tokens revoke tok_newPair42');
    expect(r.stdout).toBe('');
    expect(await entryOfCi()).toEqual(old);
    for (const secret of [tokens.accessToken, tokens.refreshToken]) expect(r.stderr).not.toContain(secret);
  });

  it('tokens refresh into a profile ci that did not exist: no keychain entry is left', async () => {
    const { r } = await saveFailing('refresh');
    expect(ndjson(r.stdout)).toEqual([{ tokens }]);
    expect(keychain.entries.size).toBe(0);
  });

  it('the keychain not answering once the new tokens are in it: ci still reads its own tokens', async () => {
    keychain.putBackFails = true;
    const { r, error } = await saveFailing('refresh', ciInKeychain);
    expect(ndjson(r.stdout)).toEqual([{ tokens }]);
    expect(error.message).not.toMatch(/reads them from its keychain entry all the same/);
    expect(await entryOfCi()).toEqual(old);
  });
});

// The failed sync of a disk (EIO) is said in a warning: the credentials written may not outlive a crash. A file
// system that cannot sync a folder (EINVAL) is not a failure of the write: nothing is said.
describe('--save-profile ci, the config folder not synced after the rename', () => {
  it.each([
    ['EIO', true],
    ['EINVAL', false],
  ])(
    '(%s) tokens refresh into ci held in the keychain: saved, said so, and the keychain agrees',
    async (code, warned) => {
      const service = await answeringService({ tokens });
      closeService = service.close;
      await ciInKeychain(service.url);
      keychain.failFolderSyncAfterWrite = true;
      config.syncFailure = code;
      const r = await runInProcess([...commands.refresh.args, '--save-profile', 'ci', '--force', '--json'], {
        env: { ...env, SERVICE_API_URL: service.url },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(keychain.failFolderSyncAfterWrite || config.failSyncOf !== undefined, 'the sync failed').toBe(
        false,
      );
      expect(ndjson(r.stdout)).toMatchObject([{ profile: 'ci', storage: 'keychain' }]);
      expect(ndjson(r.stderr).filter((line) => line.error !== undefined)).toEqual([]);
      const warnings = ndjson(r.stderr).filter((line) => line.warning !== undefined);
      expect(warnings).toEqual(
        warned
          ? [{ warning: { message: expect.stringMatching(/could not be synced \(EIO\).*Check the disk/) } }]
          : [],
      );
      expect((await loadConfig({ env })).profiles.ci).toMatchObject({ tokenId: 'tok_newPair42' });
      expect(await entryOfCi()).toEqual({
        accessToken: tokens.accessToken,
        refreshToken: tokens.refreshToken,
      });
      for (const secret of [tokens.accessToken, tokens.refreshToken])
        expect(r.stdout + r.stderr).not.toContain(secret);
    },
  );
});

// `gds auth set` saves the same way. Its failed config write came out as an error gds did not expect (code
// internal: "gds did not expect this … report what it prints"), a disk full or a config lock held past its wait as
// much as a keychain entry that could not be put back: said now as the save's failure, with what became of ci.
describe('gds auth set --profile ci, the config file not written after the keychain was', () => {
  /** `gds auth set` of a new token into ci held in the keychain (--json), the config's write failing. */
  async function setFailing() {
    const base = 'http://127.0.0.1:9';
    await ciInKeychain(base);
    const before = await loadConfig({ env });
    keychain.failConfigAfterWrite = true;
    const r = await runInProcess(
      [
        'auth',
        'set',
        '--profile',
        'ci',
        '--token',
        'cli_newToken42',
        '--base',
        base,
        '--no-verify',
        '--force',
        '--json',
      ],
      { env },
    );
    expect(r.code, r.stderr).toBe(1);
    expect(config.failNext, 'the config write failed').toBe(false);
    expect(r.stdout).toBe('');
    expect(await loadConfig({ env })).toEqual(before);
    const error = ndjson(r.stderr).find((line) => line.error !== undefined)?.error as Record<string, string>;
    expect(error).toMatchObject({ code: 'save_failed' });
    expect(error.message).toMatch(/^ENOSPC: no space left on device, write/);
    expect(error.suggestion).not.toMatch(/did not expect/);
    expect(r.stderr).not.toContain('cli_newToken42');
    return error;
  }

  it('ci keeps its own tokens, and the token was not saved', async () => {
    const error = await setFailing();
    expect(error.message).toMatch(/the token was not saved in profile ci/);
    expect(await entryOfCi()).toEqual(old);
  });

  it('the keychain not answering once the new token is in it: ci still reads its own tokens', async () => {
    keychain.putBackFails = true;
    const error = await setFailing();
    expect(error.message).toMatch(/the token was not saved in profile ci/);
    expect(await entryOfCi()).toEqual(old);
  });
});
