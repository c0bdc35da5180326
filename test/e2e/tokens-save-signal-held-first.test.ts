// A Ctrl-C or SIGTERM that came while `gds tokens refresh --save-profile ci` waited for the service's answer is held
// until the answer is saved. The save then found the config file's lock held by another gds for a moment (any write
// of the config takes it a few milliseconds): with the signal already held, its first try failed the save at once
// ("Interrupted while waiting for another gds writing …config.json", the tokens shown, not saved). It waits now, as
// a save waits without a held signal (within the held signal's bound), and saves; gds then exits by the signal. A
// real gds process (from its sources), its service answering only once gds said it holds the signal, the config's
// lock held by the test until gds says it waits for it.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/auth/config.js';
import { startGdsFromSources } from '../helpers/gds-from-sources.js';
import { holdConfigLock } from '../helpers/held-profile-lock.js';
import { integrationAnswers } from '../helpers/integration-answers.js';
import { serviceAnsweringWhenTold } from '../helpers/service-answering-when-told.js';

const { tokens } = integrationAnswers('tok_heldFirst42');

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

describe.each(['SIGINT', 'SIGTERM'] as const)('%s held before the save starts', (signal) => {
  it('the config file locked a moment by another gds: the save waits for it, saves, and gds exits by the signal', async () => {
    const env = {
      GDS_CONFIG_DIR: join(await mkdtemp(join(tmpdir(), 'gds-held-first-')), 'gds'),
      GDS_SECRET_STORAGE: 'file',
    };
    const service = await serviceAnsweringWhenTold({ tokens }, cleanup);
    const gds = startGdsFromSources(
      [
        'tokens',
        'refresh',
        '--refresh-token',
        'tok_heldFirst42.oldRefreshSecret42',
        '--save-profile',
        'ci',
        '--json',
      ],
      { ...env, SERVICE_API_URL: service.url },
    );
    await gds.before(service.requested, 'its request');
    gds.child.kill(signal);
    await gds.said(`${signal} held`);
    const letGo = await holdConfigLock(env, cleanup);
    service.answer();
    await gds.said('config.json.lock: held by another process; waiting up to');
    await letGo();
    const r = await gds.result;

    expect(r.code, r.stderr).toBe(signal === 'SIGINT' ? 130 : 143);
    const profile = (await loadConfig({ env })).profiles.ci;
    expect(profile).toMatchObject({
      kind: 'integration',
      tokenId: 'tok_heldFirst42',
      ...{ accessToken: tokens.accessToken, refreshToken: tokens.refreshToken },
    });
    const errors = r.stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { error?: unknown })
      .filter((line) => line.error !== undefined);
    expect(errors).toEqual([]);
    expect(r.stdout).toMatch(/"profile":"ci"/);
  }, 120_000);
});
