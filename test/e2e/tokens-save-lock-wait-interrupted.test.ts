// `gds tokens refresh --save-profile ci` has the service's answer (the refresh token given is spent: the answer
// is the only copy of the new tokens) and waits for ci's lock, which another gds holds (a renewal of ci hung on
// the network, say), up to GDS_LOCK_WAIT_MS (~20 s). A SIGTERM (a cancelled CI job) or a Ctrl-C then was held only
// for the save's bound (the keychain timeout + 2 s), and gds exited 143 or 130 with the tokens neither saved nor
// shown. The signal now ends the wait at once: the tokens are shown as the unsaved answer always is (stdout, the
// `{"tokens":…}` record under --json), stderr says why they were not saved, and gds exits 143 or 130. The lock is
// held by the test until gds has ended: gds did not wait for it. A real gds process, the signal sent once its
// debug log says it waits for the lock.
// `gds tokens issue --save-profile ci` likewise: the issued token is live on the service, and the answer the only
// place its tokens are. The signal ended gds 143 or 130 with the token saved nowhere and named nowhere. The signal
// now ends the wait at once too: the tokens are still not shown (the person's sign-in issues another), and stderr
// (the --json error record) says they were not saved and names the token to revoke.
// Past ci's lock, the save waits for the config file's lock (~20 s) when another gds writes the config. The signal
// did not end that wait: gds waited it out, then exited 1 (config_locked) or by the signal with nothing said. It
// ends it now as it ends the wait for ci's lock, with the outcome said the same way.
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/auth/config.js';
import { setStaticProfile } from '../../src/auth/profiles.js';
import { cliEnv, collect, node24, repoRoot } from '../cli/helpers/cli-process.js';
import { integrationAnswers } from '../helpers/integration-answers.js';
import { answeringService, holdConfigLock, lockedProfileCi } from '../helpers/held-profile-lock.js';

const { tokens, issued } = integrationAnswers('tok_waiting42');

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

/**
 * gds from its sources (bin/dev.js through tsx: no build, so no other change in the checkout can keep it from
 * running), with `env` added. `waiting` settles once its GDS_DEBUG log says it waits for the lock `lock` (ci's).
 */
function startGds(args: string[], env: Record<string, string>, lock = 'profile-ci.lock') {
  const child = spawn(node24, ['--import', 'tsx', 'bin/dev.js', ...args], {
    cwd: repoRoot,
    env: cliEnv({ ...env, GDS_DEBUG: '1' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const result = collect(child);
  const waiting = new Promise<void>((resolve, reject) => {
    let stderr = '';
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk;
      if (stderr.includes(`${lock}: held by another process; waiting up to`)) resolve();
    });
    void result.then((r) =>
      reject(new Error(`gds ended (${r.code}) before waiting for the lock:\n${r.stderr}`)),
    );
  });
  return { child, result, waiting };
}

/**
 * Profile ci, its lock held by the test (lockedProfileCi), and a service answering `answer`. `interrupt` runs gds
 * with `args` and --save-profile ci --force, and sends it `signal` once it waits for ci's lock.
 */
async function setUp(answer: unknown) {
  const { service, env, before } = await lockedProfileCi(answer, cleanup);
  return { env, before, interrupt: interrupting(service.url, env, 'profile-ci.lock') };
}

/** Runs gds with `args` and --save-profile ci --force, and sends it `signal` once it waits for the lock `lock`. */
function interrupting(url: string, env: Record<string, string>, lock: string) {
  return async (args: string[], signal: NodeJS.Signals, extra: Record<string, string> = {}) => {
    const gds = startGds(
      [...args, '--save-profile', 'ci', '--force'],
      // A wait far past any test's patience: the signal, not the wait's end, must end it.
      { ...env, ...extra, SERVICE_API_URL: url, GDS_LOCK_WAIT_MS: '600000', NO_COLOR: '1' },
      lock,
    );
    await gds.waiting;
    gds.child.kill(signal);
    return gds.result;
  };
}

/**
 * Profile ci (a static token, secrets in the file), a service answering `answer`, and the config file's lock held by
 * the test, as another gds writing the config would; `interrupt` as setUp's, once gds waits for the config's lock.
 */
async function setUpConfigLocked(answer: unknown) {
  const service = await answeringService(answer);
  cleanup.push(service.close);
  const env = {
    GDS_CONFIG_DIR: join(await mkdtemp(join(tmpdir(), 'gds-config-locked-')), 'gds'),
    GDS_SECRET_STORAGE: 'file',
  };
  await setStaticProfile({ name: 'ci', token: 'cli_oldProfileToken42', base: service.url }, { env });
  const before = await loadConfig({ env });
  await holdConfigLock(env, cleanup);
  return { env, before, interrupt: interrupting(service.url, env, 'config.json.lock') };
}

/** tokens refresh of the token the service answers for, its refresh token given on the command line. */
const refreshArgs = ['tokens', 'refresh', '--refresh-token', 'tok_waiting42.oldRefreshSecret42'];

/** Lines of stderr that are not GDS_DEBUG's (`gds: …`). */
const said = (stderr: string) =>
  stderr.split('\n').filter((line) => line !== '' && !line.startsWith('gds: '));

/** The locks a save into ci waits for: ci's, then the config file's; each held by the test, as another gds would. */
const locks = {
  ci: { setUp, waitingFor: /Interrupted.* while waiting for another gds at work on profile ci/ },
  'the config file': {
    setUp: setUpConfigLocked,
    waitingFor: /Interrupted.* while waiting for another gds writing \S*config\.json/,
  },
};
const signalAndLock = (['SIGTERM', 'SIGINT'] as const).flatMap((signal) =>
  (Object.keys(locks) as (keyof typeof locks)[]).map((lock) => [signal, lock] as const),
);

describe.each(signalAndLock)(
  '%s while tokens refresh --save-profile ci waits for %s, locked by another gds',
  (signal, lock) => {
    const { waitingFor } = locks[lock];
    it.each([true, false])(
      '--json %s: the tokens shown, why said, exit by the signal',
      async (json) => {
        const { env, before, interrupt } = await locks[lock].setUp({ tokens });
        const r = await interrupt([...refreshArgs, ...(json ? ['--json'] : [])], signal);

        expect(r.code, r.stderr).toBe(signal === 'SIGINT' ? 130 : 143);
        if (json) {
          expect(
            r.stdout
              .split('\n')
              .filter(Boolean)
              .map((line) => JSON.parse(line) as unknown),
          ).toEqual([{ tokens }]);
          const lines = said(r.stderr).map((line) => JSON.parse(line) as { error: Record<string, string> });
          expect(lines).toHaveLength(1);
          expect(lines[0]?.error).toMatchObject({ code: 'interrupted' });
          expect(lines[0]?.error.message).toMatch(waitingFor);
          expect(lines[0]?.error.message).toMatch(/not saved in profile ci/);
          expect(lines[0]?.error.message).toMatch(/refresh token you gave is spent/);
          expect(lines[0]?.error.suggestion).toMatch(/gds tokens refresh --save-profile ci --force/);
        } else {
          expect(r.stdout).toContain(`Access token:  ${tokens.accessToken}`);
          expect(r.stdout).toContain(`Refresh token: ${tokens.refreshToken}`);
          const text = said(r.stderr).join('\n');
          expect(text).toMatch(waitingFor);
          expect(text).toMatch(/not saved in profile ci/);
          expect(text).not.toMatch(/^Interrupted\.$/m);
        }
        for (const secret of [tokens.accessToken, tokens.refreshToken])
          expect(r.stderr).not.toContain(secret);
        // Nothing saved: ci is as the lock's holder left it.
        expect(await loadConfig({ env })).toEqual(before);
      },
      120_000,
    );

    // A --jq filter jq itself runs writes its records once jq has run: gds exited by the signal before, and the
    // tokens shown instead of saved, the only copy, never reached stdout.
    it('--jq: the tokens shown through jq, why said, exit by the signal', async () => {
      const { env, before, interrupt } = await locks[lock].setUp({ tokens });
      const r = await interrupt(
        [...refreshArgs, '--jq', '.tokens.accessToken, .tokens.refreshToken'],
        signal,
      );
      expect(r.code, r.stderr).toBe(signal === 'SIGINT' ? 130 : 143);
      expect(r.stdout).toBe(`${tokens.accessToken}\n${tokens.refreshToken}\n`);
      const lines = said(r.stderr).map((line) => JSON.parse(line) as { error: Record<string, string> });
      expect(lines).toHaveLength(1);
      expect(lines[0]?.error.message).toMatch(waitingFor);
      expect(await loadConfig({ env })).toEqual(before);
    }, 120_000);
  },
);

describe.each(signalAndLock)(
  '%s while tokens issue --save-profile ci waits for %s, locked by another gds',
  (signal, lock) => {
    const { waitingFor } = locks[lock];
    it.each([true, false])(
      '--json %s: the tokens neither saved nor shown, the token to revoke named, exit by the signal',
      async (json) => {
        const { env, before, interrupt } = await locks[lock].setUp(issued);
        const r = await interrupt(
          [
            'tokens',
            'issue',
            '--name',
            'ci',
            '--env',
            'dev',
            '--scope',
            'workspace:read:audit',
            ...(json ? ['--json'] : []),
          ],
          signal,
          // The person's own sign-in, which issues the token.
          { SERVICE_TOKEN: 'cli_personWaiting42' },
        );

        expect(r.code, r.stderr).toBe(signal === 'SIGINT' ? 130 : 143);
        expect(r.stdout).toBe('');
        const text = said(r.stderr).join('\n');
        if (json) {
          const lines = said(r.stderr).map((line) => JSON.parse(line) as { error: Record<string, string> });
          expect(lines).toHaveLength(1);
          expect(lines[0]?.error).toMatchObject({ code: 'interrupted' });
          expect(lines[0]?.error.message).toMatch(waitingFor);
          expect(lines[0]?.error.message).toMatch(/integration token tok_waiting42 were not saved/);
          expect(lines[0]?.error.suggestion).toContain('gds tokens revoke tok_waiting42');
        } else {
          expect(text).toMatch(waitingFor);
          expect(text).toMatch(/integration token tok_waiting42 were not saved/);
          expect(text).toContain('gds tokens revoke tok_waiting42');
          expect(text).not.toMatch(/^Interrupted\.$/m);
        }
        for (const secret of [tokens.accessToken, tokens.refreshToken, 'cli_personWaiting42'])
          expect(r.stdout + r.stderr).not.toContain(secret);
        expect(await loadConfig({ env })).toEqual(before);
      },
      120_000,
    );
  },
);
