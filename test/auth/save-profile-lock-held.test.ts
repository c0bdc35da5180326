// `gds tokens refresh|issue --save-profile ci` whose answer comes while another gds holds ci's lock for longer than
// the lock wait (a refresh of ci hung on the network, say). The request runs without the lock, so the service has
// answered by then: a refresh has spent the refresh token given, and its answer is the only copy of the new
// tokens. The save used to fail config_locked with them neither saved nor shown, the credential lost. Now the
// refresh shows them as `tokens refresh` without --save-profile does (stdout, the same --json shape) and exits 1
// saying they were not saved; an issue names the token to revoke, as when the profile changed. The lock wait is
// GDS_LOCK_WAIT_MS here, not the ~20 s default.
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/auth/config.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { ndjson } from '../e2e/login-helpers.js';
import { integrationAnswers } from '../helpers/integration-answers.js';
import { lockedProfileCi } from '../helpers/held-profile-lock.js';

const { tokens, issued } = integrationAnswers('tok_locked42');

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

/** A config folder whose profile ci holds a static token, ci's lock held by another, and a service answering. */
async function setUp(answer: unknown) {
  const { service, env, before } = await lockedProfileCi(answer, cleanup);
  const run = (args: string[], extra: NodeJS.ProcessEnv = {}, input?: string) =>
    runInProcess([...args, '--save-profile', 'ci', '--force'], {
      env: { ...env, ...extra, GDS_LOCK_WAIT_MS: '200', SERVICE_API_URL: service.url, NO_COLOR: '1' },
      ...(input === undefined ? {} : { input }),
    });
  return { env, before, run };
}

const refresh = ['tokens', 'refresh', '--refresh-token', '-'];

describe('gds tokens refresh --save-profile ci while another gds holds ci longer than the lock wait', () => {
  it('--json: the new tokens on stdout as without --save-profile, exit 1, the error says they were not saved', async () => {
    const { env, before, run } = await setUp({ tokens });
    const r = await run([...refresh, '--json'], {}, 'tok_locked42.oldRefreshSecret42');
    expect(r.code, r.stderr).toBe(1);
    expect(ndjson(r.stdout)).toEqual([{ tokens }]);
    const [line, ...more] = ndjson(r.stderr);
    expect(more).toEqual([]);
    expect(line).toMatchObject({ error: { code: 'config_locked' } });
    expect(line.error.message).toMatch(/not saved in profile ci/);
    expect(line.error.message).toMatch(/refresh token you gave is spent/);
    expect(line.error.suggestion).toMatch(/gds tokens refresh --save-profile ci --force/);
    for (const secret of [tokens.accessToken, tokens.refreshToken]) expect(r.stderr).not.toContain(secret);
    expect(await loadConfig({ env })).toEqual(before);
  }, 60_000);

  it('for people: the tokens as `tokens refresh` shows them, then why they were not saved', async () => {
    const { env, before, run } = await setUp({ tokens });
    const r = await run(refresh, {}, 'tok_locked42.oldRefreshSecret42');
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain(`Access token:  ${tokens.accessToken}`);
    expect(r.stdout).toContain(`Refresh token: ${tokens.refreshToken}`);
    expect(r.stderr).toMatch(/not saved in profile ci/);
    for (const secret of [tokens.accessToken, tokens.refreshToken]) expect(r.stderr).not.toContain(secret);
    expect(await loadConfig({ env })).toEqual(before);
  }, 60_000);
});

describe('gds tokens issue --save-profile ci while another gds holds ci longer than the lock wait', () => {
  it('exit 1 naming the issued token to revoke; the tokens neither saved nor shown', async () => {
    const { env, before, run } = await setUp(issued);
    const r = await run(
      ['tokens', 'issue', '--name', 'ci', '--env', 'dev', '--scope', 'workspace:read:audit'],
      {
        SERVICE_TOKEN: 'cli_personLocked42',
      },
    );
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/not saved/);
    expect(r.stderr).toContain('gds tokens revoke tok_locked42');
    for (const secret of [tokens.accessToken, tokens.refreshToken])
      expect(r.stdout + r.stderr).not.toContain(secret);
    expect(await loadConfig({ env })).toEqual(before);
  }, 60_000);
});
