// `npm run server` on Linux runs with glibc's malloc settings (src/server/malloc-env.ts): glibc reads them
// only at start, so the server starts itself again in the same process with them set. What it then holds
// after gate runs is a bench row (`npm run bench embedded-memory`); here: the server process (the one that
// writes the ready file and answers) has them in its environment, and a user's own setting is kept as is.
import { mkdtempSync, readdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { seededPgliteCopy } from '../../helpers/migrated-database.js';
import type { ReadyInfo } from '../../helpers/server.js';
import { startServerProcess, waitFor } from '../../helpers/server-process.js';

const dir = mkdtempSync(join(tmpdir(), 'gds-malloc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The environment of the process running src/server/main.ts with this ready file. */
function serverEnvironment(readyFile: string): Map<string, string> {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (!argv.some((a) => a.endsWith('src/server/main.ts')) || !argv.includes(readyFile)) continue;
    const pairs = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').filter(Boolean);
    return new Map(
      pairs.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
    );
  }
  throw new Error('no server process found');
}

/**
 * Starts `npm run server` with `env`, answers its environment once it serves, and stops it. It serves a seeded
 * copy (`--data-dir`): the environment is the same whatever it serves, and an in-memory server's unpacking,
 * migrating and seeding cost about a second of CPU a start.
 */
async function environmentOf(name: string, env: Record<string, string>): Promise<Map<string, string>> {
  const readyFile = join(dir, `${name}.json`);
  const copy = await seededPgliteCopy();
  try {
    const server = startServerProcess(
      ['--ready-file', readyFile, '--port', '0', '--data-dir', copy.dataDir],
      env,
    );
    try {
      await waitFor(() => existsSync(readyFile), 'the ready file');
      const ready = JSON.parse(readFileSync(readyFile, 'utf8')) as ReadyInfo;
      expect((await fetch(`${ready.origin}/.well-known/jwks.json`)).status).toBe(200);
      return serverEnvironment(readyFile);
    } finally {
      server.signal('SIGTERM');
      await server.closed;
    }
  } finally {
    await copy.remove();
  }
}

describe.runIf(process.platform === 'linux')('npm run server on Linux', () => {
  it('serves with glibc malloc settings that return freed memory', async () => {
    const env = await environmentOf('default', {});
    expect(env.get('MALLOC_MMAP_THRESHOLD_')).toBe('32768');
    expect(env.get('MALLOC_TRIM_THRESHOLD_')).toBe('32768');
    expect(env.get('MALLOC_ARENA_MAX')).toBe('1');
  });

  it('keeps a setting the user made, and adds none', async () => {
    const env = await environmentOf('own', { MALLOC_ARENA_MAX: '4' });
    expect(env.get('MALLOC_ARENA_MAX')).toBe('4');
    expect(env.has('MALLOC_MMAP_THRESHOLD_')).toBe(false);
  });
});
