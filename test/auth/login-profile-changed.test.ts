// `gds auth login --profile ci` checks before the browser step that ci holds no live token, and the sign-in may
// then take minutes. Another command may save into ci meanwhile (a second sign-in, `tokens issue --save-profile
// ci`, `auth logout --profile ci`): the login used to save over it all the same. It now re-reads ci under ci's
// lock at the save and refuses (exit 1, profile_changed) when ci is no longer the profile it found, saying so;
// the new sign-in, which nothing holds then, is ended on the service (POST /api/auth/revoke). A renewal of ci's
// own tokens meanwhile is no change. The authorization server here answers the device poll only when the test
// says so.
// After its save, the login asks the service who signed in. It asked with whatever ci held by then: a second
// sign-in saved in between made the login say the second person's e-mail. It now asks with the tokens it saved.
// And the e-mail it then writes into ci is best-effort: a config lock held past its wait is a warning, not a
// failed login (the sign-in is saved). A save that fails on a write (a disk full) says, as the others, that the
// new sign-in was ended, not that gds did not expect the error.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Env, GdsConfig, SessionProfile } from '../../src/auth/config.js';
import { loadConfig, updateConfig, withProfileLock } from '../../src/auth/config.js';
import type { ProfileFields } from '../../src/auth/profiles.js';
import {
  refreshTokenFingerprint,
  removeProfile,
  saveProfile,
  saveRefreshedProfile,
} from '../../src/auth/profiles.js';
import { renewableFields } from '../../src/auth/refresh.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { ndjson } from '../e2e/login-helpers.js';
import { holdProfileLock } from '../helpers/held-profile-lock.js';
import type * as Profiles from '../../src/auth/profiles.js';

/** Run once right after the login's save (another sign-in that got in just after it, say). */
const afterSave = vi.hoisted(() => ({ run: undefined as (() => Promise<void>) | undefined }));
/** Thrown once by the login's save instead of saving (a disk full as the config is written, say). */
const failSave = vi.hoisted(() => ({ error: undefined as Error | undefined }));

vi.mock('../../src/auth/profiles.js', async (importOriginal) => {
  const real = await importOriginal<typeof Profiles>();
  return {
    ...real,
    saveIfUnchanged: async (...args: Parameters<typeof Profiles.saveIfUnchanged>) => {
      const failure = failSave.error;
      failSave.error = undefined;
      if (failure !== undefined) throw failure;
      const saved = await real.saveIfUnchanged(...args);
      const run = afterSave.run;
      afterSave.run = undefined;
      await run?.();
      return saved;
    },
  };
});

/** A device-flow authorization server (and the service's revoke endpoint) whose token poll waits for `answer`. */
/** What the stand-in service's e-mails end with: a hostile service's line break and a line of gds's after it. */
let emailTail = '';

async function heldAuthorizationServer(whoAmI?: () => Promise<void>) {
  let base = '';
  let polled!: () => void;
  const poll = new Promise<void>((resolve) => (polled = resolve));
  let answer!: (body: object) => void;
  const answered = new Promise<object>((resolve) => (answer = resolve));
  const revoked: string[] = [];
  const json = (response: ServerResponse, status: number, body: object) =>
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const routes: Record<string, (request: IncomingMessage, response: ServerResponse) => void> = {
    'GET /.well-known/openid-configuration': (_request, response) =>
      json(response, 200, {
        issuer: base,
        device_authorization_endpoint: `${base}/oauth/device`,
        token_endpoint: `${base}/oauth/token`,
        grant_types_supported: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'],
        token_endpoint_auth_methods_supported: ['none'],
      }),
    'POST /oauth/device': (_request, response) =>
      json(response, 200, {
        device_code: 'device-1',
        user_code: 'WDJB-MJHT',
        verification_uri: `${base}/device`,
        expires_in: 60,
        interval: 1,
      }),
    'POST /oauth/token': (_request, response) => {
      polled();
      void answered.then((body) => json(response, 200, body));
    },
    // Who signed in, asked right after the save; without whoAmI, a service that does not answer it.
    // The second sign-in's tokens (second-access) are another person's.
    'GET /api/me': (request, response) => {
      if (whoAmI === undefined) return json(response, 404, { error: { code: 'not_found' } });
      const who = request.headers.authorization === 'Bearer second-access' ? 'second' : 'first';
      void whoAmI().then(() =>
        json(response, 200, {
          user: { id: `usr_${who}`, email: `${who}@example.com${emailTail}`, displayName: who },
          workspace: { id: 'ws_1', name: 'one' },
          role: 'OWNER',
          token: { kind: 'session', audience: 'session', scopes: [], environment: null },
          effectiveEnvironmentScope: [],
        }),
      );
    },
    'POST /api/auth/revoke': (request, response) => {
      revoked.push(String(request.headers.authorization));
      response.writeHead(204).end();
    },
  };
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const route = routes[`${request.method ?? ''} ${request.url ?? ''}`];
      if (route === undefined) json(response, 404, { error: { code: 'not_found' } });
      else route(request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    base,
    poll,
    answer,
    revoked,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const fresh = { accessToken: 'fresh-access-42', refreshToken: 'fresh-refresh-42' };
const old = { accessToken: 'old-access-42', refreshToken: 'old-refresh-42' };
const hourAgo = () => new Date(Date.now() - 3_600_000).toISOString();
const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();

/** The fields `gds auth login` saves for a sign-in into `base`. */
const sessionFields = (base: string) =>
  ({
    kind: 'session',
    base,
    issuer: base,
    tokenEndpoint: `${base}/oauth/token`,
    clientId: 'gds-cli',
  }) as const;

const saveUnderLock = (env: Env, fields: ProfileFields, secrets: object) =>
  withProfileLock('ci', () => saveProfile('ci', fields, secrets, { env }), { env });

let closeServer: (() => Promise<void>) | undefined;
afterEach(async () => {
  await closeServer?.();
  closeServer = undefined;
  emailTail = '';
});

const seconds = [
  {
    second: 'a second sign-in into ci, into the same service',
    run: (env: Env, base: string) =>
      saveUnderLock(
        env,
        { ...sessionFields(base), expiresAt: inAnHour() },
        { accessToken: 'second-access', refreshToken: 'second-refresh' },
      ),
    left: (config: GdsConfig) =>
      expect(config.profiles.ci).toMatchObject({ kind: 'session', accessToken: 'second-access' }),
    why: /Profile ci changed while you signed in/,
  },
  {
    second: 'gds tokens issue --save-profile ci',
    run: (env: Env, base: string) =>
      saveUnderLock(
        env,
        { kind: 'integration', base, tokenId: 'tok_issued42', refreshExpiresAt: inAnHour() },
        { accessToken: 'issued-access', refreshToken: 'issued-refresh' },
      ),
    left: (config: GdsConfig) =>
      expect(config.profiles.ci).toMatchObject({ kind: 'integration', tokenId: 'tok_issued42' }),
    why: /Profile ci changed while you signed in/,
  },
  {
    second: 'gds auth logout --profile ci',
    run: (env: Env) => removeProfile('ci', { env }),
    left: (config: GdsConfig) => expect(config.profiles).toEqual({}),
    why: /Profile ci was logged out while you signed in/,
  },
];

/** ci holds an expired sign-in into `base`; `gds auth login --profile ci` starts and waits on the device poll. */
async function loginUnderWay(
  whoAmI?: (env: Env, base: string) => Promise<void>,
  extraEnv: Env = {},
  json = true,
) {
  let signedIn = (): Promise<void> => Promise.resolve();
  const server = await heldAuthorizationServer(() => signedIn());
  closeServer = server.close;
  const env = {
    GDS_CONFIG_DIR: join(await mkdtemp(join(tmpdir(), 'gds-login-changed-')), 'gds'),
    GDS_SECRET_STORAGE: 'file',
  };
  if (whoAmI !== undefined) signedIn = () => whoAmI(env, server.base);
  await saveUnderLock(env, { ...sessionFields(server.base), expiresAt: hourAgo() }, old);
  const login = runInProcess(
    ['auth', 'login', '--profile', 'ci', '--base', server.base, '--no-browser', ...(json ? ['--json'] : [])],
    {
      env: { ...env, ...extraEnv, NO_COLOR: '1' },
    },
  );
  await Promise.race([
    server.poll,
    login.then((r) => Promise.reject(new Error(`ended before its poll: ${r.stderr}`))),
  ]);
  const answer = () => {
    server.answer({ ...tokenAnswer, access_token: fresh.accessToken, refresh_token: fresh.refreshToken });
    return login;
  };
  return { server, env, answer };
}

const tokenAnswer = { token_type: 'Bearer', expires_in: 3600 };

describe('gds auth login --profile ci, and another command saves into ci while it waits for the approval', () => {
  it.each(seconds)(
    '$second: the login refuses, saves nothing over it, and ends its new sign-in',
    async (s) => {
      const { server, env, answer } = await loginUnderWay();
      await s.run(env, server.base);
      const r = await answer();
      expect(r.code, r.stderr).toBe(1);
      const error = ndjson(r.stderr).find((line) => line.error !== undefined)?.error;
      expect(error).toMatchObject({ code: 'profile_changed' });
      expect(error.message).toMatch(s.why);
      expect(error.message).toMatch(/new sign-in was not saved, and was ended/);
      expect(error.suggestion).toMatch(/gds auth login --profile/);
      expect(r.stdout).toBe('');
      expect(server.revoked).toEqual([`Bearer ${fresh.accessToken}`]);
      const config = await loadConfig({ env });
      s.left(config);
      expect(JSON.stringify(config)).not.toMatch(/fresh-/);
      expect(r.stdout + r.stderr).not.toMatch(/fresh-/);
    },
    60_000,
  );

  it("a renewal of ci's own sign-in meanwhile is no change: the login saves", async () => {
    const { server, env, answer } = await loginUnderWay();
    // As refresh.ts renews it: recorded, then saved while the record holds.
    const claim = refreshTokenFingerprint(old.refreshToken);
    await updateConfig(
      (config) => {
        const ci = config.profiles.ci;
        if (ci?.kind === 'session')
          ci.refreshInFlight = { since: new Date().toISOString(), refreshTokenSha256: claim };
      },
      { env },
    );
    const recorded = (await loadConfig({ env })).profiles.ci as SessionProfile;
    await withProfileLock(
      'ci',
      () =>
        saveRefreshedProfile(
          'ci',
          { ...(renewableFields(recorded) as SessionProfile), expiresAt: inAnHour() },
          { accessToken: 'renewed-access', refreshToken: 'renewed-refresh' },
          claim,
          { env },
        ),
      { env },
    );
    expect((await loadConfig({ env })).profiles.ci).toMatchObject({ accessToken: 'renewed-access' });
    const r = await answer();
    expect(r.code, r.stderr).toBe(0);
    expect(ndjson(r.stdout)).toEqual([expect.objectContaining({ profile: 'ci', kind: 'session' })]);
    expect((await loadConfig({ env })).profiles.ci).toMatchObject({ accessToken: fresh.accessToken });
    expect(server.revoked).toEqual([]);
  }, 60_000);

  it('a second sign-in saved while the login asks who signed in keeps its profile: the e-mail is not written into it', async () => {
    const second = { accessToken: 'second-access', refreshToken: 'second-refresh' };
    const { server, env, answer } = await loginUnderWay(async (env, base) => {
      await saveUnderLock(env, { ...sessionFields(base), expiresAt: inAnHour() }, second);
    });
    const r = await answer();
    expect(r.code, r.stderr).toBe(0);
    const ci = (await loadConfig({ env })).profiles.ci;
    expect(ci).toMatchObject({ accessToken: second.accessToken });
    expect(ci?.user).toBeUndefined();
    expect(server.revoked).toEqual([]);
  }, 60_000);

  it("ci's lock held by another gds past the wait at the save: config_locked, and the new sign-in is ended", async () => {
    const { server, env, answer } = await loginUnderWay(undefined, { GDS_LOCK_WAIT_MS: '200' });
    const release = await holdProfileLock('ci', env);
    const r = await answer().finally(release);
    expect(r.code, r.stderr).toBe(1);
    const error = ndjson(r.stderr).find((line) => line.error !== undefined)?.error;
    expect(error).toMatchObject({ code: 'config_locked' });
    expect(error.message).toMatch(/new sign-in was not saved, and was ended/);
    expect(server.revoked).toEqual([`Bearer ${fresh.accessToken}`]);
    const config = JSON.stringify(await loadConfig({ env }));
    for (const secret of [fresh.accessToken, fresh.refreshToken]) {
      expect(r.stdout + r.stderr).not.toContain(secret);
      expect(config).not.toContain(secret);
    }
  }, 60_000);

  it('the config cannot be written at the save (a disk full): the error says the new sign-in was ended', async () => {
    const { server, env, answer } = await loginUnderWay();
    failSave.error = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    const r = await answer();
    expect(r.code, r.stderr).toBe(1);
    const error = ndjson(r.stderr).find((line) => line.error !== undefined)?.error;
    expect(error.message).toBe(
      'ENOSPC: no space left on device, write: your new sign-in was not saved, and was ended.',
    );
    expect(error.suggestion ?? '').not.toMatch(/did not expect|--base/);
    expect(server.revoked).toEqual([`Bearer ${fresh.accessToken}`]);
    expect((await loadConfig({ env })).profiles.ci).toMatchObject({ accessToken: old.accessToken });
    expect(r.stdout + r.stderr).not.toMatch(/fresh-/);
  }, 60_000);

  it('a second sign-in saved just after the login saved: the login says who it signed in as, not the second', async () => {
    const second = { accessToken: 'second-access', refreshToken: 'second-refresh' };
    const { server, env, answer } = await loginUnderWay(() => Promise.resolve());
    afterSave.run = async () => {
      await saveUnderLock(env, { ...sessionFields(server.base), expiresAt: inAnHour() }, second);
    };
    const r = await answer();
    expect(r.code, r.stderr).toBe(0);
    expect(ndjson(r.stdout)).toEqual([
      expect.objectContaining({ profile: 'ci', email: 'first@example.com' }),
    ]);
    const ci = (await loadConfig({ env })).profiles.ci;
    expect(ci).toMatchObject({ accessToken: second.accessToken });
    expect(ci?.user).toBeUndefined();
  }, 60_000);

  it.each([
    [true, ''],
    [false, ''],
    [false, '\nForged: CERTIFIED'],
  ])(
    'the config lock held past its wait when the e-mail is written (--json %s, e-mail ending %j): a warning, exit 0, the sign-in saved',
    async (json, tail) => {
      emailTail = tail;
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let holding: Promise<void> | undefined;
      // Taken as the service is asked who signed in, held until the login has ended.
      const { env, answer } = await loginUnderWay(
        (env) =>
          new Promise<void>((taken) => {
            holding = updateConfig(
              async () => {
                taken();
                await released;
              },
              { env },
            );
          }),
        {},
        json,
      );
      const r = await answer().finally(release);
      await holding;
      expect(r.code, r.stderr).toBe(0);
      if (json) {
        expect(ndjson(r.stdout)).toEqual([
          expect.objectContaining({ profile: 'ci', email: 'first@example.com' }),
        ]);
        const warning = ndjson(r.stderr).find((line) => line.warning !== undefined)?.warning;
        expect(warning?.message).toMatch(/first@example\.com was not recorded in profile ci/);
        expect(ndjson(r.stderr).filter((line) => line.error !== undefined)).toEqual([]);
      } else {
        // For people: the sign-in said as without the failure, and the one warning why the e-mail is missing.
        // The service's e-mail stays on gds's lines: its line break reads as a space.
        const email = `first@example\\.com${tail === '' ? '' : ' Forged: CERTIFIED'}`;
        expect(r.stderr).toMatch(
          new RegExp(
            `^Warning: You are signed in, but your e-mail ${email} was not recorded in profile ci \\(.+\\)\\.$`,
            'm',
          ),
        );
        expect(r.stderr).toMatch(new RegExp(`Signed in as ${email} \\(OWNER\\)`));
        expect(r.stderr).not.toMatch(/^Forged/m);
        expect(r.stderr).toMatch(/Profile ci: tokens stored in/);
        expect(r.stderr).not.toMatch(/^Error/m);
      }
      const ci = (await loadConfig({ env })).profiles.ci;
      expect(ci).toMatchObject({ kind: 'session', accessToken: fresh.accessToken });
      expect(ci?.user).toBeUndefined();
      expect(r.stdout + r.stderr).not.toMatch(/fresh-/);
    },
    120_000,
  );
});
