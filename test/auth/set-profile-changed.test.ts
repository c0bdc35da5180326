// `gds auth set --profile ci` checks the token it is given with the service (GET /api/me) before it saves it, and
// checked before that that ci held no live token. Another command may save into ci while the check is out (a
// sign-in, `tokens issue --save-profile ci`, `auth set` of another token) or log it out: auth set used to save
// over it all the same (exit 0). It now re-reads ci under ci's lock at the save, as `auth login` does, and
// refuses (exit 1, profile_changed) when ci is no longer the profile it found, saying the token was not saved and
// what to do; ci keeps what the other command left. The service here answers GET /api/me when the test says so.
import type { ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig, withProfileLock } from '../../src/auth/config.js';
import { saveProfile, setStaticProfile } from '../../src/auth/profiles.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { ndjson } from '../e2e/login-helpers.js';
import { profileChanges } from '../helpers/profile-changes.js';

const me = {
  user: { id: 'u_set42', email: 'ada@example.com', displayName: 'Ada' },
  workspace: { id: 'w_set42', name: 'Set' },
  role: 'OWNER',
  token: { kind: 'cli_token', audience: 'session', scopes: [], environment: null },
  effectiveEnvironmentScope: ['*'],
};

/** A service whose GET /api/me is answered (with `me`) only once the test calls `answer`. */
async function heldService() {
  let asked!: () => void;
  const requested = new Promise<void>((resolve) => (asked = resolve));
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  const server = createServer((request, response: ServerResponse) => {
    request.resume();
    asked();
    void answered.then(() =>
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(me)),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requested,
    answer,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let closeService: (() => Promise<void>) | undefined;
afterEach(async () => {
  await closeService?.();
  closeService = undefined;
});

const given = 'cli_givenToken42';

describe('gds auth set --profile ci while another command changes ci during the token check', () => {
  it.each(profileChanges)(
    '$what: refused, profile_changed, the token not saved over it',
    async (m) => {
      const service = await heldService();
      closeService = service.close;
      const configDir = join(await mkdtemp(join(tmpdir(), 'gds-set-changed-')), 'gds');
      const env = { GDS_CONFIG_DIR: configDir, GDS_SECRET_STORAGE: 'file' };
      // An expired session: auth set replaces it without --force.
      await withProfileLock(
        'ci',
        () =>
          saveProfile(
            'ci',
            { kind: 'session', base: service.url, expiresAt: '2000-01-01T00:00:00.000Z' },
            { accessToken: 'expired-access' },
            { env },
          ),
        { env },
      );

      const setting = runInProcess(
        ['auth', 'set', '--profile', 'ci', '--base', service.url, '--token', '-', '--json'],
        { env: { ...env, NO_COLOR: '1' }, input: given },
      );
      await Promise.race([
        service.requested,
        setting.then((r) => Promise.reject(new Error(`ended before its check: ${r.stderr}`))),
      ]);
      await m.run(env, service.url);
      service.answer();

      const r = await setting;
      expect(r.code, r.stderr).toBe(1);
      expect(r.stdout).toBe('');
      const [line, ...more] = ndjson(r.stderr);
      expect(more).toEqual([]);
      expect(line).toMatchObject({ error: { code: 'profile_changed' } });
      expect(line.error.message).toMatch(
        m.loggedOut
          ? /Profile ci was logged out while the token was checked/
          : /Profile ci changed while the token was checked/,
      );
      expect(line.error.message).toMatch(/the token was not saved/);
      expect(line.error.suggestion).toMatch(/gds auth set --profile ci/);
      expect(r.stderr).not.toContain(given);
      const config = await loadConfig({ env });
      m.left(config);
      expect(JSON.stringify(config)).not.toContain(given);
    },
    60_000,
  );

  it('nothing changed meanwhile: saved', async () => {
    const service = await heldService();
    closeService = service.close;
    const configDir = join(await mkdtemp(join(tmpdir(), 'gds-set-changed-')), 'gds');
    const env = { GDS_CONFIG_DIR: configDir, GDS_SECRET_STORAGE: 'file' };
    await setStaticProfile({ name: 'ci', token: 'cli_oldToken42', base: service.url }, { env });
    service.answer();
    const r = await runInProcess(
      ['auth', 'set', '--profile', 'ci', '--base', service.url, '--token', '-', '--json', '--force'],
      { env: { ...env, NO_COLOR: '1' }, input: given },
    );
    expect(r.code, r.stderr).toBe(0);
    expect((await loadConfig({ env })).profiles.ci).toMatchObject({ kind: 'static', token: given });
  }, 60_000);
});
