// ensureBuilt's questions, on a tree of their own: is dist/ as new as src/, and the installed package's bundle as
// new as what it is built from? A source removed while the run lists them, or added or changed after the run
// began, never makes them throw or start a build under running tests.
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import {
  bundleIsFresh,
  cliCommand,
  cliUnderTest,
  distIsFresh,
  ensureBuilt,
  installedPackage,
  repoRoot,
} from '../cli/helpers/cli-process.js';

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

it('finds the bundle stale when a source, a build script or the package files are newer, not the server', async () => {
  const bundle = join(root, 'out/gds.cjs');
  expect(await bundleIsFresh(root, started, bundle)).toBe(false);
  await file('out/gds.cjs', at(-20_000));
  expect(await bundleIsFresh(root, started, bundle)).toBe(true);
  await file('src/server/main.ts', at(-10_000));
  expect(await bundleIsFresh(root, started, bundle)).toBe(true);
  for (const input of ['src/cli/main.ts', 'scripts/sea/entry.ts', 'bin/run.js', 'package.json']) {
    await file(input, at(-10_000));
    expect(await bundleIsFresh(root, started, bundle), input).toBe(false);
    await file(input, at(-30_000));
  }
  await file('node_modules/.package-lock.json', at(-10_000));
  expect(await bundleIsFresh(root, started, bundle)).toBe(false);
  await file('node_modules/.package-lock.json', at(5_000));
  expect(await bundleIsFresh(root, started, bundle)).toBe(true);
});

it('runs the installed package once ensureBuilt has made its bundle fresh', async () => {
  await ensureBuilt();
  const [, args] = cliCommand(['--version']);
  if (cliUnderTest !== undefined) return;
  expect(args[0]).toBe(join(installedPackage, 'bin/run.js'));
  expect(await bundleIsFresh()).toBe(true);
  expect(cliCommand(['--version'], ['--import', 'x'])[1]).toContain(join(repoRoot, 'bin/run.js'));
});
