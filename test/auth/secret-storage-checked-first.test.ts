// A GDS_SECRET_STORAGE that names no storage (a typo: keychian) is bad input: refused (exit 2,
// invalid_secret_storage) before anything is sent. It used to be found only at the save, after the request:
// `tokens refresh --save-profile` had spent the refresh token given, `tokens issue --save-profile` had issued a
// token, `auth login` had gone through the whole browser sign-in, each then ended exit 2 with nothing saved.
import { createServer } from 'node:http';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/auth/config.js';
import { setStaticProfile } from '../../src/auth/profiles.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { ndjson } from '../e2e/login-helpers.js';
import { integrationAnswers } from '../helpers/integration-answers.js';

const { tokens, issued } = integrationAnswers('tok_storage42');

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

/** A service that answers every request with `body` and counts them. */
async function countingService(body: unknown) {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(`${request.method ?? ''} ${request.url ?? ''}`);
    request.resume();
    request.on('end', () =>
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  cleanup.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${port}`, requests };
}

const cases = [
  {
    what: 'tokens refresh --save-profile ci',
    answer: { tokens },
    args: ['tokens', 'refresh', '--refresh-token', '-', '--save-profile', 'ci', '--force', '--json'],
    input: 'tok_storage42.oldRefreshSecret42',
    env: {},
  },
  {
    what: 'tokens issue --save-profile ci',
    answer: issued,
    args: ['tokens', 'issue', '--name', 'ci', '--env', 'dev', '--scope', 'workspace:read:audit'],
    extra: ['--save-profile', 'ci', '--force', '--json'],
    env: { SERVICE_TOKEN: 'cli_personStorage42' },
  },
  {
    what: 'auth login --profile ci',
    answer: {},
    args: ['auth', 'login', '--profile', 'ci', '--force', '--no-browser', '--json'],
    env: {},
  },
];

describe('GDS_SECRET_STORAGE naming no storage, with a command that saves what a request answers', () => {
  it.each(cases)('$what: exit 2 before any request, nothing saved or shown', async (c) => {
    const service = await countingService(c.answer);
    const configDir = join(await mkdtemp(join(tmpdir(), 'gds-storage-first-')), 'gds');
    await setStaticProfile(
      { name: 'ci', token: 'cli_oldProfileToken42', base: service.url },
      { env: { GDS_CONFIG_DIR: configDir, GDS_SECRET_STORAGE: 'file' } },
    );
    const before = await loadConfig({ env: { GDS_CONFIG_DIR: configDir } });
    const r = await runInProcess([...c.args, ...(c.extra ?? []), '--base', service.url], {
      env: { ...c.env, GDS_CONFIG_DIR: configDir, GDS_SECRET_STORAGE: 'keychian', NO_COLOR: '1' },
      ...(c.input === undefined ? {} : { input: c.input }),
    });
    expect(r.code, r.stderr).toBe(2);
    expect(ndjson(r.stderr).find((line) => line.error !== undefined)?.error).toMatchObject({
      code: 'invalid_secret_storage',
    });
    expect(service.requests).toEqual([]);
    expect(r.stdout).toBe('');
    expect(await loadConfig({ env: { GDS_CONFIG_DIR: configDir } })).toEqual(before);
  });
});
