// `gds tokens refresh` holds a Ctrl-C or SIGTERM while its request is out: the new tokens would exist nowhere else.
// When the service then refused the refresh token (401), gds said only "Interrupted." (or nothing, for SIGTERM) and
// exited 130 or 143: what the service said, and what to do, were lost. With --save-profile the refusal was said, but
// gds still exited 130 or 143. The refusal is now said as without the signal, and gds exits with its code. A real gds process (from its sources); the service here
// answers 401 only once gds's debug log says it holds the signal.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startGdsFromSources } from '../helpers/gds-from-sources.js';
import { serviceAnsweringWhenTold } from '../helpers/service-answering-when-told.js';

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const refusal = {
  error: { code: 'invalid_refresh_token', message: 'The refresh token is expired or revoked.' },
};
const args = ['tokens', 'refresh', '--refresh-token', 'tok_refused42.refusedRefreshSecret42', '--json'];

/** gds's error records on stderr (GDS_DEBUG's lines aside). */
const errors = (stderr: string) =>
  stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { error?: Record<string, unknown> })
    .flatMap((line) => (line.error === undefined ? [] : [line.error]));

/**
 * Runs the refresh (`more`: flags beyond it) against a service refusing it; `signal`, when given, sent once the
 * request is out.
 */
async function refused(signal?: NodeJS.Signals, more: string[] = []) {
  const service = await serviceAnsweringWhenTold(refusal, cleanup, 401);
  const env = { GDS_CONFIG_DIR: join(await mkdtemp(join(tmpdir(), 'gds-refused-held-')), 'gds') };
  const gds = startGdsFromSources([...args, ...more], {
    ...env,
    GDS_SECRET_STORAGE: 'file',
    SERVICE_API_URL: service.url,
  });
  await gds.before(service.requested, 'its request');
  if (signal !== undefined) {
    gds.child.kill(signal);
    await gds.said(`${signal} held`);
  }
  service.answer();
  return gds.result;
}

const cases = (['SIGINT', 'SIGTERM'] as const).flatMap((signal) =>
  [[], ['--save-profile', 'ci']].map((more) => [signal, more] as const),
);

describe.each(cases)('%s held while tokens refresh %j waits for a refusal', (signal, more) => {
  it('the refusal is said as without the signal, and gds exits with its code', async () => {
    const plain = await refused(undefined, more);
    const held = await refused(signal, more);

    expect(plain.code).not.toBe(0);
    expect(held.code, held.stderr).toBe(plain.code);
    expect(held.stdout).toBe('');
    expect(errors(held.stderr)).toEqual(errors(plain.stderr));
    expect(errors(held.stderr)).toHaveLength(1);
    expect(String(errors(held.stderr)[0]?.message)).toContain('The refresh token is expired or revoked.');
    expect(errors(held.stderr)[0]?.suggestion).toBeTruthy();
  }, 120_000);
});
