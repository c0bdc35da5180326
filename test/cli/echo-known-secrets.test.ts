// A secret of the run (the SERVICE_TOKEN value, a profile's token) inside a URL that an echo cuts: masked
// before the cut, so no part of it is left for the mask of the output to miss. The audit found a network error
// whose URL was cut 5 characters into SERVICE_TOKEN: those 5 were printed, the known-secrets mask (which masks
// a cut form of 8 characters or more) let them through.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { URL_ECHO_MAX_CHARS, DETAILS_MAX_CHARS } from '../../src/core/echo.js';
import { closedPort } from '../helpers/closed-port.js';
import { runInProcess } from '../helpers/run-in-process.js';

/** An opaque token (none of the patterns of core/redact.ts knows it): only the run's own secrets mask it. */
const TOKEN = 'opaqueQwzrtyXvbnmKjhgfdsaPlmnb73';

/** Each start and end of `secret` of 4 characters or more that `text` holds. */
function fragments(text: string, secret: string): string[] {
  const found: string[] = [];
  for (let chars = 4; chars <= secret.length; chars++)
    for (const part of [secret.slice(0, chars), secret.slice(-chars)])
      if (text.includes(part)) found.push(part);
  return found;
}

/** A path that puts the first `kept` characters of TOKEN right before the cut of a `max`-character echo of
 *  `base + path`. */
function pathCutInToken(base: string, max: number, kept: number): string {
  const pad = 'p'.repeat(max - 1 - kept - base.length - 1);
  return `/${pad}${TOKEN}/${'tail/'.repeat(20)}`;
}

describe('a secret of the run in a long URL an echo cuts', () => {
  it('SERVICE_TOKEN 5 characters before the cut of a network error: no part of it is printed', async () => {
    const base = `http://127.0.0.1:${await closedPort()}`;
    const path = pathCutInToken(base, URL_ECHO_MAX_CHARS, 5);
    expect(`${base}${path}`.length).toBeGreaterThan(300);
    for (const json of [false, true]) {
      const r = await runInProcess(['api', path, ...(json ? ['--json'] : [])], {
        env: { SERVICE_API_URL: base, SERVICE_TOKEN: TOKEN },
      });
      expect(r.code, r.stderr).toBe(9);
      expect(r.stderr).toContain('Could not reach the service');
      expect(fragments(r.stdout + r.stderr, TOKEN), r.stdout + r.stderr).toEqual([]);
    }
  });

  it("a profile's token in a base URL over 500 characters: masked in the --json error's details", async () => {
    const configDir = join(await mkdtemp(join(tmpdir(), 'gds-echo-secrets-')), 'gds');
    const env = { GDS_CONFIG_DIR: configDir, GDS_SECRET_STORAGE: 'file', GDS_PROFILE: 'ci' };
    const host = `http://127.0.0.1:${await closedPort()}`;
    const base = `${host}${pathCutInToken(host, DETAILS_MAX_CHARS, 6)}`;
    const set = await runInProcess(['auth', 'set', '--no-verify', '--token', TOKEN, '--base', base], { env });
    expect(set.code, set.stderr).toBe(0);
    const r = await runInProcess(['api', '/api/tables', '--json'], { env });
    expect(r.code, r.stderr).toBe(9);
    const line = JSON.parse(r.stderr.trim().split('\n').at(-1) as string) as {
      error: { code: string; message: string; details: { url: string } };
    };
    expect(line.error.code).toBe('unreachable');
    expect(line.error.details.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/p+/);
    expect(fragments(r.stdout + r.stderr, TOKEN), r.stdout + r.stderr).toEqual([]);
  });
});

describe('the -H headers of a run in a network error', () => {
  /** A path naming the harmless header values, long enough that the URL is cut (and masked before it). */
  const pathWith = (...values: string[]) => `/api/tables/${values.join('/')}/${'rows/'.repeat(60)}`;

  it('a harmless header (X-Trace: 1, X-Request-Id: build-1234) masks nothing of the URL', async () => {
    const base = `http://127.0.0.1:${await closedPort()}`;
    const path = pathWith('t_1011', 'build-1234', 'application');
    const r = await runInProcess(
      [
        'api',
        path,
        '-H',
        'X-Trace: 1',
        '-H',
        'X-Request-Id: build-1234',
        '-H',
        'Accept-Language:application',
      ],
      { env: { SERVICE_API_URL: base, SERVICE_TOKEN: TOKEN } },
    );
    expect(r.code, r.stderr).toBe(9);
    expect(r.stderr).toContain(`${base}/api/tables/t_1011/build-1234/application/rows/`);
    expect(r.stderr).not.toContain('****');
  });

  it('any other header is masked wherever its value shows: one named as a secret, or not', async () => {
    const base = `http://127.0.0.1:${await closedPort()}`;
    const key = 'k3yOfTheServiceQwzrtyXvbnm';
    const session = 'Zx81PlmQwe0912Abc';
    const path = pathWith(key, session);
    const r = await runInProcess(
      ['api', path, '-H', `Ocp-Apim-Subscription-Key: ${key}`, '-H', `x-auth-token:${session}`],
      {
        env: { SERVICE_API_URL: base, SERVICE_TOKEN: TOKEN },
      },
    );
    expect(r.code, r.stderr).toBe(9);
    expect(r.stderr).toContain(`${base}/api/tables/`);
    expect(fragments(r.stdout + r.stderr, key), r.stderr).toEqual([]);
    expect(fragments(r.stdout + r.stderr, session), r.stderr).toEqual([]);
  });
});
