// ensureBuilt's question, on a tree of its own: is dist/ as new as src/? A source removed while the run lists
// them, or added or changed after the run began, never makes it throw or start a build under running tests.
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { distIsFresh } from '../cli/helpers/cli-process.js';

let root: string;
const started = Date.parse('2030-01-01T00:00:00Z');
const at = (ms: number) => new Date(started + ms);

async function file(path: string, time: Date): Promise<void> {
  await mkdir(join(root, path, '..'), { recursive: true });
  await writeFile(join(root, path), '');
  await utimes(join(root, path), time, time);
}

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'gds-dist-fresh-'));
  await file('src/a.ts', at(-60_000));
  await file('dist/a.js', at(-30_000));
});
afterEach(() => rm(root, { recursive: true, force: true }));

it('is fresh when every source has a newer output, and not when one changed before the run began', async () => {
  expect(await distIsFresh(root, started)).toBe(true);
  await file('src/a.ts', at(-10_000));
  expect(await distIsFresh(root, started)).toBe(false);
  await file('src/b.ts', at(-10_000));
  expect(await distIsFresh(root, started)).toBe(false);
});

it('leaves out a source added or changed after the run began', async () => {
  await file('src/added.ts', at(5_000));
  await file('src/a.ts', at(6_000));
  expect(await distIsFresh(root, started)).toBe(true);
});

it('leaves out a source removed after it was listed', async () => {
  const listed = [join(root, 'src/a.ts'), join(root, 'src/gone.ts')];
  expect(await distIsFresh(root, started, listed)).toBe(true);
});
